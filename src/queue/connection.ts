import { Cluster, Redis, type RedisOptions } from 'ioredis';

export type ConnectionRole = 'producer' | 'worker';

/** Where Redis is, from REDIS_URL. */
export type RedisTarget =
  | { kind: 'single'; url: string }
  | {
      kind: 'sentinel';
      sentinels: Array<{ host: string; port: number }>;
      name: string;
      password?: string;
      db?: number;
      tls: boolean;
    }
  | { kind: 'cluster'; nodes: Array<{ host: string; port: number }>; password?: string; tls: boolean };

/**
 * REDIS_URL forms:
 * - `redis://[:password@]host:port[/db]` or `rediss://…` — one node
 * - `redis+sentinel://[:password@]host:26379[,host:26379…]/<master name>[/db]` — Sentinel
 * - `redis+cluster://[:password@]host:6379[,host:6379…]` — Cluster
 * (`rediss+sentinel://` and `rediss+cluster://` connect with TLS.)
 */
export function parseRedisUrl(url: string): RedisTarget {
  const match =
    /^(rediss?)\+(sentinel|cluster):\/\/(?:(?:[^:@/]*):([^@/]*)@)?([^/]+)(?:\/([^/]*))?(?:\/(\d+))?\/?$/.exec(url);
  if (!match) return { kind: 'single', url };
  const [, scheme, mode, password, hostList, name, db] = match as unknown as [
    string,
    string,
    string,
    string | undefined,
    string,
    string | undefined,
    string | undefined,
  ];
  const hosts = hostList.split(',').map((entry) => {
    const [host, port] = entry.split(':') as [string, string | undefined];
    return { host, port: Number(port ?? (mode === 'sentinel' ? 26379 : 6379)) };
  });
  const secret = password ? { password: decodeURIComponent(password) } : {};
  if (mode === 'cluster') return { kind: 'cluster', nodes: hosts, ...secret, tls: scheme === 'rediss' };
  return {
    kind: 'sentinel',
    sentinels: hosts,
    name: name || 'mymaster',
    ...secret,
    ...(db ? { db: Number(db) } : {}),
    tls: scheme === 'rediss',
  };
}

/**
 * One Redis connection per role.
 * - producer: `enableOfflineQueue: false` so an enqueue fails at once when Redis is down and intake
 *   can answer 503 (the sender retries) instead of holding a request it may never complete.
 * - worker: `maxRetriesPerRequest: null`, which BullMQ requires for its blocking commands.
 * Sentinel and Cluster come from the URL (see parseRedisUrl). A Cluster client is typed as Redis:
 * ioredis gives both the same command API, and BullMQ accepts either.
 */
export function createRedis(url: string, role: ConnectionRole, extra: RedisOptions = {}): Redis {
  const options: RedisOptions =
    role === 'producer'
      ? { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2_000, ...extra }
      : { maxRetriesPerRequest: null, enableReadyCheck: true, ...extra };
  const target = parseRedisUrl(url);
  switch (target.kind) {
    case 'single':
      return new Redis(url, { lazyConnect: false, ...options });
    case 'sentinel':
      return new Redis({
        ...options,
        sentinels: target.sentinels,
        name: target.name,
        ...(target.password ? { password: target.password } : {}),
        ...(target.db ? { db: target.db } : {}),
        ...(target.tls ? { tls: {}, enableTLSForSentinelMode: true } : {}),
      });
    case 'cluster':
      return new Cluster(target.nodes, {
        enableOfflineQueue: options.enableOfflineQueue ?? true,
        // No ready check on the Cluster client (the nodes' own connections keep theirs). ioredis'
        // Cluster.connect() runs `CLUSTER INFO` once the slots are known; while a master is being
        // failed over that says `cluster_state:fail`, and ioredis then reconnects on its own but
        // never settles the connect() promise it returned. BullMQ awaits exactly that promise
        // when it re-arms a worker's blocking connection (its bzpopmin watchdog disconnects it,
        // then calls connect()), so the worker's fetch loop waited forever and its queue stopped
        // (seen in test/cluster: no job of that queue ran after the failover). Without the check
        // connect() settles as soon as the slots are read; a command that meets `CLUSTERDOWN`
        // meanwhile is retried by ioredis (retryDelayOnClusterDown) or by BullMQ.
        enableReadyCheck: false,
        redisOptions: {
          ...options,
          ...(target.password ? { password: target.password } : {}),
          ...(target.tls ? { tls: {} } : {}),
        },
      }) as unknown as Redis;
  }
}

/** BullMQ on Cluster needs every key of a queue in one slot: a `{hash tag}` prefix. */
export function clusterSafePrefix(url: string, prefix: string): string {
  return parseRedisUrl(url).kind === 'cluster' && !prefix.includes('{') ? `{${prefix}}` : prefix;
}

/** Wait until the connection is ready, or fail with a message that says what to do. */
export async function waitForRedis(redis: Redis, url: string, timeoutMs = 5_000): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(
        new Error(
          `Redis at ${redactUrl(url)} did not answer within ${timeoutMs} ms. Start Redis (redis-server) or set REDIS_URL to a reachable instance.`,
        ),
      );
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
  return url.replace(
    /^([a-z+]+:\/\/)([^@/]*:)?[^@/]*@/,
    (_, scheme: string, user?: string) => `${scheme}${user ?? ':'}***@`,
  );
}

/** An error that means "Redis cannot be reached now" (answer 503, the caller retries), not a bug. */
export function isRedisUnavailable(error: unknown): boolean {
  if (error instanceof AggregateError) return error.errors.some(isRedisUnavailable);
  if (!(error instanceof Error)) return false;
  return (
    error.name === 'QueueUnavailableError' ||
    /Stream isn't writeable|Connection is closed|ECONNREFUSED|ETIMEDOUT|Reached the max retries per request/.test(
      error.message,
    )
  );
}
