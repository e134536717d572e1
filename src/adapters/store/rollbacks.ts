import type { Redis } from 'ioredis';
import type { RollbackRecord } from '../../planners/rollback.js';
import type { RepoKey } from './subscriptions.js';

/**
 * The last rollback of each (environment, app) (`RollbackRecord`, src/planners/rollback.ts): what
 * it took out, what it went back to, why, and where it stands. What it holds back is decided by
 * the planner; this store only keeps it. Kept 90 days: a rollback older than that is history.
 */
export class RollbackStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  #key(key: RepoKey, environment: string, app: string): string {
    return `${this.prefix}:rollback:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}:${app}`;
  }

  async load(key: RepoKey, environment: string, app: string): Promise<RollbackRecord | undefined> {
    const text = await this.redis.get(this.#key(key, environment, app));
    return text ? (JSON.parse(text) as RollbackRecord) : undefined;
  }

  async save(key: RepoKey, record: RollbackRecord): Promise<void> {
    await this.redis.set(this.#key(key, record.environment, record.app), JSON.stringify(record), 'EX', 90 * 86_400);
  }

  /**
   * The record no longer holds (a person promoted, or the source runs other versions). Deleted
   * only when it is still the one read (`at`), so a rollback decided meanwhile is never lost.
   */
  async forget(key: RepoKey, record: Pick<RollbackRecord, 'environment' | 'app' | 'at'>): Promise<boolean> {
    const redisKey = this.#key(key, record.environment, record.app);
    const text = await this.redis.get(redisKey);
    if (!text || (JSON.parse(text) as RollbackRecord).at !== record.at) return false;
    await this.redis.del(redisKey);
    return true;
  }
}
