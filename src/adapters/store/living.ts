import type { Redis } from 'ioredis';

/**
 * What Escalator wrote for one living pull request (one deterministic branch and its `@2`… copies):
 * the pull request it opened and the head commit it last wrote on each branch, the branch in use,
 * and the pull requests it already said it leaves alone.
 */
export interface LivingRecord {
  /** The branch the living pull request is on now, when not the deterministic one. */
  at?: string;
  branches: Record<string, { pull?: number; head?: string; marker?: string }>;
  /** Pull requests on these branches Escalator leaves alone and already said so on. */
  noted: number[];
}

/** How long a living record is kept after its last write (it is rebuilt from GitHub when gone). */
const LIVING_TTL_SECONDS = 180 * 24 * 60 * 60;

/** What Escalator wrote for its living pull requests: see `src/jobs/shared/living-pull.ts`. */
export class LivingStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  #livingKey(key: { owner: string; repo: string }, branch: string): string {
    return `${this.prefix}:living:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${branch}`;
  }

  async loadLiving(key: { owner: string; repo: string }, branch: string): Promise<LivingRecord> {
    const fields = await this.redis.hgetall(this.#livingKey(key, branch));
    const record: LivingRecord = { branches: {}, noted: [] };
    for (const [field, value] of Object.entries(fields)) {
      if (field === 'at') record.at = value;
      else if (field.startsWith('noted|')) record.noted.push(Number(field.slice(6)));
      else if (field.startsWith('pull|')) (record.branches[field.slice(5)] ??= {}).pull = Number(value);
      else if (field.startsWith('head|')) (record.branches[field.slice(5)] ??= {}).head = value;
      else if (field.startsWith('marker|')) (record.branches[field.slice(7)] ??= {}).marker = value;
    }
    return record;
  }

  /**
   * Record the head Escalator wrote on `branch` (its commit, or the commit a new branch starts at),
   * the pull request it opened there, the marker it last wrote in that pull request's body (people
   * with write access can edit the body), and that `branch` is in use.
   */
  async recordLiving(
    key: { owner: string; repo: string },
    base: string,
    branch: string,
    entry: { head?: string; pull?: number; marker?: string },
  ): Promise<void> {
    const redisKey = this.#livingKey(key, base);
    const fields: Record<string, string> = { at: branch };
    if (entry.head) fields[`head|${branch}`] = entry.head;
    if (entry.pull !== undefined) fields[`pull|${branch}`] = String(entry.pull);
    if (entry.marker !== undefined) fields[`marker|${branch}`] = entry.marker;
    await this.redis.multi().hset(redisKey, fields).expire(redisKey, LIVING_TTL_SECONDS).exec();
  }

  /**
   * Forget what Escalator wrote on `branch` once its pull request `number` there was merged or
   * closed (nothing when the record names another pull request). The next run then takes the branch
   * as unknown: it creates it (GitHub deleted it with the pull request) or, when GitHub answers that
   * it exists, reads it and judges its head through GitHub before reusing it.
   */
  async forgetClosed(
    key: { owner: string; repo: string },
    base: string,
    branch: string,
    number: number,
  ): Promise<void> {
    const redisKey = this.#livingKey(key, base);
    const [pull, at] = await this.redis.hmget(redisKey, `pull|${branch}`, 'at');
    if (pull !== String(number)) return;
    const fields = [`pull|${branch}`, `head|${branch}`, `marker|${branch}`, ...(at === branch ? ['at'] : [])];
    await this.redis.hdel(redisKey, ...fields);
  }

  /** Remember that Escalator said on pull request `number` that it leaves it alone. */
  async recordNoted(key: { owner: string; repo: string }, base: string, number: number): Promise<void> {
    const redisKey = this.#livingKey(key, base);
    await this.redis.multi().hset(redisKey, `noted|${number}`, '1').expire(redisKey, LIVING_TTL_SECONDS).exec();
  }
}
