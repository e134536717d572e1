import type { Redis } from 'ioredis';
import type { DashboardAttention, DashboardPull } from '../../planners/dashboard.js';
import type { RepoKey } from './subscriptions.js';

/**
 * What the dashboard issue shows that GitHub does not hold in one place: the gates each open
 * promotion last got, what needs a person (refused files, jobs that failed for good), and the
 * issue itself with the hash of the body last written (no edit when the new body hashes the same).
 */
export class DashboardStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  #key(key: RepoKey, kind: string): string {
    return `${this.prefix}:dashboard-${kind}:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}`;
  }

  /** The gates a promotion pull request got, by its branch; `null` forgets it. Kept 30 days. */
  async recordPull(key: RepoKey, branch: string, pull: DashboardPull | null): Promise<void> {
    const redisKey = this.#key(key, 'pulls');
    if (pull === null) await this.redis.hdel(redisKey, branch);
    else
      await this.redis
        .multi()
        .hset(redisKey, branch, JSON.stringify(pull))
        .expire(redisKey, 30 * 86_400)
        .exec();
  }

  async loadPulls(key: RepoKey): Promise<Map<string, DashboardPull>> {
    const fields = await this.redis.hgetall(this.#key(key, 'pulls'));
    return new Map(Object.entries(fields).map(([branch, text]) => [branch, JSON.parse(text) as DashboardPull]));
  }

  /** Something a person must settle, under a stable id (`promote:prod:hello`); `null` clears it. */
  async recordAttention(key: RepoKey, id: string, attention: DashboardAttention | null): Promise<boolean> {
    const redisKey = this.#key(key, 'attention');
    if (attention === null) return (await this.redis.hdel(redisKey, id)) > 0;
    const text = JSON.stringify(attention);
    const before = await this.redis.hget(redisKey, id);
    if (before !== null && (JSON.parse(before) as DashboardAttention).reason === attention.reason) return false;
    await this.redis
      .multi()
      .hset(redisKey, id, text)
      .expire(redisKey, 30 * 86_400)
      .exec();
    return true;
  }

  async loadAttention(key: RepoKey): Promise<DashboardAttention[]> {
    const fields = await this.redis.hgetall(this.#key(key, 'attention'));
    return Object.keys(fields)
      .sort()
      .map((id) => JSON.parse(fields[id]!) as DashboardAttention);
  }

  /** The dashboard issue of the repository and the hash of the body last written to it. */
  async loadIssue(key: RepoKey): Promise<{ number: number; hash: string } | null> {
    const text = await this.redis.get(this.#key(key, 'issue'));
    return text ? (JSON.parse(text) as { number: number; hash: string }) : null;
  }

  async saveIssue(key: RepoKey, issue: { number: number; hash: string }): Promise<void> {
    await this.redis.set(this.#key(key, 'issue'), JSON.stringify(issue));
  }
}
