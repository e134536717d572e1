import type { Redis } from 'ioredis';
import type { AppHealth } from '../../planners/health.js';
import type { RepoKey } from './subscriptions.js';

/**
 * The recorded health of each (repository, environment, app): the fold of the agents' reports.
 *
 * Minimal stand-in on the gating branch so the promotion job and its tests run: `load` is the API
 * the gate reads; the branch that takes reports in ships the real store (folding reports into
 * `AppHealth`), which replaces this file when both merge.
 */
export class HealthStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  private key(key: RepoKey, environment: string, app: string): string {
    return `${this.prefix}:health:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}:${app}`;
  }

  async load(key: RepoKey, environment: string, app: string): Promise<AppHealth | undefined> {
    const text = await this.redis.get(this.key(key, environment, app));
    return text ? (JSON.parse(text) as AppHealth) : undefined;
  }

  /** Replace the recorded health of one app (the fold is the caller's). */
  async record(key: RepoKey, environment: string, app: string, health: AppHealth): Promise<void> {
    await this.redis.set(this.key(key, environment, app), JSON.stringify(health));
  }
}
