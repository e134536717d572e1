import { Redis, type RedisOptions } from 'ioredis';

export type ConnectionRole = 'producer' | 'worker';

/**
 * One Redis connection per role.
 * - producer: `enableOfflineQueue: false` so an enqueue fails at once when Redis is down and intake
 *   can answer 503 (the sender retries) instead of holding a request it may never complete.
 * - worker: `maxRetriesPerRequest: null`, which BullMQ requires for its blocking commands.
 * REDIS_URL names one Redis node (`redis://` or `rediss://`); Sentinel and Cluster are not
 * configurable yet (docs/operations.md).
 */
export function createRedis(url: string, role: ConnectionRole, extra: RedisOptions = {}): Redis {
  const options: RedisOptions =
    role === 'producer'
      ? { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2_000, ...extra }
      : { maxRetriesPerRequest: null, enableReadyCheck: true, ...extra };
  return new Redis(url, { lazyConnect: false, ...options });
}

/** Wait until the connection is ready, or fail with a message that says what to do. */
export async function waitForRedis(redis: Redis, url: string, timeoutMs = 5_000): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`Redis at ${redactUrl(url)} did not answer within ${timeoutMs} ms. Start Redis (redis-server) or set REDIS_URL to a reachable instance.`));
    }, timeoutMs);
    const onReady = (): void => {
      cleanup();
      resolve();
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      redis.off('ready', onReady);
    };
    redis.on('ready', onReady);
  });
}

/** True when Redis answers PING within the timeout. */
export async function pingRedis(redis: Redis, timeoutMs = 1_000): Promise<boolean> {
  try {
    const answer = await Promise.race([
      redis.ping(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), timeoutMs).unref()),
    ]);
    return answer === 'PONG';
  } catch {
    return false;
  }
}

/** A Redis URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable REDIS_URL)';
  }
}
