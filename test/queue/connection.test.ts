import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import {
  clusterSafePrefix,
  createRedis,
  parseRedisUrl,
  pingRedis,
  redactUrl,
  waitForRedis,
} from '../../src/queue/connection.js';
import { freePort } from '../support/net.js';
import { redisUrl } from '../support/stack.js';

describe('REDIS_URL', () => {
  it.each([
    ['redis://127.0.0.1:6379', { kind: 'single', url: 'redis://127.0.0.1:6379' }],
    [
      'redis+sentinel://10.0.0.1:26379,10.0.0.2:26380/primary',
      {
        kind: 'sentinel',
        sentinels: [
          { host: '10.0.0.1', port: 26379 },
          { host: '10.0.0.2', port: 26380 },
        ],
        name: 'primary',
        tls: false,
      },
    ],
    [
      'rediss+sentinel://:s%40cret@sentinel/primary/2',
      {
        kind: 'sentinel',
        sentinels: [{ host: 'sentinel', port: 26379 }],
        name: 'primary',
        password: 's@cret',
        db: 2,
        tls: true,
      },
    ],
    [
      'redis+cluster://a:7000,b:7001,c',
      {
        kind: 'cluster',
        nodes: [
          { host: 'a', port: 7000 },
          { host: 'b', port: 7001 },
          { host: 'c', port: 6379 },
        ],
        tls: false,
      },
    ],
  ])('reads %s', (url, target) => {
    expect(parseRedisUrl(url)).toEqual(target);
  });

  it('hash-tags the key prefix on Cluster, so each queue stays in one slot', () => {
    expect(clusterSafePrefix('redis+cluster://a:7000', 'escalator')).toBe('{escalator}');
    expect(clusterSafePrefix('redis+cluster://a:7000', '{mine}')).toBe('{mine}');
    expect(clusterSafePrefix('redis://a:6379', 'escalator')).toBe('escalator');
  });

  it('never shows a password in messages', () => {
    expect(redactUrl('redis://:hunter2@cache:6379/0')).toBe('redis://:***@cache:6379/0');
    expect(redactUrl('redis+sentinel://user:hunter2@s1,s2/primary')).toBe('redis+sentinel://user:***@s1,s2/primary');
    expect(redactUrl('redis://cache:6379')).toBe('redis://cache:6379');
  });

  it('connects through a real Sentinel to the primary it names', async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'escalator-sentinel-'));
    const config = join(dir, 'sentinel.conf');
    // The primary is the tests' Redis (REDIS_URL), wherever it listens.
    const { host, port: primaryPort } = new Redis(redisUrl, { lazyConnect: true }).options;
    writeFileSync(
      config,
      `port ${port}\nbind 127.0.0.1\ndir ${dir}\nsentinel monitor primary ${host} ${primaryPort} 1\n`,
    );
    execFileSync('redis-server', [
      config,
      '--sentinel',
      '--daemonize',
      'yes',
      '--pidfile',
      join(dir, 'sentinel.pid'),
      '--logfile',
      join(dir, 'sentinel.log'),
    ]);
    const redis = createRedis(`redis+sentinel://127.0.0.1:${port}/primary`, 'worker');
    redis.on('error', () => undefined);
    try {
      await waitForRedis(redis, 'sentinel', 10_000);
      expect(await pingRedis(redis)).toBe(true);
      await redis.set(`escalator-sentinel-test-${port}`, 'ok', 'EX', 10);
      expect(await redis.get(`escalator-sentinel-test-${port}`)).toBe('ok');
    } finally {
      redis.disconnect();
      execFileSync('redis-cli', ['-p', String(port), 'shutdown', 'nosave']);
    }
  });
});
