import { describe, expect, it } from 'vitest';
import { findRedis, freePort, pingRedis, RedisNotFoundError } from '../src/redis.js';

describe('finding Redis for the sandbox', () => {
  it('uses REDIS_URL when it is set', async () => {
    const redis = await findRedis({ REDIS_URL: 'redis://example.invalid:6380' });
    expect(redis).toMatchObject({ url: 'redis://example.invalid:6380', source: 'env' });
  });

  it('uses the local Redis when it answers', async () => {
    const redis = await findRedis({});
    expect(redis).toMatchObject({ url: 'redis://127.0.0.1:6379', source: 'local' });
  });

  it('starts a private redis-server when nothing answers, and stops it', async () => {
    const redis = await findRedis({}, { localPort: await freePort() });
    expect(redis.source).toBe('private');
    const port = Number(new URL(redis.url).port);
    expect(await pingRedis('127.0.0.1', port)).toBe(true);
    await redis.stop();
    expect(await pingRedis('127.0.0.1', port)).toBe(false);
  });

  it('says how to get Redis when there is none', async () => {
    const error = await findRedis({}, { localPort: await freePort(), binary: 'no-such-redis-server' }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RedisNotFoundError);
    expect((error as Error).message).toMatch(/apt-get install redis-server.*brew install redis/s);
    expect((error as Error).message).toContain('REDIS_URL=');
  });
});
