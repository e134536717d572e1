import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { PendingRelay } from '../planners/relay.js';

/**
 * The relay's state in Redis, outside BullMQ's own keys (so `obliterate` of the queue leaves it):
 * - pending payloads per coalescing window (a list: arrival order is "newest wins" order), kept
 *   until a job delivered them, so nothing is lost while a job runs;
 * - a marker per (target, delivery id), so a redelivered webhook adds nothing;
 * - the delivery log: the last N attempts per target.
 */

/** One attempt to deliver to one target, as the delivery log keeps it. */
export interface RelayLogEntry {
  /** When the attempt ended, ISO 8601. */
  at: string;
  target: string;
  /** `X-GitHub-Delivery` sent (the newest payload's delivery id). */
  deliveryId: string;
  /** Every delivery id folded into this delivery. */
  coalesced: string[];
  repository: string;
  event: string;
  /** 1-based attempt of the job. */
  attempt: number;
  /**
   * - `delivered`: the agent answered 2xx
   * - `retry`: timeout, unreachable, 5xx or 429; another attempt follows while attempts remain
   * - `rate-limited`: the agent sent Retry-After; the job waits until then
   * - `rejected`: any other answer (wrong secret, unknown receiver); not retried
   * - `skipped`: the compare API showed no changed path matching the target's paths
   */
  outcome: 'delivered' | 'retry' | 'rate-limited' | 'rejected' | 'skipped';
  /** HTTP status, or null when the agent did not answer. */
  status: number | null;
  latencyMs: number | null;
  /** The union of changed paths, or null when it could not be known. At most 100 are kept. */
  changedPaths: string[] | null;
  error?: string;
}

/** Adds a payload unless this (target, delivery id) was seen; returns the window's length, or 0. */
const ADD_PENDING = `
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[2]) then
  local n = redis.call('RPUSH', KEYS[2], ARGV[1])
  redis.call('EXPIRE', KEYS[2], ARGV[2])
  return n
end
return 0`;

const ADD_PENDING_SHA = createHash('sha1').update(ADD_PENDING).digest('hex');

/** How long a pending window and a seen marker outlive their last write. */
const STATE_TTL_SECONDS = 24 * 60 * 60;

export class RelayStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
    /** Entries kept per target in the delivery log. */
    readonly logSize = 100,
  ) {}

  #pendingKey(window: string): string {
    return `${this.prefix}:relaystate:pending:${window}`;
  }
  #seenKey(target: string, deliveryId: string): string {
    return `${this.prefix}:relaystate:seen:${target}:${deliveryId}`;
  }
  #logKey(target: string): string {
    return `${this.prefix}:relaystate:log:${target}`;
  }

  /**
   * Keep a payload for a window until a job delivered it. Returns the number of payloads now
   * waiting in the window (1: it was empty), or 0 when this delivery id was already added for the
   * target (a redelivered webhook).
   */
  async addPending(window: string, target: string, payload: PendingRelay): Promise<number> {
    const args = [
      2,
      this.#seenKey(target, payload.deliveryId),
      this.#pendingKey(window),
      JSON.stringify(payload),
      STATE_TTL_SECONDS,
    ] as const;
    try {
      return Number(await this.redis.evalsha(ADD_PENDING_SHA, ...args));
    } catch (error) {
      if (!String((error as Error).message).startsWith('NOSCRIPT')) throw error;
      return Number(await this.redis.eval(ADD_PENDING, ...args));
    }
  }

  /** Forget that a delivery id was seen (its job could not be enqueued; a redelivery may add it again). */
  async forgetSeen(target: string, deliveryId: string): Promise<void> {
    await this.redis.del(this.#seenKey(target, deliveryId));
  }

  /** The payloads waiting in a window, oldest first. */
  async loadPending(window: string): Promise<PendingRelay[]> {
    const items = await this.redis.lrange(this.#pendingKey(window), 0, -1);
    return items.map((item) => JSON.parse(item) as PendingRelay);
  }

  /**
   * Drop the first `count` payloads (the ones a job handled). Payloads added meanwhile stay for
   * the next job: only appends happen at the tail, and only one job per window runs at a time.
   */
  async removePending(window: string, count: number): Promise<void> {
    if (count > 0) await this.redis.ltrim(this.#pendingKey(window), count, -1);
  }

  async record(entry: RelayLogEntry): Promise<void> {
    const stored: RelayLogEntry =
      entry.changedPaths && entry.changedPaths.length > 100
        ? { ...entry, changedPaths: entry.changedPaths.slice(0, 100) }
        : entry;
    await this.redis
      .multi()
      .lpush(this.#logKey(entry.target), JSON.stringify(stored))
      .ltrim(this.#logKey(entry.target), 0, this.logSize - 1)
      .exec();
  }

  /** The last attempts for a target, newest first. */
  async deliveries(target: string, limit = this.logSize): Promise<RelayLogEntry[]> {
    const items = await this.redis.lrange(this.#logKey(target), 0, Math.max(0, limit - 1));
    return items.map((item) => JSON.parse(item) as RelayLogEntry);
  }
}
