import type { Redis } from 'ioredis';
import type { RepoKey } from './subscriptions.js';

/** Holds put by `/escalator hold`, per environment and app. */
export class HoldStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  /** `/escalator hold [app]`: promotion into the environment (or one app) is frozen. */
  async setHold(key: RepoKey, environment: string, app: string, by: string | null): Promise<void> {
    const redisKey = `${this.prefix}:hold:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}`;
    if (by === null) await this.redis.hdel(redisKey, app || '*');
    else await this.redis.hset(redisKey, app || '*', by);
  }

  async loadHold(key: RepoKey, environment: string, app: string): Promise<string | null> {
    const holds = await this.redis.hgetall(
      `${this.prefix}:hold:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}`,
    );
    return holds['*'] ?? (app ? (holds[app] ?? null) : (Object.values(holds)[0] ?? null));
  }
}
