import type { GitRepository, TreeEntry } from './git.js';

/** One change to a tree: set a path to an object, or delete it (`sha: null`). */
export interface TreeChange {
  path: string;
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  sha: string | null;
}

type Leaf = Pick<TreeEntry, 'mode' | 'type' | 'sha' | 'path'>;

/**
 * Applies `changes` on top of `baseTree` (or an empty tree) and writes every nested tree,
 * the way GitHub's `POST /git/trees` with `base_tree` does. Returns the new root tree SHA.
 */
export async function buildTree(git: GitRepository, baseTree: string | null, changes: TreeChange[]): Promise<string> {
  const leaves = new Map<string, Leaf>();
  if (baseTree) for (const leaf of await listLeaves(git, baseTree)) leaves.set(leaf.path, leaf);
  for (const change of changes) {
    const path = normalizePath(change.path);
    removeAt(leaves, path);
    if (change.sha === null) continue;
    if (change.type === 'tree') {
      for (const leaf of await listLeaves(git, change.sha))
        leaves.set(`${path}/${leaf.path}`, { ...leaf, path: `${path}/${leaf.path}` });
    } else {
      leaves.set(path, { mode: change.mode, type: change.type, sha: change.sha, path });
    }
  }
  return writeLevel(git, [...leaves.values()], '');
}

/** Strips leading and trailing slashes; rejects `.`/`..` segments like GitHub does. */
export function normalizePath(path: string): string {
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  if (trimmed === '' || trimmed.split('/').some((part) => part === '' || part === '.' || part === '..')) {
    throw new InvalidTreePathError(path);
  }
  return trimmed;
}

export class InvalidTreePathError extends Error {
  constructor(readonly path: string) {
    super(`tree.path "${path}" is not a valid path: use slash-separated names without "." or ".." segments`);
    this.name = 'InvalidTreePathError';
  }
}

async function listLeaves(git: GitRepository, tree: string): Promise<Leaf[]> {
  const entries = await git.lsTree(tree, { recursive: true });
  return entries.filter((entry) => entry.type !== 'tree');
}

/** Removes the path itself, anything below it, and any file that sits where one of its parents must be. */
function removeAt(leaves: Map<string, Leaf>, path: string): void {
  leaves.delete(path);
  for (const key of [...leaves.keys()]) if (key.startsWith(`${path}/`)) leaves.delete(key);
  const parts = path.split('/');
  for (let i = 1; i < parts.length; i++) leaves.delete(parts.slice(0, i).join('/'));
}

async function writeLevel(git: GitRepository, leaves: Leaf[], prefix: string): Promise<string> {
  const files: Leaf[] = [];
  const dirs = new Map<string, Leaf[]>();
  for (const leaf of leaves) {
    const rest = leaf.path.slice(prefix.length);
    const slash = rest.indexOf('/');
    if (slash === -1) {
      files.push({ ...leaf, path: rest });
    } else {
      const name = rest.slice(0, slash);
      dirs.set(name, [...(dirs.get(name) ?? []), leaf]);
    }
  }
  const entries: Leaf[] = [...files];
  for (const [name, children] of dirs) {
    const sha = await writeLevel(git, children, `${prefix}${name}/`);
    entries.push({ mode: '040000', type: 'tree', sha, path: name });
  }
  return git.mktree(entries);
}
