/**
 * The faults, injected one at a time on a fixed schedule, in rotation:
 * - a worker SIGKILLed (its active jobs stall until the lock expires) and a new one started
 * - a web process restarted (alternately SIGTERM and SIGKILL), on the same port
 * - Redis shut down with `redis-cli shutdown` (AOF written), or SIGKILLed (no final flush), down
 *   for a few seconds, started again from its append-only file
 * - the sandbox's rate-limit switch turned on for the next N GitHub API requests
 */
import type { SandboxClient } from '@escalator/github-sandbox';
import { sleep } from '../support/stats.js';
import { pick } from './driver.js';
import type { Fleet, PrivateRedis } from './processes.js';

export type FaultKind =
  | 'worker SIGKILL'
  | 'web restart (SIGTERM)'
  | 'web restart (SIGKILL)'
  | 'redis restart'
  | 'redis SIGKILL'
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
const rateLimitModes = ['secondary', 'primary', 'secondary-429'] as const;

export interface FaultOptions {
  fleet: Fleet;
  redis: PrivateRedis;
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
    const kind = rotation[i % rotation.length] as FaultKind;
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
      await (kind === 'redis restart' ? redis.shutdown() : redis.kill());
      await sleep(options.redisDownMs);
      await redis.start();
      return `${kind === 'redis restart' ? 'SHUTDOWN' : 'SIGKILL'}, down ${options.redisDownMs} ms, restarted from its append-only file`;
    }
    case 'rate limit': {
      const mode = pick(random, rateLimitModes);
      await client.setRateLimit({ mode, count: options.rateLimitCount, retryAfter: 2 + (i % 3) });
      return `${mode}, next ${options.rateLimitCount} API requests`;
    }
  }
}
