import type { Redis } from 'ioredis';
import type { RepoKey } from './subscriptions.js';

/** Where the versions of each (environment, app) came from: the pull requests that brought them. */
export class ProvenanceStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  /** Where the versions of an (environment, app) came from: the merged PRs, oldest first. */
  async saveProvenance(key: RepoKey, environment: string, app: string, sources: string[]): Promise<void> {
    await this.redis.set(
      `${this.prefix}:provenance:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}:${app}`,
      JSON.stringify(sources.slice(-10)),
    );
  }

  async loadProvenance(key: RepoKey, environment: string, app: string): Promise<string[]> {
    const text = await this.redis.get(
      `${this.prefix}:provenance:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}:${app}`,
    );
    return text ? (JSON.parse(text) as string[]) : [];
  }
}
