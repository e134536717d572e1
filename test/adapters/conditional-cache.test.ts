import { SandboxClient, type Simulator, startSimulator } from '@escalator/github-sandbox';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitHubClients } from '../../src/adapters/github/client.js';
import { RedisConditionalCache } from '../../src/adapters/github/conditional-cache.js';
import { createLogger } from '../../src/observability/logger.js';
import { redisUrl } from '../support/redis.js';

/**
 * Conditional GETs through the production client against the sandbox GitHub (which answers 304
 * as api.github.com does) with the cache in real Redis: an unchanged read costs a 304 and gives
 * the same data, a changed one a 200, and installations never share answers.
 */
const log = createLogger({ level: 'silent' });
const prefix = `test-conditional-${process.pid}-${Date.now()}`;

let sim: Simulator;
let client: SandboxClient;
let redis: Redis;
let ours: number;
let theirs: number;
const calls: Array<{ route: string; status: number; remaining?: number }> = [];

function clients(cache: RedisConditionalCache): GitHubClients {
  return new GitHubClients({
    appId: sim.app.id,
    privateKey: sim.app.privateKey,
    baseUrl: sim.apiUrl,
    log,
    conditional: cache,
    onRequest: (info) => calls.push(info),
  });
}

beforeAll(async () => {
  sim = await startSimulator();
  client = new SandboxClient(sim.url, sim.user.token);
  redis = new Redis(redisUrl, { lazyConnect: false });
  ours = (await client.createRepo({ owner: 'ours', name: 'gitops', files: { 'a.yaml': 'a: 1\n' } })).installation_id!;
  theirs = (await client.createRepo({ owner: 'theirs', name: 'gitops', files: { 'a.yaml': 'secret: 1\n' } }))
    .installation_id!;
});

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
  await sim?.close();
});

const contents = (owner: string) => ({ owner, repo: 'gitops', path: 'a.yaml', mediaType: { format: 'raw' } });

describe('conditional GETs', () => {
  it('answers an unchanged read from a 304 with the same data, without spending the rate limit', async () => {
    const octokit = clients(new RedisConditionalCache(redis, prefix)).forInstallation(ours);
    const first = await octokit.rest.repos.getContent(contents('ours'));
    calls.length = 0;
    const second = await octokit.rest.repos.getContent(contents('ours'));
    expect(second.data).toEqual(first.data);
    expect(second.status).toBe(200);
    expect(calls.map((call) => call.status)).toEqual([304]);
    expect(calls[0]!.remaining).toBe(Number(first.headers['x-ratelimit-remaining']));
  });

  it('shares answers between workers through Redis', async () => {
    const cache = new RedisConditionalCache(redis, prefix);
    await clients(cache).forInstallation(ours).rest.repos.get({ owner: 'ours', repo: 'gitops' });
    calls.length = 0;
    // Another process: a client of its own, the same Redis.
    const again = await clients(new RedisConditionalCache(redis, prefix))
      .forInstallation(ours)
      .rest.repos.get({ owner: 'ours', repo: 'gitops' });
    expect(again.data.full_name).toBe('ours/gitops');
    // The new client first mints its installation token (POST …/access_tokens), then reads.
    expect(calls.filter((call) => call.route.startsWith('GET ')).map((call) => call.status)).toEqual([304]);
  });

  it('reads the new content after a change', async () => {
    const octokit = clients(new RedisConditionalCache(redis, prefix)).forInstallation(ours);
    await octokit.rest.repos.getContent(contents('ours'));
    await client.commit('ours/gitops', { branch: 'main', files: { 'a.yaml': 'a: 2\n' } });
    calls.length = 0;
    const after = await octokit.rest.repos.getContent(contents('ours'));
    expect(after.data).toBe('a: 2\n');
    expect(calls.map((call) => call.status)).toEqual([200]);
  });

  it('never gives one installation an answer another one read', async () => {
    const cache = new RedisConditionalCache(redis, prefix);
    await clients(cache).forInstallation(theirs).rest.repos.getContent(contents('theirs'));
    // The same URL asked by another installation: its own key, so GitHub is asked and refuses.
    const refused = await clients(cache)
      .forInstallation(ours)
      .rest.repos.getContent(contents('theirs'))
      .catch((error: { status: number }) => error);
    expect((refused as { status: number }).status).toBe(404);
    const stored = await redis.keys(`${prefix}:conditional:{${ours}}:*`);
    for (const key of stored.filter((k) => !k.endsWith(':order')))
      expect(await redis.get(key)).not.toContain('secret: 1');
  });

  it('keys every answer by installation: the same URL stored for one is absent for another', async () => {
    const cache = new RedisConditionalCache(redis, `${prefix}-keys`);
    const key = `application/json ${sim.apiUrl}/repos/theirs/gitops/contents/a.yaml`;
    await cache.set(1, key, { etag: '"e"', data: 'secret: 1\n', headers: {} });
    expect(await cache.get(1, key)).toMatchObject({ data: 'secret: 1\n' });
    expect(await cache.get(2, key)).toBeUndefined();
    const keys = await redis.keys(`${prefix}-keys:*`);
    await redis.del(...keys);
  });

  it('keeps at most the configured number of answers per installation, and none too large', async () => {
    const small = new RedisConditionalCache(redis, `${prefix}-bounded`, { bytes: 2_000, entries: 2, ttl: 60 });
    const octokit = clients(small).forInstallation(ours);
    await client.commit('ours/gitops', {
      branch: 'main',
      files: { 'b.yaml': 'b: 1\n', 'c.yaml': 'c: 1\n', 'big.yaml': `big: ${'x'.repeat(5_000)}\n` },
    });
    for (const path of ['a.yaml', 'b.yaml', 'c.yaml', 'big.yaml'])
      await octokit.rest.repos.getContent({ owner: 'ours', repo: 'gitops', path, mediaType: { format: 'raw' } });
    const entries = (await redis.keys(`${prefix}-bounded:conditional:{${ours}}:*`)).filter(
      (k) => !k.endsWith(':order'),
    );
    expect(entries).toHaveLength(2);
    expect(
      await small.get(ours, `application/vnd.github.v3.raw ${sim.apiUrl}/repos/ours/gitops/contents/c.yaml`),
    ).toMatchObject({ data: 'c: 1\n' });
    const keys = await redis.keys(`${prefix}-bounded:*`);
    await redis.del(...keys);
  });
});
