import type { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGitHubShaped, startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
let octokit: Octokit;
const repo = { owner: 'example', repo: 'source' };
const full = 'example/source';

beforeAll(async () => {
  h = await startHarness();
  const seeded = await h.seedRepo('source', { 'README.md': 'v1\n' });
  octokit = await h.installationOctokit(seeded.installationId);
});

afterAll(async () => {
  expectGitHubShaped(h);
  await h.close();
});

describe('releases', () => {
  it('creates a release and its tag at the target, and lists releases newest first', async () => {
    const first = await octokit.rest.repos.createRelease({
      ...repo,
      tag_name: 'v1.0.0',
      name: 'One',
      body: 'first',
    });
    expect(first.status).toBe(201);
    const head = (await h.client.commit(full, { branch: 'main', files: { 'README.md': 'v2\n' }, message: 'Two' })).sha;
    await octokit.rest.repos.createRelease({
      ...repo,
      tag_name: 'v2.0.0',
      target_commitish: head,
      prerelease: true,
    });
    const tag = await octokit.rest.git.getRef({ ...repo, ref: 'tags/v2.0.0' });
    expect(tag.data.object.sha).toBe(head);
    const { data } = await octokit.rest.repos.listReleases(repo);
    expect(data.map((r) => [r.tag_name, r.name, r.body, r.prerelease])).toEqual([
      ['v2.0.0', null, null, true],
      ['v1.0.0', 'One', 'first', false],
    ]);
    expect((await octokit.rest.repos.getReleaseByTag({ ...repo, tag: 'v1.0.0' })).data.id).toBe(first.data.id);
    const tags = (await octokit.rest.repos.listTags(repo)).data;
    expect(tags.map((t) => [t.name, t.commit.sha === head])).toEqual([
      ['v2.0.0', true],
      ['v1.0.0', false],
    ]);
  });

  it('refuses a second release of one tag and a target that names nothing', async () => {
    await expect(octokit.rest.repos.createRelease({ ...repo, tag_name: 'v1.0.0' })).rejects.toMatchObject({
      status: 422,
    });
    await expect(
      octokit.rest.repos.createRelease({ ...repo, tag_name: 'v9', target_commitish: 'no-such-branch' }),
    ).rejects.toMatchObject({ status: 422 });
    await expect(octokit.rest.repos.getReleaseByTag({ ...repo, tag: 'v9' })).rejects.toMatchObject({ status: 404 });
  });
});

describe('pull requests of a commit', () => {
  it('names the merged pull request of a commit that came in by it, and none for a direct push', async () => {
    const branchHead = (
      await h.client.commit(full, { branch: 'feature', files: { 'a.txt': 'a\n' }, message: 'Add a', from: 'main' })
    ).sha;
    const pull = await octokit.rest.pulls.create({ ...repo, title: 'Add a', head: 'feature', base: 'main' });
    const merged = await octokit.rest.pulls.merge({ ...repo, pull_number: pull.data.number, merge_method: 'squash' });
    for (const sha of [merged.data.sha, branchHead]) {
      const { data } = await octokit.rest.repos.listPullRequestsAssociatedWithCommit({ ...repo, commit_sha: sha });
      expect(data.map((p) => p.number)).toEqual([pull.data.number]);
    }
    const direct = (await h.client.commit(full, { branch: 'main', files: { 'b.txt': 'b\n' }, message: 'Direct' })).sha;
    expect(
      (await octokit.rest.repos.listPullRequestsAssociatedWithCommit({ ...repo, commit_sha: direct })).data,
    ).toEqual([]);
  });
});
