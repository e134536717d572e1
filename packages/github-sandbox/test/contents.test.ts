import type { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGitHubShaped, startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
let octokit: Octokit;
const repo = { owner: 'example', repo: 'files' };
const base64 = (text: string) => Buffer.from(text).toString('base64');

beforeAll(async () => {
  h = await startHarness();
  const seeded = await h.seedRepo('files', { 'README.md': '# files\n' });
  octokit = await h.installationOctokit(seeded.installationId);
});

afterAll(async () => {
  await h.sim.context.webhooks.idle();
  expectGitHubShaped(h);
  await h.close();
});

describe('PUT contents', () => {
  it('creates a file with a verified App commit (201), then updates it given its sha (200)', async () => {
    const created = await octokit.rest.repos.createOrUpdateFileContents({
      ...repo,
      path: 'envs/dev.yaml',
      message: 'Add dev',
      content: base64('tag: 1.0.0\n'),
    });
    expect(created.status).toBe(201);
    expect(created.data.commit.verification?.verified).toBe(true);
    const updated = await octokit.rest.repos.createOrUpdateFileContents({
      ...repo,
      path: 'envs/dev.yaml',
      message: 'Bump dev',
      content: base64('tag: 1.1.0\n'),
      sha: created.data.content?.sha ?? '',
    });
    expect(updated.status).toBe(200);
    expect(updated.data.commit.parents?.map((p) => p.sha)).toEqual([created.data.commit.sha]);
    const { data } = await octokit.rest.repos.getContent({ ...repo, path: 'envs/dev.yaml' });
    expect(Buffer.from((data as { content: string }).content, 'base64').toString()).toBe('tag: 1.1.0\n');
    const pushes = await h.client.deliveries({ event: 'push' });
    expect(pushes.length).toBeGreaterThanOrEqual(2);
  });

  it('answers 422 when an existing file is written without its sha, 409 with a stale one', async () => {
    const write = (sha?: string) =>
      octokit.rest.repos.createOrUpdateFileContents({
        ...repo,
        path: 'README.md',
        message: 'Rewrite',
        content: base64('new\n'),
        ...(sha ? { sha } : {}),
      });
    await expect(write()).rejects.toMatchObject({ status: 422 });
    await expect(write('0'.repeat(40))).rejects.toMatchObject({ status: 409 });
  });

  it('answers 404 for a branch that does not exist', async () => {
    await expect(
      octokit.rest.repos.createOrUpdateFileContents({
        ...repo,
        path: 'x.txt',
        message: 'x',
        content: base64('x'),
        branch: 'nowhere',
      }),
    ).rejects.toMatchObject({ status: 404 });
  });
});
