import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * What a conditional GET needs to answer itself from a 304: the ETag GitHub gave and the body.
 * Kept only for answers small enough to be worth keeping.
 */
export interface CachedAnswer {
  etag: string;
  data: unknown;
  /** The headers a caller reads from a 200 (pagination, content type). */
  headers: Record<string, string>;
}

/** Where conditional answers are kept; one per worker process, shared by all of them through Redis. */
export interface ConditionalCache {
  get(installationId: number, key: string): Promise<CachedAnswer | undefined>;
  set(installationId: number, key: string, answer: CachedAnswer): Promise<void>;
}

/** Answers bigger than this are not kept: a file this large is read again whole. */
export const MAX_CACHED_BYTES = 256 * 1024;
/** At most this many answers per installation; the least recently stored go first. */
export const MAX_CACHED_PER_INSTALLATION = 2_000;
/** An answer not stored again within this time is dropped. */
export const CACHED_TTL_SECONDS = 6 * 60 * 60;

/**
 * The cache of conditional GETs in Redis (GitHub's "use conditional requests" advice: an
 * unchanged read costs a 304, which does not count against the primary rate limit). Keys are per
 * installation and hash-tagged by it, so one installation never reads another's answers and a
 * Redis Cluster keeps each installation's keys on one slot. Bounded three ways: answer size,
 * answers per installation (a sorted set by time, trimmed on write) and a TTL.
 */
export class RedisConditionalCache implements ConditionalCache {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
    readonly limits = { bytes: MAX_CACHED_BYTES, entries: MAX_CACHED_PER_INSTALLATION, ttl: CACHED_TTL_SECONDS },
  ) {}

  #keys(installationId: number, key: string): { entry: string; order: string; id: string } {
    const id = createHash('sha256').update(key).digest('hex').slice(0, 40);
    const base = `${this.prefix}:conditional:{${installationId}}`;
    return { entry: `${base}:${id}`, order: `${base}:order`, id };
  }

  async get(installationId: number, key: string): Promise<CachedAnswer | undefined> {
    const text = await this.redis.get(this.#keys(installationId, key).entry);
    if (text === null) return undefined;
    try {
      return JSON.parse(text) as CachedAnswer;
    } catch {
      return undefined;
    }
  }

  async set(installationId: number, key: string, answer: CachedAnswer): Promise<void> {
    const text = JSON.stringify(answer);
    if (Buffer.byteLength(text) > this.limits.bytes) return;
    const { entry, order, id } = this.#keys(installationId, key);
    const base = entry.slice(0, entry.length - id.length);
    const [, , , overflow] = ((await this.redis
      .multi()
      .set(entry, text, 'EX', this.limits.ttl)
      .zadd(order, Date.now(), id)
      .expire(order, this.limits.ttl)
      .zrange(order, 0, -this.limits.entries - 1)
      .exec()) ?? []) as Array<[Error | null, unknown]>;
    const evicted = (overflow?.[1] as string[] | undefined) ?? [];
    if (evicted.length > 0)
      await this.redis
        .multi()
        .del(...evicted.map((old) => `${base}${old}`))
        .zrem(order, ...evicted)
        .exec();
  }
}
