import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** Texts larger than this are not kept: such a file is read from GitHub each time. */
export const MAX_BLOB_BYTES = 256 * 1024;
/** A text not stored again within this time is dropped (an unchanged file is read once a day at most). */
export const BLOB_TTL_SECONDS = 24 * 60 * 60;

/** Git's object id of a file's bytes: `sha1("blob <size>\0" + bytes)`. */
export function gitBlobSha(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/**
 * File texts by git blob SHA, per installation. A blob never changes, so a file the index read at a
 * commit is read again from here, with no GitHub call, by every job planning against that commit.
 * Every text is checked against its SHA when stored and when read: a wrong or damaged entry is
 * never used, it is read from GitHub again. Bounded by entry size and a TTL; keys are per
 * installation, so one installation never reads another's files.
 */
export class BlobStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  #key(installationId: number, sha: string): string {
    return `${this.prefix}:blob:${installationId}:${sha}`;
  }

  async get(installationId: number, sha: string): Promise<string | undefined> {
    const text = await this.redis.get(this.#key(installationId, sha));
    return text !== null && gitBlobSha(text) === sha ? text : undefined;
  }

  /** Keep `text` as blob `sha` when it is that blob and small enough; anything else is ignored. */
  async set(installationId: number, sha: string, text: string): Promise<void> {
    if (Buffer.byteLength(text) > MAX_BLOB_BYTES || gitBlobSha(text) !== sha) return;
    await this.redis.set(this.#key(installationId, sha), text, 'EX', BLOB_TTL_SECONDS);
  }
}
