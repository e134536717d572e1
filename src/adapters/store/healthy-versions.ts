import type { Redis } from 'ioredis';
import type { IndexedFile, RepoKey } from './subscriptions.js';

/** Versions an (environment, app) ran healthy, newest first: what `rollback: auto` goes back to. */
export interface HealthyVersions {
  /** The commit where these versions landed in the environment. */
  sha: string;
  versions: IndexedFile['versions'];
  /** The last time the agent reported them synced and healthy (ISO). */
  until: string;
}

/** One GitHub Deployment Escalator created for a merge into an environment. */
export interface DeploymentRecord {
  id: number;
  sha: string;
  /** The last state Escalator set on it, so an unchanged state is not posted again. */
  state: string;
}

/**
 * What the health gate keeps besides the agents' reports: whether one commit contains another
 * (immutable, so cached for good), the versions each environment ran healthy (for rollbacks), and
 * the Deployments Escalator created (their statuses follow the reports).
 */
export class HealthGateStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  private repo(key: RepoKey): string {
    return `${key.owner.toLowerCase()}/${key.repo.toLowerCase()}`;
  }

  /** Whether `revision` contains `merge`, as the compare API answered once; null: not asked yet. */
  async loadContains(key: RepoKey, merge: string, revision: string): Promise<boolean | null> {
    const value = await this.redis.get(`${this.prefix}:contains:${this.repo(key)}:${merge}:${revision}`);
    return value === null ? null : value === '1';
  }

  async saveContains(key: RepoKey, merge: string, revision: string, contains: boolean): Promise<void> {
    await this.redis.set(
      `${this.prefix}:contains:${this.repo(key)}:${merge}:${revision}`,
      contains ? '1' : '0',
      'EX',
      30 * 86_400,
    );
  }

  /** Record that an (environment, app) runs `entry.versions` healthy; the same versions move to the top with a new `until`. */
  async recordHealthy(key: RepoKey, environment: string, app: string, entry: HealthyVersions): Promise<void> {
    const redisKey = `${this.prefix}:healthy:${this.repo(key)}:${environment}:${app}`;
    const list = await this.loadHealthy(key, environment, app);
    const same = JSON.stringify(entry.versions);
    const next = [entry, ...list.filter((item) => JSON.stringify(item.versions) !== same)].slice(0, 20);
    await this.redis.set(redisKey, JSON.stringify(next));
  }

  async loadHealthy(key: RepoKey, environment: string, app: string): Promise<HealthyVersions[]> {
    const text = await this.redis.get(`${this.prefix}:healthy:${this.repo(key)}:${environment}:${app}`);
    return text ? (JSON.parse(text) as HealthyVersions[]) : [];
  }

  /** The Deployments created for an (environment, app), newest first (the last 10). */
  async loadDeployments(key: RepoKey, environment: string, app: string): Promise<DeploymentRecord[]> {
    const text = await this.redis.get(`${this.prefix}:deployments:${this.repo(key)}:${environment}:${app}`);
    return text ? (JSON.parse(text) as DeploymentRecord[]) : [];
  }

  async saveDeployment(key: RepoKey, environment: string, app: string, record: DeploymentRecord): Promise<void> {
    const list = await this.loadDeployments(key, environment, app);
    // Newest first by id; a known one is updated where it stands.
    const next = [record, ...list.filter((item) => item.id !== record.id)].sort((a, b) => b.id - a.id).slice(0, 10);
    await this.redis.set(`${this.prefix}:deployments:${this.repo(key)}:${environment}:${app}`, JSON.stringify(next));
  }
}
