import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEPT_HEADS } from '../../src/adapters/store/heads.js';
import { RepoState } from '../../src/adapters/store/repo-state.js';
import { redisUrl } from '../support/stack.js';

const sha = (n: number) => n.toString(16).padStart(40, '0');

describe('HeadStore (real Redis)', () => {
  let redis: Redis;
  let store: RepoState;

  beforeAll(() => {
    redis = new Redis(redisUrl);
    store = new RepoState(redis, `heads-${randomUUID().slice(0, 8)}`);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${store.prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('knows the commits a default branch pointed at, per repository, in any case of owner, name and SHA', async () => {
    await store.heads.record('Example', 'GitOps', sha(1).toUpperCase(), 1);
    expect(await store.heads.has('example', 'gitops', sha(1))).toBe(true);
    expect(await store.heads.has('example', 'gitops', sha(2))).toBe(false);
    expect(await store.heads.has('example', 'other', sha(1))).toBe(false);
  });

  it(`keeps the newest ${KEPT_HEADS}, forgetting the oldest first`, async () => {
    for (let head = 10; head < 10 + KEPT_HEADS + 5; head++)
      await store.heads.record('example', 'busy', sha(head), head);
    expect(await redis.zcard(`${store.prefix}:heads:example/busy`)).toBe(KEPT_HEADS);
    expect(await store.heads.has('example', 'busy', sha(14))).toBe(false);
    expect(await store.heads.has('example', 'busy', sha(15))).toBe(true);
    expect(await store.heads.has('example', 'busy', sha(10 + KEPT_HEADS + 4))).toBe(true);
  });
});
