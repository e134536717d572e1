import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RepoState } from '../../src/adapters/store/repo-state.js';
import type { HealthReport } from '../../src/planners/health.js';
import { redisUrl } from '../support/stack.js';

const key = { installationId: 1, owner: 'Example', repo: 'GitOps' };
const A = 'a'.repeat(40);

function report(at: string, fields: Partial<HealthReport> = {}): HealthReport {
  return {
    owner: 'Example',
    repo: 'GitOps',
    environment: 'staging',
    app: 'hello',
    revision: A,
    sync: 'synced',
    health: 'healthy',
    at,
    source: { agent: 'flux', object: 'flux-system/apps-staging' },
    ...fields,
  };
}

describe('HealthStore (real Redis)', () => {
  let redis: Redis;
  let store: RepoState;

  beforeAll(() => {
    redis = new Redis(redisUrl);
    store = new RepoState(redis, `health-${randomUUID().slice(0, 8)}`);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${store.prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('records a first report as a change and loads it back', async () => {
    const first = await store.health.record(key, report('2026-12-05T10:00:00Z'), 60_000);
    expect(first.changed).toBe(true);
    expect(first.previous).toBeUndefined();
    expect(await store.health.load({ ...key, owner: 'example' }, 'staging', 'hello')).toEqual(first.current);
    expect(first.current.healthySince).toBe('2026-12-05T10:00:00Z');
  });

  it('answers unchanged for a report older than the recorded one', async () => {
    const old = await store.health.record(key, report('2026-12-05T09:00:00Z', { health: 'degraded' }), 60_000);
    expect(old.changed).toBe(false);
    expect(old.current.health).toBe('healthy');
  });

  it('keeps every one of many reports folded at once (no lost update)', async () => {
    const base = Date.parse('2026-12-05T11:00:00Z');
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        store.health.record(
          key,
          report(new Date(base + i * 1000).toISOString(), { app: 'world', health: i % 2 ? 'degraded' : 'healthy' }),
          60_000,
        ),
      ),
    );
    const recorded = await store.health.load(key, 'staging', 'world');
    expect(recorded?.reportedAt).toBe(new Date(base + 29 * 1000).toISOString());
    expect(recorded?.degradedSince).toBe(new Date(base + 29 * 1000).toISOString());
    expect(results.filter((result) => result.changed).length).toBeGreaterThan(0);
    expect(Object.keys(await store.health.loadAll(key)).sort()).toEqual(['staging|hello', 'staging|world']);
  });

  it('answers undefined for an app no agent reported on', async () => {
    expect(await store.health.load(key, 'prod', 'hello')).toBeUndefined();
  });
});
