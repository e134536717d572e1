import type { Redis } from 'ioredis';
import type { IndexedFile, RepoKey } from './subscriptions.js';

/** What each (environment, app) ran: when each version was first seen (soak) and the history of versions (rollback). */
export class VersionStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  /** When a version was first seen running in an environment (for soak gates); set once. */
  async recordSeen(key: RepoKey, environment: string, app: string, version: string, at: string): Promise<string> {
    const redisKey = `${this.prefix}:seen:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}:${app}:${version}`;
    await this.redis.set(redisKey, at, 'NX');
    return (await this.redis.get(redisKey)) ?? at;
  }

  async loadSeen(key: RepoKey, environment: string, app: string, version: string): Promise<string | null> {
    return this.redis.get(
      `${this.prefix}:seen:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}:${app}:${version}`,
    );
  }

  /** The versions an (environment, app) ran, newest first, for rollbacks. */
  async pushHistory(
    key: RepoKey,
    environment: string,
    app: string,
    entry: { at: string; sha: string; versions: IndexedFile['versions'] },
  ): Promise<void> {
    const redisKey = `${this.prefix}:history:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}:${app}`;
    await this.redis.multi().lpush(redisKey, JSON.stringify(entry)).ltrim(redisKey, 0, 49).exec();
  }

  async loadHistory(
    key: RepoKey,
    environment: string,
    app: string,
  ): Promise<Array<{ at: string; sha: string; versions: IndexedFile['versions'] }>> {
    const entries = await this.redis.lrange(
      `${this.prefix}:history:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}:${app}`,
      0,
      -1,
    );
    return entries.map((entry) => JSON.parse(entry) as { at: string; sha: string; versions: IndexedFile['versions'] });
  }
}
