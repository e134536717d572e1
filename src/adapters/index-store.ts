import type { Redis } from 'ioredis';
import type { ConfigProblem } from '../config/repo-config.js';
import type { RepoConfig } from '../config/repo-config.schema.js';

/**
 * The subscription index: which repositories use which images, kept in Redis and rebuilt from
 * GitHub when lost. A registry event for an image nobody tracks costs one SMEMBERS.
 */
export interface IndexedFile {
  environment: string;
  app: string;
  path: string;
  /** Normalized names of the images the file references. */
  images: string[];
  /** The version of each image the file sets (first use per image). */
  versions: Array<{ name: string; tag: string; digest?: string }>;
}

export interface RepoIndex {
  installationId: number;
  owner: string;
  repo: string;
  defaultBranch: string;
  /** The commit the index was built from. */
  sha: string;
  config: RepoConfig | null;
  problems: ConfigProblem[];
  files: IndexedFile[];
  /**
   * The blob SHA of every environment file read cleanly, and the image reader that read them: a
   * later index takes an unchanged blob's images from `files` instead of reading the file again.
   */
  blobs?: { reader: number; shas: Record<string, string> };
}

export interface RepoKey {
  installationId: number;
  owner: string;
  repo: string;
}

/** An image waiting to be bumped into one target. */
export interface Candidate {
  repository: string;
  tag: string;
  digest?: string;
  receivedAt: string;
  deliveryId: string;
}

/**
 * What Escalator wrote for one living pull request (one deterministic branch and its `@2`… copies):
 * the pull request it opened and the head commit it last wrote on each branch, the branch in use,
 * and the pull requests it already said it leaves alone.
 */
export interface LivingRecord {
  /** The branch the living pull request is on now, when not the deterministic one. */
  at?: string;
  branches: Record<string, { pull?: number; head?: string; marker?: string }>;
  /** Pull requests on these branches Escalator leaves alone and already said so on. */
  noted: number[];
}

/** How long a living record is kept after its last write (it is rebuilt from GitHub when gone). */
const LIVING_TTL_SECONDS = 180 * 24 * 60 * 60;

