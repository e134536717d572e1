import type { Redis } from 'ioredis';
import type { Freeze } from '../../planners/freeze.js';
import type { RepoKey } from './subscriptions.js';

/** Delete each named scope whose stored freeze still has the given author and time; the scopes deleted. */
const LIFT = `
local lifted = {}
for i = 1, #ARGV, 3 do
  local text = redis.call('HGET', KEYS[1], ARGV[i])
  if text then
    local ok, freeze = pcall(cjson.decode, text)
    if ok and type(freeze) == 'table' and freeze.by == ARGV[i + 1] and freeze.at == ARGV[i + 2] then
      redis.call('HDEL', KEYS[1], ARGV[i])
      table.insert(lifted, ARGV[i])
    end
  end
end
return lifted
`;

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

  /**
   * Lift these freezes, each only if it is still the one read (same scope, author and time): a
   * freeze set again in between by someone else is not lifted on a decision made about the old
   * one. Returns the freezes lifted.
   */
  async liftFreezes(key: RepoKey, freezes: readonly Freeze[]): Promise<Freeze[]> {
    if (freezes.length === 0) return [];
    const args = freezes.flatMap((f) => [f.scope, f.by, f.at]);
    const lifted = (await this.redis.eval(LIFT, 1, this.#key(key), ...args)) as string[];
    return freezes.filter((f) => lifted.includes(f.scope));
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
