import type { Octokit } from '@octokit/rest';
import { RequestError } from '@octokit/request-error';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGitHubShaped, startHarness, type Harness } from '../testing/harness.js';

/**
 * GitHub's secondary limits on content-creating requests, per installation: past the per-minute
 * or per-hour number, 403 with the documented message and `retry-after`; reads are not counted;
 * a refused request is not counted either. Small numbers here so the test is quick.
 */
let h: Harness;
let octokit: Octokit;
let installationId: number;
let base: string;
const repo = { owner: 'example', repo: 'limited' };
let created = 0;

beforeAll(async () => {
  h = await startHarness({ secondaryLimits: { perMinute: 3, perHour: 5 } });
  installationId = (await h.seedRepo('limited', { 'a.yaml': 'a: 1\n' })).installationId;
  octokit = await h.installationOctokit(installationId);
  base = (await octokit.rest.git.getRef({ ...repo, ref: 'heads/main' })).data.object.sha;
});

afterAll(async () => {
  expectGitHubShaped(h);
  await h.close();
});

function createRef(client: Octokit = octokit): Promise<unknown> {
  created += 1;
  return client.rest.git.createRef({ ...repo, ref: `refs/heads/b${created}`, sha: base });
}

async function refusal(call: Promise<unknown>): Promise<RequestError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RequestError);
  return error as RequestError;
}

describe('secondary rate limits', () => {
  it('refuses the content-creating request past the per-minute limit with retry-after', async () => {
    for (let i = 0; i < 3; i++) await createRef();
    const refused = await refusal(createRef());
    expect(refused.status).toBe(403);
    expect(String((refused.response?.data as { message: string }).message)).toMatch(
      /^You have exceeded a secondary rate limit\. Please wait a few minutes before you try again\./,
    );
    const retryAfter = Number(refused.response?.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(h.sim.secondaryRefused()).toBe(1);
  });

  it('does not count reads', async () => {
    for (let i = 0; i < 10; i++) expect((await octokit.rest.repos.get(repo)).status).toBe(200);
    expect(h.sim.secondaryRefused()).toBe(1);
  });

  it('lets requests through again once the minute has passed, until the hour limit', async () => {
    await h.client.advanceClock(61);
    const client = await h.installationOctokit(installationId);
    await createRef(client);
    await createRef(client);
    // 5 in the hour now (3 + 2; the refused one did not count).
    const refused = await refusal(createRef(client));
    expect(refused.status).toBe(403);
    expect(Number(refused.response?.headers['retry-after'])).toBeGreaterThan(60);
  });

  it('counts per installation: another installation is not limited by this one', async () => {
    const owned = await h.client.createRepo({ owner: 'another-org', name: 'free', files: { 'a.yaml': 'a\n' } });
    expect(owned.installation_id).not.toBe(installationId);
    const client = await h.installationOctokit(owned.installation_id!);
    const { data } = await client.rest.git.getRef({ owner: 'another-org', repo: 'free', ref: 'heads/main' });
    const answer = await client.rest.git.createRef({
      owner: 'another-org',
      repo: 'free',
      ref: 'refs/heads/x',
      sha: data.object.sha,
    });
    expect(answer.status).toBe(201);
  });
});
