import { loadFile, loadTree, type BranchHead } from '../../adapters/github/repo.js';
import type { Octokit } from '../../adapters/github/client.js';
import type { BlobStore } from '../../adapters/store/blobs.js';
import type { RepoIndex } from '../../adapters/store/subscriptions.js';
import type { EnvFile } from '../../planners/promotion-plan.js';

/** Where a job reads a repository's files: GitHub through the installation, and the blobs its index saw. */
export interface FileSource {
  octokit: Octokit;
  index: RepoIndex;
  blobs: BlobStore;
  /** Blob SHAs by path at one more commit than the index's, listed by `withTreeAt`. */
  tree?: { sha: string; blobs: ReadonlyMap<string, string> };
}

/**
 * The files of `paths` at commit `sha` (those that exist). At the commit the index was built from
 * (or the one `withTreeAt` listed), a file whose blob is named there is read from the blob store,
 * with no GitHub call, and so is one whose blob at `sha` the caller names (`named`: a waiting
 * configuration change's files before and after it); anything else is read from GitHub, and kept
 * by its blob SHA when it is named.
 */
export async function loadFilesAt(
  source: FileSource,
  paths: readonly string[],
  sha: string,
  named: Readonly<Record<string, string>> = {},
): Promise<EnvFile[]> {
  const { octokit, index, blobs } = source;
  const known = sha === index.sha ? (index.blobs?.shas ?? {}) : {};
  const listed = source.tree?.sha === sha ? source.tree.blobs : undefined;
  const files: EnvFile[] = [];
  for (const path of paths) {
    const blob = Object.hasOwn(known, path)
      ? known[path]
      : (listed?.get(path) ?? (Object.hasOwn(named, path) ? named[path] : undefined));
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

/**
 * `source`, also able to read `head` from the blob store when the index was built from another
 * commit: a promotion planned before the index caught up with the merge that caused it (a
 * configuration change's landing job enqueues it as the push's index job runs) lists `head`'s tree
 * once instead of reading each file of both environments at `head` from GitHub. At the index's own
 * commit, or for a head without its tree, `source` as it is. A listing GitHub refuses (a tree too
 * large for one answer) leaves the files to be read one by one, as before.
 */
export async function withTreeAt(source: FileSource, head: BranchHead): Promise<FileSource> {
  if (head.sha === source.index.sha || !head.treeSha || source.tree?.sha === head.sha) return source;
  const id = { owner: source.index.owner, repo: source.index.repo };
  try {
    return { ...source, tree: { sha: head.sha, blobs: await loadTree(source.octokit, id, head.treeSha) } };
  } catch {
    // Too large or refused: each file is read from GitHub, which says what failed if that fails too.
    return source;
  }
}
