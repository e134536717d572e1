import { loadFile } from '../../adapters/github/repo.js';
import type { Octokit } from '../../adapters/github/client.js';
import type { BlobStore } from '../../adapters/store/blobs.js';
import type { RepoIndex } from '../../adapters/store/subscriptions.js';
import type { EnvFile } from '../../planners/promotion-plan.js';

/** Where a job reads a repository's files: GitHub through the installation, and the blobs its index saw. */
export interface FileSource {
  octokit: Octokit;
  index: RepoIndex;
  blobs: BlobStore;
}

/**
 * The files of `paths` at commit `sha` (those that exist). At the commit the index was built from,
 * a file whose blob the index recorded is read from the blob store, with no GitHub call; anything
 * else is read from GitHub, and kept by its blob SHA when the index names it.
 */
export async function loadFilesAt(source: FileSource, paths: readonly string[], sha: string): Promise<EnvFile[]> {
  const { octokit, index, blobs } = source;
  const known = sha === index.sha ? (index.blobs?.shas ?? {}) : {};
  const files: EnvFile[] = [];
  for (const path of paths) {
    const blob = Object.hasOwn(known, path) ? known[path] : undefined;
    let text = blob ? await blobs.get(index.installationId, blob) : undefined;
    if (text === undefined) {
      const read = await loadFile(octokit, { owner: index.owner, repo: index.repo }, path, sha);
      if (read === null) continue;
      if (blob) await blobs.set(index.installationId, blob, read);
      text = read;
    }
    files.push({ path, text });
  }
  return files;
}
