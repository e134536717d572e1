import type { Redis } from 'ioredis';
import type { RepoKey } from './subscriptions.js';

/** Holds put by `/escalator hold`, and soaks skipped by `/escalator promote --now`, per environment and app. */
export class HoldStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  /** `/escalator hold [app]`: promotion into the environment (or one app) is held. */
  async setHold(key: RepoKey, environment: string, app: string, by: string | null): Promise<void> {
    const redisKey = `${this.prefix}:hold:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}`;
    if (by === null) await this.redis.hdel(redisKey, app || '*');
    else await this.redis.hset(redisKey, app || '*', by);
  }

  /**
   * `/escalator promote <env> [app] --now`: the soak of exactly these versions is skipped, by whom.
   * A newer version soaks again. Kept 30 days.
   */
  async setSoakSkip(
    key: RepoKey,
    environment: string,
    app: string,
    skip: { by: string; versions: string[] },
  ): Promise<void> {
    await this.redis.set(this.#skipKey(key, environment, app), JSON.stringify(skip), 'EX', 30 * 86_400);
  }

  /** Who skipped the soak of `versions` into the environment, if someone did (for other versions: nobody). */
  async loadSoakSkip(key: RepoKey, environment: string, app: string, versions: string[]): Promise<string | null> {
    const text = await this.redis.get(this.#skipKey(key, environment, app));
    if (!text) return null;
    const skip = JSON.parse(text) as { by: string; versions: string[] };
    return skip.versions.length === versions.length && skip.versions.every((v, i) => v === versions[i])
      ? skip.by
      : null;
  }

  #skipKey(key: RepoKey, environment: string, app: string): string {
    return `${this.prefix}:soak-skip:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}:${app || '*'}`;
  }

  /** Every hold on an environment: app `''` for the whole environment, with who put it. */
  async listHolds(key: RepoKey, environment: string): Promise<Array<{ app: string; by: string }>> {
    const holds = await this.redis.hgetall(
      `${this.prefix}:hold:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}`,
    );
    return Object.entries(holds)
      .map(([app, by]) => ({ app: app === '*' ? '' : app, by }))
      .sort((a, b) => a.app.localeCompare(b.app));
  }

  async loadHold(key: RepoKey, environment: string, app: string): Promise<string | null> {
    const holds = await this.redis.hgetall(
      `${this.prefix}:hold:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}`,
    );
    return holds['*'] ?? (app ? (holds[app] ?? null) : (Object.values(holds)[0] ?? null));
  }
}
