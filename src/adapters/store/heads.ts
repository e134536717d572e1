import type { Redis } from 'ioredis';

/** How many heads of one repository's default branch are kept: weeks of merges for a busy repository. */
export const KEPT_HEADS = 2_000;

/**
 * The commits each repository's default branch has pointed at, as GitHub's push events and the
 * index saw them: its line of merges (the first-parent history the agents sync), never a side
 * branch's or a fork's commit. A report posted on GitHub counts only about one of these
 * (docs/health.md, "Who may speak for an environment").
 */
export class HeadStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  #key(owner: string, repo: string): string {
    return `${this.prefix}:heads:${owner.toLowerCase()}/${repo.toLowerCase()}`;
  }

  /** Records that the default branch pointed at `sha` at `at` (ms); keeps the newest {@link KEPT_HEADS}. */
  async record(owner: string, repo: string, sha: string, at: number): Promise<void> {
    const key = this.#key(owner, repo);
    await this.redis
      .multi()
      .zadd(key, 'NX', at, sha.toLowerCase())
      .zremrangebyrank(key, 0, -KEPT_HEADS - 1)
      .exec();
  }

  /** Whether the default branch ever pointed at `sha` (as far as the kept heads go). */
  async has(owner: string, repo: string, sha: string): Promise<boolean> {
    return (await this.redis.zscore(this.#key(owner, repo), sha.toLowerCase())) !== null;
  }

  /** When `sha` was first recorded as the default branch's head (ms), or null when it was not. */
  async recordedAt(owner: string, repo: string, sha: string): Promise<number | null> {
    const score = await this.redis.zscore(this.#key(owner, repo), sha.toLowerCase());
    return score === null ? null : Number(score);
  }

  /**
   * Whether the default branch ever pointed at `sha`: recorded from its push events (and the
   * index), else — a report may overtake the push's delivery — its head now (`headNow`, asked
   * once), recorded at `at` when it is `sha`.
   */
  async pointedAt(
    owner: string,
    repo: string,
    sha: string,
    headNow: () => Promise<string>,
    at: number,
  ): Promise<boolean> {
    if (await this.has(owner, repo, sha)) return true;
    if ((await headNow()).toLowerCase() !== sha.toLowerCase()) return false;
    await this.record(owner, repo, sha, at);
    return true;
  }

  async drop(owner: string, repo: string): Promise<void> {
    await this.redis.del(this.#key(owner, repo));
  }
}
