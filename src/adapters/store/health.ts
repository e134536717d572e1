import type { Redis } from 'ioredis';
import type { AppHealth } from '../../planners/health.js';
import type { RepoKey } from './subscriptions.js';

/**
 * The recorded health of each (repository, environment, app): the fold of the agents' reports,
 * one hash per repository, one field per `environment|app`.
 *
 * Stand-in on the gating branch: only `load`, the API the health gate reads. The branch that takes
 * reports in ships the full store (same keys; `record` folds a report), which replaces this file.
 */
export class HealthStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  /** What is recorded for the app in the environment, if any agent reported on it. */
  async load(key: Pick<RepoKey, 'owner' | 'repo'>, environment: string, app: string): Promise<AppHealth | undefined> {
    const text = await this.redis.hget(
      `${this.prefix}:health:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}`,
      `${environment}|${app}`,
    );
    return text ? (JSON.parse(text) as AppHealth) : undefined;
  }
}
