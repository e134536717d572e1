import type { Redis } from 'ioredis';
import type { Freeze } from '../../planners/freeze.js';
import type { RepoKey } from './subscriptions.js';

/**
 * Freezes put by `/escalator freeze`, per repository: one hash, a field per scope (`*` for the
 * whole repository, or an environment), each holding who froze, when, why and until when. A
 * freeze with an end is dropped from Redis a day after it ends; until then the planner ignores it
 * once `until` has passed, so an expired freeze never holds anything back.
 */
export class FreezeStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  #key(key: RepoKey): string {
    return `${this.prefix}:freeze:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}`;
  }

  /** Freeze a scope (replacing an earlier freeze of the same scope). */
  async setFreeze(key: RepoKey, freeze: Freeze): Promise<void> {
    await this.redis.hset(this.#key(key), freeze.scope, JSON.stringify(freeze));
  }

  /** Lift the freeze of one scope (`*`: the repository's); `all: true` lifts every one. Returns the freezes lifted. */
  async liftFreeze(key: RepoKey, scope: string, options: { all?: boolean } = {}): Promise<Freeze[]> {
    const freezes = await this.loadFreezes(key);
    const lifted = options.all ? freezes : freezes.filter((f) => f.scope === scope);
    if (lifted.length > 0) await this.redis.hdel(this.#key(key), ...lifted.map((f) => f.scope));
    return lifted;
  }

  /** Every freeze recorded on the repository; those that ended more than a day before `now` are deleted on the way. */
  async loadFreezes(key: RepoKey, now?: number): Promise<Freeze[]> {
    const fields = await this.redis.hgetall(this.#key(key));
    const freezes: Freeze[] = [];
    const stale: string[] = [];
    for (const [scope, text] of Object.entries(fields)) {
      let freeze: Freeze;
      try {
        freeze = { ...(JSON.parse(text) as Freeze), scope };
      } catch {
        stale.push(scope);
        continue;
      }
      if (now !== undefined && freeze.until && Date.parse(freeze.until) + 86_400_000 < now) stale.push(scope);
      else freezes.push(freeze);
    }
    if (stale.length > 0) await this.redis.hdel(this.#key(key), ...stale);
    return freezes.sort((a, b) => a.scope.localeCompare(b.scope));
  }
}
