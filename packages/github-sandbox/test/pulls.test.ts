import type { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGitHubShaped, startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
let octokit: Octokit;
const repo = { owner: 'example', repo: 'pulls' };
const full = 'example/pulls';
const kustomization = (tag: string) => `images:\n  - {name: ghcr.io/example/hello, newTag: ${tag}}\n`;

beforeAll(async () => {
  h = await startHarness();
  const seeded = await h.seedRepo('pulls', { 'dev/kustomization.yaml': kustomization('1.0.0'), 'README.md': 'hi\n' });
  octokit = await h.installationOctokit(seeded.installationId);
  await h.client.createUser('reviewer');
});

afterAll(async () => {
  expectGitHubShaped(h);
  await h.close();
});

/** A branch with one commit changing the dev tag, made as the developer. */
async function branchWithTag(branch: string, tag: string): Promise<string> {
  return (
    await h.client.commit(full, {
      branch,
      files: { 'dev/kustomization.yaml': kustomization(tag) },
      message: `Bump to ${tag}`,
    })
  ).sha;
}

describe('creating and reading pull requests', () => {
  it('opens a pull request with a test merge commit and reports it mergeable', async () => {
    const head = await branchWithTag('bump-110', '1.1.0');
    const created = await octokit.rest.pulls.create({
      ...repo,
      title: 'Bump hello to 1.1.0',
      head: 'bump-110',
      base: 'main',
      body: 'body',
    });
    expect(created.status).toBe(201);
    expect(created.data.head.sha).toBe(head);
    expect(created.data.user.login).toBe('escalator[bot]');
    const { data } = await octokit.rest.pulls.get({ ...repo, pull_number: created.data.number });
    expect(data).toMatchObject({
      mergeable: true,
      mergeable_state: 'clean',
      commits: 1,
      changed_files: 1,
      additions: 1,
      deletions: 1,
    });
    const merge = await octokit.rest.git.getCommit({ ...repo, commit_sha: data.merge_commit_sha ?? '' });
    expect(merge.data.parents.map((p) => p.sha)).toEqual([data.base.sha, head]);
  });

  it('answers 422 for a second pull request on the same branches and for a branch without commits', async () => {
    await expect(
      octokit.rest.pulls.create({ ...repo, title: 'again', head: 'bump-110', base: 'main' }),
    ).rejects.toMatchObject({
      status: 422,
      response: { data: { errors: [{ message: 'A pull request already exists for example:bump-110.' }] } },
    });
    await octokit.rest.git.createRef({
      ...repo,
      ref: 'refs/heads/empty',
      sha: (await octokit.rest.git.getRef({ ...repo, ref: 'heads/main' })).data.object.sha,
    });
    await expect(
      octokit.rest.pulls.create({ ...repo, title: 'empty', head: 'empty', base: 'main' }),
    ).rejects.toMatchObject({ status: 422 });
  });

  it('lists files with patches', async () => {
    const [pull] = (await octokit.rest.pulls.list({ ...repo, head: 'example:bump-110' })).data;
    const files = await octokit.rest.pulls.listFiles({ ...repo, pull_number: pull?.number ?? 0 });
    expect(files.data.map((f) => [f.filename, f.status])).toEqual([['dev/kustomization.yaml', 'modified']]);
    expect(files.data[0]?.patch).toContain('+  - {name: ghcr.io/example/hello, newTag: 1.1.0}');
  });

  it('filters the list by state, head and base', async () => {
    await branchWithTag('bump-120', '1.2.0');
    const second = await h.client.openPull(full, { title: 'Bump to 1.2.0', head: 'bump-120' });
    await octokit.rest.pulls.update({ ...repo, pull_number: second.number, state: 'closed' });
    const open = await octokit.rest.pulls.list({ ...repo, state: 'open' });
    const closed = await octokit.rest.pulls.list({ ...repo, state: 'closed' });
    const byHead = await octokit.rest.pulls.list({ ...repo, state: 'all', head: 'example:bump-120' });
    const otherBase = await octokit.rest.pulls.list({ ...repo, state: 'all', base: 'nope' });
    expect(open.data.map((p) => p.head.ref)).toEqual(['bump-110']);
    expect(closed.data.map((p) => p.head.ref)).toEqual(['bump-120']);
    expect(byHead.data.map((p) => p.number)).toEqual([second.number]);
    expect(otherBase.data).toEqual([]);
  });

  it('updates title and body, closes and reopens', async () => {
    const [pull] = (await octokit.rest.pulls.list({ ...repo, state: 'closed', head: 'example:bump-120' })).data;
    const number = pull?.number ?? 0;
    const reopened = await octokit.rest.pulls.update({
      ...repo,
      pull_number: number,
      state: 'open',
      title: 'Bump hello to 1.2.0',
      body: 'new body',
    });
    expect(reopened.data).toMatchObject({ state: 'open', title: 'Bump hello to 1.2.0', body: 'new body' });
    await h.client.deliveries();
    const actions = h.received
      .filter((w) => w.headers['x-github-event'] === 'pull_request' && w.payload.number === number)
      .map((w) => w.payload.action);
    expect(actions).toEqual(['opened', 'closed', 'edited', 'reopened']);
  });

  it('paginates a long list with Link headers', async () => {
    for (let i = 0; i < 4; i++) await branchWithTag(`page-${i}`, `2.0.${i}`);
    for (let i = 0; i < 4; i++)
      await octokit.rest.pulls.create({ ...repo, title: `page ${i}`, head: `page-${i}`, base: 'main' });
    const first = await octokit.rest.pulls.list({ ...repo, per_page: 2 });
    expect(first.headers.link).toContain('rel="next"');
    const all = await octokit.paginate(octokit.rest.pulls.list, { ...repo, per_page: 2 });
    expect(all.length).toBe(6);
    expect(new Set(all.map((p) => p.number)).size).toBe(6);
  });
});

describe('the commits of a pull request', () => {
  it("lists them oldest first on every call, each with the accounts that wrote it and GitHub's verification", async () => {
    const main = (await octokit.rest.repos.getCommit({ ...repo, ref: 'heads/main' })).data;
    // One commit as the App (through the Git Data API, no custom author: GitHub signs it), one pushed by a person.
    const tree = await octokit.rest.git.createTree({
      ...repo,
      base_tree: main.commit.tree.sha,
      tree: [{ path: 'dev/kustomization.yaml', mode: '100644', type: 'blob', content: kustomization('3.0.0') }],
    });
    const own = await octokit.rest.git.createCommit({
      ...repo,
      message: 'Bump to 3.0.0',
      tree: tree.data.sha,
      parents: [main.sha],
    });
    expect(own.data.verification).toMatchObject({ verified: true, reason: 'valid' });
    await octokit.rest.git.createRef({ ...repo, ref: 'refs/heads/mixed', sha: own.data.sha });
    const pushed = await h.client.commit(full, {
      branch: 'mixed',
      files: { 'README.md': 'changed\n' },
      message: "A person's change",
    });
    const pull = await octokit.rest.pulls.create({ ...repo, title: 'mixed', head: 'mixed', base: 'main' });
    for (let call = 0; call < 2; call++) {
      const { data } = await octokit.rest.pulls.listCommits({ ...repo, pull_number: pull.data.number });
      expect(data.map((commit) => commit.sha)).toEqual([own.data.sha, pushed.sha]);
      expect(
        data.map((commit) => [commit.author?.login, commit.committer?.login, commit.commit.verification?.verified]),
      ).toEqual([
        ['escalator[bot]', 'escalator[bot]', true],
        ['developer', 'developer', false],
      ]);
    }
    // A person naming the App's bot as author is still not verified.
    const forged = await h.userOctokit().rest.git.createCommit({
      ...repo,
      message: 'forged',
      tree: tree.data.sha,
      parents: [main.sha],
      author: { name: 'escalator[bot]', email: own.data.author.email },
    });
    expect(forged.data.verification).toMatchObject({ verified: false });
  });
});

describe('merging', () => {
  it('merges with a merge commit whose parents are base and head', async () => {
    const head = await branchWithTag('merge-me', '3.0.0');
    const pull = await octokit.rest.pulls.create({ ...repo, title: 'merge me', head: 'merge-me', base: 'main' });
    const base = (await octokit.rest.git.getRef({ ...repo, ref: 'heads/main' })).data.object.sha;
    const merged = await octokit.rest.pulls.merge({
      ...repo,
      pull_number: pull.data.number,
      merge_method: 'merge',
      sha: head,
    });
    expect(merged.data.merged).toBe(true);
    const commit = await octokit.rest.git.getCommit({ ...repo, commit_sha: merged.data.sha });
    expect(commit.data.parents.map((p) => p.sha)).toEqual([base, head]);
    expect((await octokit.rest.git.getRef({ ...repo, ref: 'heads/main' })).data.object.sha).toBe(merged.data.sha);
    const after = await octokit.rest.pulls.get({ ...repo, pull_number: pull.data.number });
    expect(after.data).toMatchObject({ state: 'closed', merged: true, merge_commit_sha: merged.data.sha });
    expect(await octokit.rest.pulls.checkIfMerged({ ...repo, pull_number: pull.data.number })).toMatchObject({
      status: 204,
    });
  });

  it('squashes into one commit on top of base with the title and number', async () => {
    await h.client.commit(full, { branch: 'squash-me', files: { 'a.txt': 'a' }, message: 'one' });
    await h.client.commit(full, { branch: 'squash-me', files: { 'b.txt': 'b' }, message: 'two' });
    const pull = await octokit.rest.pulls.create({ ...repo, title: 'Squash me', head: 'squash-me', base: 'main' });
    const base = (await octokit.rest.git.getRef({ ...repo, ref: 'heads/main' })).data.object.sha;
    const merged = await octokit.rest.pulls.merge({ ...repo, pull_number: pull.data.number, merge_method: 'squash' });
    const commit = await octokit.rest.git.getCommit({ ...repo, commit_sha: merged.data.sha });
    expect(commit.data.parents.map((p) => p.sha)).toEqual([base]);
    expect(commit.data.message.split('\n')[0]).toBe(`Squash me (#${pull.data.number})`);
    const tree = await octokit.rest.git.getTree({ ...repo, tree_sha: commit.data.tree.sha });
    expect(tree.data.tree.map((e) => e.path)).toEqual(expect.arrayContaining(['a.txt', 'b.txt']));
  });

  it('answers 409 when the head moved since the given sha', async () => {
    const old = await branchWithTag('moving', '4.0.0');
    const pull = await octokit.rest.pulls.create({ ...repo, title: 'moving', head: 'moving', base: 'main' });
    await h.client.commit(full, { branch: 'moving', files: { 'c.txt': 'c' } });
    await expect(octokit.rest.pulls.merge({ ...repo, pull_number: pull.data.number, sha: old })).rejects.toMatchObject({
      status: 409,
      response: { data: { message: 'Head branch was modified. Review and try the merge again.' } },
    });
  });

  it('answers 405 when the branches conflict, and reports mergeable false', async () => {
    await h.client.commit(full, { branch: 'conflict-a', files: { 'README.md': 'a\n' } });
    await h.client.commit(full, { branch: 'main', files: { 'README.md': 'main\n' } });
    const pull = await octokit.rest.pulls.create({ ...repo, title: 'conflicts', head: 'conflict-a', base: 'main' });
    const { data } = await octokit.rest.pulls.get({ ...repo, pull_number: pull.data.number });
    expect(data).toMatchObject({ mergeable: false, mergeable_state: 'dirty', merge_commit_sha: null });
    await expect(octokit.rest.pulls.merge({ ...repo, pull_number: pull.data.number })).rejects.toMatchObject({
      status: 405,
    });
  });

  it('answers 405 for a pull request that is already merged', async () => {
    const [pull] = (await octokit.rest.pulls.list({ ...repo, state: 'closed', head: 'example:merge-me' })).data;
    await expect(octokit.rest.pulls.merge({ ...repo, pull_number: pull?.number ?? 0 })).rejects.toMatchObject({
      status: 405,
    });
  });
});

describe('labels, reviewers, comments and permissions', () => {
  it('adds labels, creating unknown ones', async () => {
    const [pull] = (await octokit.rest.pulls.list({ ...repo, head: 'example:bump-110' })).data;
    const { data } = await octokit.rest.issues.addLabels({
      ...repo,
      issue_number: pull?.number ?? 0,
      labels: ['escalator', 'env:dev'],
    });
    expect(data.map((l) => l.name)).toEqual(['escalator', 'env:dev']);
    const again = await octokit.rest.issues.addLabels({
      ...repo,
      issue_number: pull?.number ?? 0,
      labels: ['escalator'],
    });
    expect(again.data).toHaveLength(2);
  });

  it('requests reviews from users and teams, and refuses strangers', async () => {
    const [pull] = (await octokit.rest.pulls.list({ ...repo, head: 'example:bump-110' })).data;
    const number = pull?.number ?? 0;
    const { data } = await octokit.rest.pulls.requestReviewers({
      ...repo,
      pull_number: number,
      reviewers: ['reviewer'],
      team_reviewers: ['release-managers'],
    });
    expect(data.requested_reviewers?.map((u) => u.login)).toEqual(['reviewer']);
    expect(data.requested_teams?.map((t) => t.slug)).toEqual(['release-managers']);
    await expect(
      octokit.rest.pulls.requestReviewers({ ...repo, pull_number: number, reviewers: ['nobody-here'] }),
    ).rejects.toMatchObject({ status: 422 });
  });

  it('lists, creates, updates and deletes comments', async () => {
    const [pull] = (await octokit.rest.pulls.list({ ...repo, head: 'example:bump-110' })).data;
    const issue_number = pull?.number ?? 0;
    await h.client.comment(full, issue_number, 'from a human');
    const created = await octokit.rest.issues.createComment({
      ...repo,
      issue_number,
      body: '<!-- escalator:diff -->\nfirst',
    });
    expect(created.data.performed_via_github_app?.slug).toBe('escalator');
    const updated = await octokit.rest.issues.updateComment({
      ...repo,
      comment_id: created.data.id,
      body: '<!-- escalator:diff -->\nsecond',
    });
    expect(updated.data.body).toContain('second');
    const list = await octokit.rest.issues.listComments({ ...repo, issue_number });
    expect(list.data.map((c) => [c.user?.login, c.body?.split('\n').pop()])).toEqual([
      ['developer', 'from a human'],
      ['escalator[bot]', 'second'],
    ]);
    await octokit.rest.issues.deleteComment({ ...repo, comment_id: created.data.id });
    expect((await octokit.rest.issues.listComments({ ...repo, issue_number })).data).toHaveLength(1);
    const human = list.data[0]?.id ?? 0;
    await expect(
      octokit.rest.issues.updateComment({ ...repo, comment_id: human, body: 'hijack' }),
    ).rejects.toMatchObject({ status: 403 });
  });

  it('reports collaborator permission levels', async () => {
    const admin = await octokit.rest.repos.getCollaboratorPermissionLevel({ ...repo, username: 'developer' });
    const reader = await octokit.rest.repos.getCollaboratorPermissionLevel({ ...repo, username: 'reviewer' });
    expect(admin.data.permission).toBe('admin');
    expect(reader.data.permission).toBe('read');
  });
});
