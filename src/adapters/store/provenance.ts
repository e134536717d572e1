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

  /**
   * The same chain, kept by the merge commit that brought the versions (the commit an
   * environment's history records): a rollback says which change last brought the versions it
   * goes back to. Kept 90 days.
   */
  async saveProvenanceAt(
    key: RepoKey,
    environment: string,
    app: string,
    sha: string,
    sources: string[],
  ): Promise<void> {
    await this.redis.set(
      `${this.prefix}:provenance-at:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}:${app}:${sha}`,
      JSON.stringify(sources.slice(-10)),
      'EX',
      90 * 86_400,
    );
  }

  /**
   * What a merged pull request of Escalator's brought an (environment, app): its chain, kept for
   * the next hop and, when GitHub names the merge commit, by that commit too.
   */
  async recordMerge(
    key: RepoKey,
    environment: string,
    app: string,
    sources: string[],
    mergeCommitSha: string | undefined,
  ): Promise<void> {
    await this.saveProvenance(key, environment, app, sources);
    if (mergeCommitSha !== undefined) await this.saveProvenanceAt(key, environment, app, mergeCommitSha, sources);
  }

  async loadProvenanceAt(key: RepoKey, environment: string, app: string, sha: string): Promise<string[]> {
    const text = await this.redis.get(
      `${this.prefix}:provenance-at:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}:${app}:${sha}`,
    );
    return text ? (JSON.parse(text) as string[]) : [];
  }

  async loadProvenance(key: RepoKey, environment: string, app: string): Promise<string[]> {
    const text = await this.redis.get(
      `${this.prefix}:provenance:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}:${app}`,
    );
    return text ? (JSON.parse(text) as string[]) : [];
  }
}
