import type { Redis } from 'ioredis';
import type { RequiredChecks } from '../github/gates.js';

/**
 * How long a branch's required checks are taken as read. GitHub tells Apps of protection and
 * ruleset changes only with Administration read, which Escalator does not ask for, so a change is
 * seen within this time; GitHub itself enforces the protection on every merge meanwhile.
 */
export const REQUIRED_CHECKS_TTL_SECONDS = 120;

/** The checks GitHub requires on a branch, as last read in full, shared by the workers for a short while. */
export class RequiredChecksStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  #key(key: { installationId: number; owner: string; repo: string }, branch: string): string {
    return `${this.prefix}:required:${key.installationId}:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${branch}`;
  }

  async get(
    key: { installationId: number; owner: string; repo: string },
    branch: string,
  ): Promise<RequiredChecks | null> {
    const text = await this.redis.get(this.#key(key, branch));
    return text === null ? null : (JSON.parse(text) as RequiredChecks);
  }

  /** Kept only when both sources were read: a reading GitHub refused is asked again next time. */
  async set(
    key: { installationId: number; owner: string; repo: string },
    branch: string,
    checks: RequiredChecks,
  ): Promise<void> {
    if (!checks.readable) return;
    await this.redis.set(this.#key(key, branch), JSON.stringify(checks), 'EX', REQUIRED_CHECKS_TTL_SECONDS);
  }
}
