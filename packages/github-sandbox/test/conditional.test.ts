import type { Octokit } from '@octokit/rest';
import { RequestError } from '@octokit/request-error';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGitHubShaped, startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
let octokit: Octokit;
const repo = { owner: 'example', repo: 'conditional' };

beforeAll(async () => {
  h = await startHarness();
  const seeded = await h.seedRepo('conditional', { 'a.yaml': 'a: 1\n' });
  octokit = await h.installationOctokit(seeded.installationId);
});

afterAll(async () => {
  expectGitHubShaped(h);
  await h.close();
});

/** Octokit throws on 304; the status and headers are what matter. */
async function statusOf(call: Promise<{ status: number }>): Promise<number> {
  try {
    return (await call).status;
  } catch (error) {
    if (error instanceof RequestError) return error.status;
    throw error;
  }
}

describe('conditional requests, as api.github.com answers them', () => {
  it('gives every GET an ETag, Last-Modified and the cache headers of the recordings', async () => {
    const read = await octokit.rest.repos.getContent({ ...repo, path: 'a.yaml' });
    expect(read.headers.etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(Date.parse(String(read.headers['last-modified']))).not.toBeNaN();
    expect(read.headers['cache-control']).toBe('private, max-age=60, s-maxage=60');
  });

  it('answers 304 with no body to a matching If-None-Match, without spending the rate limit', async () => {
    const first = await octokit.rest.repos.getContent({ ...repo, path: 'a.yaml' });
    const remaining = Number(first.headers['x-ratelimit-remaining']);
    const again = await octokit
      .request('GET /repos/{owner}/{repo}/contents/{path}', {
        ...repo,
        path: 'a.yaml',
        headers: { 'if-none-match': String(first.headers.etag) },
      })
      .catch((error: unknown) => error as RequestError);
    expect(again).toBeInstanceOf(RequestError);
    const notModified = again as RequestError;
    expect(notModified.status).toBe(304);
    expect(notModified.response?.headers.etag).toBe(first.headers.etag);
    expect(Number(notModified.response?.headers['x-ratelimit-remaining'])).toBe(remaining);
    const counted = await octokit.rest.repos.get(repo);
    expect(Number(counted.headers['x-ratelimit-remaining'])).toBe(remaining - 1);
  });

  it('answers 200 with a new ETag once the resource changed', async () => {
    const before = await octokit.rest.repos.getContent({ ...repo, path: 'a.yaml' });
    await h.client.commit('example/conditional', { branch: 'main', files: { 'a.yaml': 'a: 2\n' } });
    const after = await octokit.rest.repos.getContent({
      ...repo,
      path: 'a.yaml',
      headers: { 'if-none-match': String(before.headers.etag) },
    });
    expect(after.status).toBe(200);
    expect(after.headers.etag).not.toBe(before.headers.etag);
  });

  it('answers If-Modified-Since: 304 when not changed since, 200 for an earlier date', async () => {
    const read = await octokit.rest.repos.get(repo);
    const since = String(read.headers['last-modified']);
    expect(await statusOf(octokit.rest.repos.get({ ...repo, headers: { 'if-modified-since': since } }))).toBe(304);
    const earlier = new Date(Date.parse(since) - 60_000).toUTCString();
    expect(await statusOf(octokit.rest.repos.get({ ...repo, headers: { 'if-modified-since': earlier } }))).toBe(200);
  });

  it('never answers one caller 304 with an ETag another caller was given', async () => {
    const mine = await octokit.rest.repos.getContent({ ...repo, path: 'a.yaml' });
    const user = h.userOctokit();
    const theirs = await user.rest.repos.getContent({
      ...repo,
      path: 'a.yaml',
      headers: { 'if-none-match': String(mine.headers.etag) },
    });
    expect(theirs.status).toBe(200);
    expect(theirs.headers.etag).not.toBe(mine.headers.etag);
  });

  it('points Location at what a 201 created, as the create-status and labels recordings do', async () => {
    const { data: ref } = await octokit.rest.git.getRef({ ...repo, ref: 'heads/main' });
    const created = await octokit.rest.git.createRef({ ...repo, ref: 'refs/heads/located', sha: ref.object.sha });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(created.data.url);
  });
});
