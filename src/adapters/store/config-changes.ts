import type { Redis } from 'ioredis';
import type { ConfigChange } from '../../planners/config-carry.js';
import type { RepoKey } from './subscriptions.js';

/** At most this many waiting changes per repository: past it, the oldest are forgotten (and logged by the caller). */
export const MAX_WAITING_CHANGES = 500;

/** A waiting change as stored: the change, and whether Escalator said on its source PR that it cannot be promoted. */
export interface WaitingChange {
  target: string;
  app: string;
  change: ConfigChange;
  /** Set once Escalator commented on the source pull request that nothing of it can be promoted (kept or refused). */
  blocked?: { at: string; reason: string };
}

/**
 * Configuration changes waiting to be promoted, per target environment and app
 * (docs/configuration.md, "Promote configuration"): recorded when a change merges into the
 * source environment, carried by the promotion pull request, done when that pull request merges.
 * One hash per repository, a field per (target, app, change).
 */
export class ConfigChangeStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  #key(key: RepoKey): string {
    return `${this.prefix}:config-waiting:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}`;
  }

  #field(target: string, app: string, id: string): string {
    return JSON.stringify([target, app, id]);
  }

  /** Record a change waiting for (target, app); a redelivery of the same merge changes nothing. True when it is new. */
  async record(key: RepoKey, target: string, app: string, change: ConfigChange): Promise<boolean> {
    const waiting: WaitingChange = { target, app, change };
    const added = await this.redis.hsetnx(this.#key(key), this.#field(target, app, change.id), JSON.stringify(waiting));
    if (added === 1) await this.#bound(key);
    return added === 1;
  }

  /** Waiting changes, oldest landing first; narrowed to a target and to an app (`''`: every app of the target). */
  async list(key: RepoKey, target?: string, app?: string): Promise<WaitingChange[]> {
    const all = Object.values(await this.redis.hgetall(this.#key(key))).map(
      (text) => JSON.parse(text) as WaitingChange,
    );
    return all
      .filter((entry) => (target === undefined || entry.target === target) && (!app || entry.app === app))
      .sort(
        (a, b) =>
          a.change.landedAt.localeCompare(b.change.landedAt) ||
          a.change.id.localeCompare(b.change.id) ||
          a.app.localeCompare(b.app),
      );
  }

  /** The changes a merged promotion carried (or found already in place) are done for (target, app). */
  async done(key: RepoKey, target: string, app: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.redis.hdel(this.#key(key), ...ids.map((id) => this.#field(target, app, id)));
  }

  /** Note that the source PR was told this change cannot be promoted; true the first time (comment once). */
  async markBlocked(
    key: RepoKey,
    target: string,
    app: string,
    id: string,
    reason: string,
    at: string,
  ): Promise<boolean> {
    const field = this.#field(target, app, id);
    const text = await this.redis.hget(this.#key(key), field);
    if (!text) return false;
    const entry = JSON.parse(text) as WaitingChange;
    if (entry.blocked) return false;
    await this.redis.hset(this.#key(key), field, JSON.stringify({ ...entry, blocked: { at, reason } }));
    return true;
  }

  /** Keeps the newest {@link MAX_WAITING_CHANGES}. */
  async #bound(key: RepoKey): Promise<void> {
    if ((await this.redis.hlen(this.#key(key))) <= MAX_WAITING_CHANGES) return;
    const all = await this.list(key);
    const drop = all.slice(0, all.length - MAX_WAITING_CHANGES);
    if (drop.length > 0)
      await this.redis.hdel(
        this.#key(key),
        ...drop.map((entry) => this.#field(entry.target, entry.app, entry.change.id)),
      );
  }
}
