/**
 * The faults, injected one at a time on a fixed schedule, in rotation:
 * - a worker SIGKILLed (its active jobs stall until the lock expires) and a new one started
 * - a web process restarted (alternately SIGTERM and SIGKILL), on the same port
 * - Redis shut down with `redis-cli shutdown` (AOF written), or SIGKILLed (no final flush), down
 *   for a few seconds, started again from its append-only file
 * - on a Redis Cluster (`--cluster`) instead: the master serving Escalator's slot SIGKILLed, its
 *   replica taking over, the killed node started again (it comes back as the new master's
 *   replica); and, the next time round, a manual failover (`CLUSTER FAILOVER` on that replica)
 * - the sandbox's rate-limit switch turned on for the next N GitHub API requests
 */
import type { SandboxClient } from '@escalator/github-sandbox';
import type { LocalCluster } from '../../test/support/redis-cluster.js';
import { sleep } from '../support/stats.js';
import { pick } from './driver.js';
import type { Fleet, PrivateRedis } from './processes.js';

export type FaultKind =
  | 'worker SIGKILL'
  | 'web restart (SIGTERM)'
  | 'web restart (SIGKILL)'
  | 'redis restart'
  | 'redis SIGKILL'
  | 'master SIGKILL'
  | 'master failover'
  | 'rate limit';

export interface FaultRecord {
  kind: FaultKind;
  /** Milliseconds since the drive started. */
  at: number;
  detail: string;
  /** How long the fault took to inject and recover from (process back up). */
  tookMs: number;
}

const rotation: FaultKind[] = [
  'worker SIGKILL',
  'web restart (SIGTERM)',
  'redis restart',
  'rate limit',
  'worker SIGKILL',
  'web restart (SIGKILL)',
  'redis SIGKILL',
  'rate limit',
];
/**
 * On a cluster the whole-Redis faults become faults of the master serving Escalator's slot, early
 * in the rotation: with the secondary limits on, the drive is short (bench/chaos.ts) and a slow
 * setup on a loaded machine can leave room for six faults only; both master faults must be in.
 */
const clusterRotation: FaultKind[] = [
  'worker SIGKILL',
  'master SIGKILL',
  'web restart (SIGTERM)',
  'rate limit',
  'master failover',
  'worker SIGKILL',
  'web restart (SIGKILL)',
  'rate limit',
];

/** The Redis the run uses: one private server, or a private cluster and the key whose slot Escalator's keys share. */
export type RedisUnderTest =
  { kind: 'single'; server: PrivateRedis } | { kind: 'cluster'; cluster: LocalCluster; slotKey: string };
const rateLimitModes = ['secondary', 'primary', 'secondary-429'] as const;

export interface FaultOptions {
  fleet: Fleet;
  redis: RedisUnderTest;
  client: SandboxClient;
  random: () => number;
  /** How long Redis stays down. */
  redisDownMs: number;
  /** Requests answered as rate-limited per switch. */
  rateLimitCount: number;
}

/** Inject faults every `everyMs` (first after `firstMs`) until `until` (a `Date.now()` time). */
export async function runFaults(
  options: FaultOptions,
  schedule: { startedAt: number; firstMs: number; everyMs: number; until: number },
  onFault?: (record: FaultRecord) => void,
): Promise<FaultRecord[]> {
  const records: FaultRecord[] = [];
  let next = schedule.startedAt + schedule.firstMs;
  for (let i = 0; ; i++) {
    if (next >= schedule.until) return records;
    await sleep(Math.max(0, next - Date.now()));
    const faults = options.redis.kind === 'cluster' ? clusterRotation : rotation;
    const kind = faults[i % faults.length] as FaultKind;
    const at = Date.now();
    const detail = await inject(options, kind, i);
    const record = { kind, at: at - schedule.startedAt, detail, tookMs: Date.now() - at };
    records.push(record);
    onFault?.(record);
    next = Math.max(next + schedule.everyMs, Date.now() + 1_000);
  }
}

async function inject(options: FaultOptions, kind: FaultKind, i: number): Promise<string> {
  const { fleet, redis, client, random } = options;
  switch (kind) {
    case 'worker SIGKILL': {
      const index = Math.floor(random() * fleet.workers.length);
      const killed = await fleet.killWorker(index);
      const started = fleet.startWorker();
      return `${killed.name} (pid ${killed.child.pid}) killed, ${started.name} started`;
    }
    case 'web restart (SIGTERM)':
    case 'web restart (SIGKILL)': {
      const index = Math.floor(random() * fleet.webs.length);
      const signal = kind === 'web restart (SIGTERM)' ? 'SIGTERM' : 'SIGKILL';
      await fleet.restartWeb(index, signal);
      return `web-${index} ${signal}, back on port ${fleet.webs[index]?.port}${index === 0 ? ' (the webhook URL)' : ''}`;
    }
    case 'redis restart':
    case 'redis SIGKILL': {
      if (redis.kind !== 'single') throw new Error(`${kind} is a fault of a single Redis; this run uses a cluster`);
      await (kind === 'redis restart' ? redis.server.shutdown() : redis.server.kill());
      await sleep(options.redisDownMs);
      await redis.server.start();
      return `${kind === 'redis restart' ? 'SHUTDOWN' : 'SIGKILL'}, down ${options.redisDownMs} ms, restarted from its append-only file`;
    }
    case 'master SIGKILL': {
      if (redis.kind !== 'cluster') throw new Error(`${kind} is a fault of a Redis Cluster; this run uses one Redis`);
      const started = Date.now();
      const { killed, promoted } = await redis.cluster.failMasterOf(redis.slotKey);
      const failedOverMs = Date.now() - started;
      await redis.cluster.restart(killed);
      return `master :${killed} SIGKILLed, replica :${promoted} took over in ${(failedOverMs / 1000).toFixed(1)} s; :${killed} restarted, now its synced replica`;
    }
    case 'master failover': {
      if (redis.kind !== 'cluster') throw new Error(`${kind} is a fault of a Redis Cluster; this run uses one Redis`);
      const { demoted, promoted } = await redis.cluster.failoverMasterOf(redis.slotKey);
      return `CLUSTER FAILOVER: replica :${promoted} now the master, :${demoted} its synced replica`;
    }
    case 'rate limit': {
      const mode = pick(random, rateLimitModes);
      await client.setRateLimit({ mode, count: options.rateLimitCount, retryAfter: 2 + (i % 3) });
      return `${mode}, next ${options.rateLimitCount} API requests`;
    }
  }
}
