import type { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGitHubShaped, startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
let octokit: Octokit;
const repo = { owner: 'example', repo: 'graphql' };

const MUTATION = `mutation ($input: CreateCommitOnBranchInput!) {
  createCommitOnBranch(input: $input) { commit { oid url } }
}`;

beforeAll(async () => {
  h = await startHarness();
  const seeded = await h.seedRepo('graphql', { 'dev/kustomization.yaml': 'images: []\n', 'old.txt': 'old\n' });
  octokit = await h.installationOctokit(seeded.installationId);
});

afterAll(async () => {
  expectGitHubShaped(h);
  await h.close();
});

async function head(): Promise<string> {
  return (await octokit.rest.git.getRef({ ...repo, ref: 'heads/main' })).data.object.sha;
}

describe('createCommitOnBranch', () => {
  it('commits additions and deletions as one verified commit and sends a push', async () => {
    const before = await head();
    const result = await octokit.graphql<{ createCommitOnBranch: { commit: { oid: string } } }>(MUTATION, {
      input: {
        branch: { repositoryNameWithOwner: 'example/graphql', branchName: 'main' },
        message: { headline: 'Bump dev', body: 'Escalator' },
        expectedHeadOid: before,
        fileChanges: {
          additions: [
            {
              path: 'dev/kustomization.yaml',
              contents: Buffer.from('images:\n  - {name: a, newTag: "1.10"}\n').toString('base64'),
            },
          ],
          deletions: [{ path: 'old.txt' }],
        },
      },
    });
    const sha = result.createCommitOnBranch.commit.oid;
    expect(await head()).toBe(sha);
    const commit = await octokit.rest.git.getCommit({ ...repo, commit_sha: sha });
    expect(commit.data).toMatchObject({
      message: 'Bump dev\n\nEscalator',
      verification: { verified: true },
      parents: [{ sha: before }],
    });
    const [push] = await h.client.deliveries({ event: 'push' });
    expect(push?.payload).toMatchObject({
      before,
      after: sha,
      commits: [{ modified: ['dev/kustomization.yaml'], removed: ['old.txt'] }],
    });
  });

  it('answers STALE_DATA when the branch moved since expectedHeadOid', async () => {
    const stale = await head();
    await h.client.commit('example/graphql', { branch: 'main', files: { 'x.txt': 'x' } });
    const error = await octokit
      .graphql(MUTATION, {
        input: {
          branch: { repositoryNameWithOwner: 'example/graphql', branchName: 'main' },
          message: { headline: 'Too late' },
          expectedHeadOid: stale,
          fileChanges: { additions: [{ path: 'y.txt', contents: 'eQ==' }] },
        },
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      errors: [{ type: 'STALE_DATA', message: expect.stringContaining(`Expected branch to point to "${stale}"`) }],
    });
  });

  it('says what it does not implement', async () => {
    await expect(octokit.graphql('query { viewer { login } }')).rejects.toMatchObject({
      errors: [
        {
          message: expect.stringContaining(
            'only the createCommitOnBranch, enablePullRequestAutoMerge, disablePullRequestAutoMerge and pinIssue',
          ),
        },
      ],
    });
  });
});
