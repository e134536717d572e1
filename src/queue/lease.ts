import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A Redis lease that serializes writes to one repository across every worker process.
 * SET NX PX takes it; a Lua compare-and-delete releases only our own lease; it expires by itself
 * if the holder dies (a SIGKILLed worker cannot block a repository for longer than `ttlMs`).
 */
export class LeaseBusyError extends Error {
  override name = 'LeaseBusyError';
}

const release = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const extend = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;

export async function withLease<T>(
  redis: Redis,
  key: string,
  work: () => Promise<T>,
  options: { ttlMs?: number; waitMs?: number } = {},
): Promise<T> {
  const ttlMs = options.ttlMs ?? 60_000;
  const waitMs = options.waitMs ?? 30_000;
  const token = randomUUID();
  const deadline = Date.now() + waitMs;
  let delay = 20;
  while ((await redis.set(key, token, 'PX', ttlMs, 'NX')) !== 'OK') {
    if (Date.now() > deadline)
      throw new LeaseBusyError(`another worker has held ${key} for more than ${waitMs} ms; the job will retry`);
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 500);
  }
  const renew = setInterval(
    () => void redis.eval(extend, 1, key, token, String(ttlMs)).catch(() => undefined),
    Math.floor(ttlMs / 3),
  );
  renew.unref();
  try {
    return await work();
  } finally {
    clearInterval(renew);
    await redis.eval(release, 1, key, token).catch(() => undefined);
  }
}
