import type { Redis } from 'ioredis';
import type { RepoKey } from './subscriptions.js';

/** An image waiting to be bumped into one target. */
export interface Candidate {
  repository: string;
  tag: string;
  digest?: string;
  receivedAt: string;
  deliveryId: string;
  /** Where the image was built from, when its sender said (CI API `source`, `revision`). */
  sourceUrl?: string;
  revision?: string;
}

/** Images waiting to be bumped into each target, until a bump job has written them. */
export class CandidateStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  #candidateKey(key: RepoKey, environment: string, app: string): string {
    return `${this.prefix}:candidates:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}:${app}`;
  }

  /** Keep an image for a target until a bump job has written it. The field is unique per content. */
  async addCandidate(key: RepoKey, environment: string, app: string, candidate: Candidate): Promise<void> {
    const field = `${candidate.repository}|${candidate.tag}|${candidate.digest ?? ''}`;
    await this.redis.hset(this.#candidateKey(key, environment, app), field, JSON.stringify(candidate));
  }

  async loadCandidates(key: RepoKey, environment: string, app: string): Promise<Array<Candidate & { field: string }>> {
    const entries = await this.redis.hgetall(this.#candidateKey(key, environment, app));
    return Object.entries(entries).map(([field, value]) => ({ ...(JSON.parse(value) as Candidate), field }));
  }

  /** Forget the candidates a bump handled; ones that arrived meanwhile stay for the next job. */
  async removeCandidates(key: RepoKey, environment: string, app: string, fields: string[]): Promise<void> {
    if (fields.length > 0) await this.redis.hdel(this.#candidateKey(key, environment, app), ...fields);
  }
}