export class IndexStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  #repoKey(owner: string, repo: string): string {
    return `${this.prefix}:index:repo:${owner.toLowerCase()}/${repo.toLowerCase()}`;
  }
  #imageKey(name: string): string {
    return `${this.prefix}:index:image:${name}`;
  }
  #member(key: RepoKey): string {
    return `${key.installationId}|${key.owner}/${key.repo}`;
  }

  async loadRepo(owner: string, repo: string): Promise<RepoIndex | null> {
    const text = await this.redis.get(this.#repoKey(owner, repo));
    return text ? (JSON.parse(text) as RepoIndex) : null;
  }

  /** Replace a repository's entry and its image memberships in one MULTI. */
  async saveRepo(index: RepoIndex): Promise<void> {
    const previous = await this.loadRepo(index.owner, index.repo);
    const before = new Set(previous?.files.flatMap((file) => file.images) ?? []);
    const after = new Set(index.files.flatMap((file) => file.images));
    const member = this.#member(index);
    const multi = this.redis
      .multi()
      .set(this.#repoKey(index.owner, index.repo), JSON.stringify(index))
      .sadd(`${this.prefix}:index:repos`, member);
    for (const name of before) if (!after.has(name)) multi.srem(this.#imageKey(name), member);
    for (const name of after) multi.sadd(this.#imageKey(name), member);
    await multi.exec();
  }

  async dropRepo(key: RepoKey): Promise<void> {
    const previous = await this.loadRepo(key.owner, key.repo);
    const member = this.#member(key);
    const multi = this.redis.multi().del(this.#repoKey(key.owner, key.repo)).srem(`${this.prefix}:index:repos`, member);
    for (const name of new Set(previous?.files.flatMap((file) => file.images) ?? []))
      multi.srem(this.#imageKey(name), member);
    await multi.exec();
  }

  async reposUsing(imageName: string): Promise<RepoKey[]> {
    const members = await this.redis.smembers(this.#imageKey(imageName));
    return members.map((member) => {
      const [installationId, fullName] = member.split('|') as [string, string];
      const [owner, repo] = fullName.split('/') as [string, string];
      return { installationId: Number(installationId), owner, repo };
    });
  }

  /** Set once a full resync finished; its absence means Redis lost the index. */
  async isBuilt(): Promise<boolean> {
    return (await this.redis.exists(`${this.prefix}:index:built`)) === 1;
  }
  async markBuilt(): Promise<void> {
    await this.redis.set(`${this.prefix}:index:built`, new Date().toISOString());
  }

  /** When a version was first seen running in an environment (for soak gates); set once. */
  async recordSeen(key: RepoKey, environment: string, app: string, version: string, at: string): Promise<string> {
    const redisKey = `${this.prefix}:seen:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}:${app}:${version}`;
    await this.redis.set(redisKey, at, 'NX');
    return (await this.redis.get(redisKey)) ?? at;
  }

  async loadSeen(key: RepoKey, environment: string, app: string, version: string): Promise<string | null> {
    return this.redis.get(
      `${this.prefix}:seen:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}:${app}:${version}`,
    );
  }

  /** The versions an (environment, app) ran, newest first, for rollbacks. */
  async pushHistory(
    key: RepoKey,
    environment: string,
    app: string,
    entry: { at: string; sha: string; versions: IndexedFile['versions'] },
  ): Promise<void> {
    const redisKey = `${this.prefix}:history:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}:${app}`;
    await this.redis.multi().lpush(redisKey, JSON.stringify(entry)).ltrim(redisKey, 0, 49).exec();
  }

  async loadHistory(
    key: RepoKey,
    environment: string,
    app: string,
  ): Promise<Array<{ at: string; sha: string; versions: IndexedFile['versions'] }>> {
    const entries = await this.redis.lrange(
      `${this.prefix}:history:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}:${app}`,
      0,
      -1,
    );
    return entries.map((entry) => JSON.parse(entry) as { at: string; sha: string; versions: IndexedFile['versions'] });
  }

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

  /** `/escalator hold [app]`: promotion into the environment (or one app) is frozen. */
  async setHold(key: RepoKey, environment: string, app: string, by: string | null): Promise<void> {
    const redisKey = `${this.prefix}:hold:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}`;
    if (by === null) await this.redis.hdel(redisKey, app || '*');
    else await this.redis.hset(redisKey, app || '*', by);
  }

  async loadHold(key: RepoKey, environment: string, app: string): Promise<string | null> {
    const holds = await this.redis.hgetall(
      `${this.prefix}:hold:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${environment}`,
    );
    return holds['*'] ?? (app ? (holds[app] ?? null) : (Object.values(holds)[0] ?? null));
  }

  /**
   * True the first time within `ttlMs` that `author` is refused on this issue or pull request:
   * a refusal is said once, so commenting again cannot make the bot comment again.
   */
  async firstRefusal(
    key: { owner: string; repo: string },
    issue: number,
    author: string,
    ttlMs: number,
  ): Promise<boolean> {
    const redisKey = `${this.prefix}:refused:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}#${issue}:${author.toLowerCase()}`;
    return (await this.redis.set(redisKey, '1', 'PX', ttlMs, 'NX')) === 'OK';
  }

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

  #livingKey(key: { owner: string; repo: string }, branch: string): string {
    return `${this.prefix}:living:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${branch}`;
  }

  async loadLiving(key: { owner: string; repo: string }, branch: string): Promise<LivingRecord> {
    const fields = await this.redis.hgetall(this.#livingKey(key, branch));
    const record: LivingRecord = { branches: {}, noted: [] };
    for (const [field, value] of Object.entries(fields)) {
      if (field === 'at') record.at = value;
      else if (field.startsWith('noted|')) record.noted.push(Number(field.slice(6)));
      else if (field.startsWith('pull|')) (record.branches[field.slice(5)] ??= {}).pull = Number(value);
      else if (field.startsWith('head|')) (record.branches[field.slice(5)] ??= {}).head = value;
      else if (field.startsWith('marker|')) (record.branches[field.slice(7)] ??= {}).marker = value;
    }
    return record;
  }

  /**
   * Record a commit Escalator wrote for `branch` (before the ref moves to it, so a crash between the
   * two leaves nothing unrecorded), the pull request it opened there, the marker it last wrote in
   * that pull request's body (people with write access can edit the body), and that `branch` is in use.
   */
  async recordLiving(
    key: { owner: string; repo: string },
    base: string,
    branch: string,
    entry: { head?: string; pull?: number; marker?: string },
  ): Promise<void> {
    const redisKey = this.#livingKey(key, base);
    const fields: Record<string, string> = { at: branch };
    if (entry.head) fields[`head|${branch}`] = entry.head;
    if (entry.pull !== undefined) fields[`pull|${branch}`] = String(entry.pull);
    if (entry.marker !== undefined) fields[`marker|${branch}`] = entry.marker;
    await this.redis.multi().hset(redisKey, fields).expire(redisKey, LIVING_TTL_SECONDS).exec();
  }

  /** Remember that Escalator said on pull request `number` that it leaves it alone. */
  async recordNoted(key: { owner: string; repo: string }, base: string, number: number): Promise<void> {
    const redisKey = this.#livingKey(key, base);
    await this.redis.multi().hset(redisKey, `noted|${number}`, '1').expire(redisKey, LIVING_TTL_SECONDS).exec();
  }
}
