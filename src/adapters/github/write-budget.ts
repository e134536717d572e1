import { AsyncLocalStorage } from 'node:async_hooks';
import type { Redis } from 'ioredis';

/**
 * Who a GitHub write is for. A person waiting on an answer (a command, a promotion someone asked
 * for) may use the whole budget, and so may a check that holds or frees a merge; routine work
 * (bumps, diffs, relays) leaves a share for them.
 */
export type WritePriority = 'person' | 'routine';

/**
 * The priority a write is taken at: check runs and commit statuses are what GitHub holds a merge
 * to (the gates, the rendered diff's check), so they are written at the people's priority whatever
 * job writes them; a flood of routine bumps never leaves a promotion's gate unreported.
 */
export function writePriorityOf(route: string, level: WritePriority): WritePriority {
  return /^(POST|PATCH) \/repos\/\{owner\}\/\{repo\}\/(check-runs|statuses)(\/|$)/.test(route) ? 'person' : level;
}

const priority = new AsyncLocalStorage<WritePriority>();

/** Runs `work` with its GitHub writes counted at `level`. */
export function withWritePriority<T>(level: WritePriority, work: () => Promise<T>): Promise<T> {
  return priority.run(level, work);
}

export function currentWritePriority(): WritePriority {
  return priority.getStore() ?? 'routine';
}

/** Writes a minute and an hour, per installation, at each priority. */
export interface WriteLimits {
  perMinute: Record<WritePriority, number>;
  perHour: Record<WritePriority, number>;
}

/** Limits for people's work at `perMinute`/`perHour`; routine work gets 5/6 of each. */
export function writeLimits(perMinute: number, perHour: number): WriteLimits {
  return {
    perMinute: { person: perMinute, routine: Math.max(1, Math.floor((perMinute * 5) / 6)) },
    perHour: { person: perHour, routine: Math.max(1, Math.floor((perHour * 5) / 6)) },
  };
}

/**
 * Under GitHub's secondary limits for content-creating requests (80 a minute, 500 an hour per
 * installation: https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits),
 * with room left for people and for clock skew.
 */
export const DEFAULT_WRITE_LIMITS: WriteLimits = writeLimits(72, 460);

/**
 * Take one write from the installation's window, or say how long until one is free. Sliding
 * windows of the last minute and hour in one sorted set per installation (hash-tagged, so a Redis
 * Cluster keeps it on one slot); Redis's own clock, so workers on different machines agree.
 */
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local minuteLimit = tonumber(ARGV[1])
local hourLimit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 3600000)
local minute = redis.call('ZCOUNT', KEYS[1], now - 60000, '+inf')
if minute >= minuteLimit then
  local oldest = redis.call('ZRANGEBYSCORE', KEYS[1], now - 60000, '+inf', 'WITHSCORES', 'LIMIT', minute - minuteLimit, 1)
  return math.max(tonumber(oldest[2]) + 60000 - now, 1)
end
local hour = redis.call('ZCARD', KEYS[1])
if hour >= hourLimit then
  local oldest = redis.call('ZRANGE', KEYS[1], hour - hourLimit, hour - hourLimit, 'WITHSCORES')
  return math.max(tonumber(oldest[2]) + 3600000 - now, 1)
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], 3600000)
return 0
`;

/** The per-installation budget of GitHub writes, shared by every worker through Redis. */
export class WriteBudget {
  #sequence = 0;
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
    readonly limits: WriteLimits = DEFAULT_WRITE_LIMITS,
  ) {}

  /** 0 when a write was taken; otherwise the milliseconds until one is free at this priority. */
  async take(installationId: number, level: WritePriority): Promise<number> {
    this.#sequence += 1;
    const member = `${process.pid}:${Date.now()}:${this.#sequence}:${Math.random().toString(36).slice(2, 8)}`;
    const wait = await this.redis.eval(
      TAKE,
      1,
      `${this.prefix}:writes:{${installationId}}`,
      this.limits.perMinute[level],
      this.limits.perHour[level],
      member,
    );
    return Number(wait);
  }
}
