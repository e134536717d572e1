import type { Octokit } from '../../adapters/github/client.js';
import { loadFile, type RepoId } from '../../adapters/github/repo.js';
import { ConfigError } from '../../observability/errors.js';
import { kustomizationPaths, kustomizationRefs } from '../../planners/image-edit/index.js';

/** At most this many files are read to follow one environment's kustomizations to their bases. */
export const MAX_RENDERED_FILES = 200;

/**
 * The files the kustomizations among `roots` reach (resources, bases, components, patches), read
 * at `sha`, for `environments[].addImages` to know which images they render. Files already in
 * `roots` are not read again. A path that is not a file is read as a directory's kustomization.
 * Files that cannot be read (missing, not UTF-8, too large) are left out: what they render is
 * then unknown, and no entry is added for it.
 *
 * 1. queue the references of every kustomization among the roots
 * 2. read each reference as a file, else as a directory's kustomization; queue its references
 * 3. stop at {@link MAX_RENDERED_FILES} files
 */
export async function loadRenderedFiles(
  octokit: Octokit,
  id: RepoId,
  sha: string,
  roots: ReadonlyArray<{ path: string; text: string }>,
): Promise<Array<{ path: string; text: string }>> {
  const known = new Set(roots.map((file) => file.path));
  const found: Array<{ path: string; text: string }> = [];
  const queue = roots.flatMap((file) => kustomizationRefs(file.path, file.text));
  const tried = new Set<string>();
  const read = async (path: string): Promise<string | null> => {
    if (tried.has(path) || found.length >= MAX_RENDERED_FILES) return null;
    tried.add(path);
    try {
      return await loadFile(octokit, id, path, sha);
    } catch (error) {
      if (error instanceof ConfigError) return null;
      throw error;
    }
  };
  while (queue.length > 0 && found.length < MAX_RENDERED_FILES) {
    const target = queue.shift() as string;
    if (known.has(target) || kustomizationPaths(target).some((path) => known.has(path))) continue;
    known.add(target);
    let path = target;
    let text = /\.ya?ml$/i.test(target) ? await read(target) : null;
    if (text === null)
      for (const candidate of kustomizationPaths(target)) {
        text = await read(candidate);
        if (text !== null) {
          path = candidate;
          break;
        }
      }
    if (text === null) continue;
    known.add(path);
    found.push({ path, text });
    queue.push(...kustomizationRefs(path, text));
  }
  return found;
}
