import type { Redis } from 'ioredis';
import type { ConfigProblem } from '../../config/repo-config.js';
import type { RepoConfig } from '../../config/repo-config.schema.js';

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
  /**
   * What the indexed commit changed against its first parent, from the index's own read of the
   * head (kept only where an environment promotes configuration, and only when one page of that
   * answer listed every file): the landing job of the merge reads it here instead of asking
   * GitHub. `before`: the blob SHAs at the first parent of the changed files the previous index,
   * built from that parent, had read, so a promotion reads those texts from the blob store.
   */
  changes?: { parents: string[]; files: string[]; before: Record<string, string> };
}

export interface RepoKey {
  installationId: number;
  owner: string;
  repo: string;
}

/** The subscription index: one entry per repository, and per image the repositories that use it. */
export class SubscriptionStore {
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
}
