import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { SourceTree } from './source-tree.js';

/** A commit's files on disk, for tools that read directories (kustomize, helm). */
export interface Checkout {
  dir: string;
  /** Symbolic links that pointed outside the checkout; they were removed and renders that need them fail. */
  refusedSymlinks: string[];
  /** Whether this call wrote the checkout (false: it was in the cache already). */
  materialized: boolean;
}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !rel.startsWith(sep));
}

/** Remove links that resolve (directly or through other links) outside `root`. */
function refuseEscapingSymlinks(root: string): string[] {
  const refused: string[] = [];
  const realRoot = realpathSync(root);
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isSymbolicLink()) {
        let target: string;
        try {
          target = realpathSync(path);
        } catch {
          target = resolve(dirname(path), readlinkSync(path)); // dangling: judge the text of the link
        }
        if (!isInside(realRoot, target) && !isInside(root, target)) {
          unlinkSync(path);
          refused.push(relative(root, path).split(sep).join('/'));
        }
      } else if (entry.isDirectory()) walk(path);
    }
  };
  walk(root);
  return refused;
}

async function writeTree(tree: SourceTree, dir: string): Promise<void> {
  if (tree.writeTo) return tree.writeTo(dir);
  for (const path of tree.listFiles()) {
    const target = join(dir, path);
    if (!isInside(dir, target)) continue;
    mkdirSync(dirname(target), { recursive: true });
    if (tree.isSymlink?.(path)) symlinkSync(tree.read(path).toString('utf8'), target);
    else writeFileSync(target, tree.read(path));
  }
}

let sequence = 0;

/**
 * Materialize a commit under `<cacheRoot>/checkouts/<sha>` unless it is there already (a second run
 * on the same SHA writes and fetches nothing). Written to a temporary directory and renamed, so a
 * crash or a concurrent run never leaves a half checkout behind.
 */
export async function materializeCheckout(tree: SourceTree, cacheRoot: string): Promise<Checkout> {
  const root = join(cacheRoot, 'checkouts');
  const dir = join(root, tree.sha);
  const meta = `${dir}.json`;
  if (existsSync(meta) && existsSync(dir)) {
    const { refusedSymlinks } = JSON.parse(readFileSync(meta, 'utf8')) as { refusedSymlinks: string[] };
    return { dir, refusedSymlinks, materialized: false };
  }
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const temporary = join(root, `${tree.sha}.tmp-${process.pid}-${sequence++}`);
  mkdirSync(temporary, { mode: 0o700 });
  try {
    await writeTree(tree, temporary);
    const refusedSymlinks = refuseEscapingSymlinks(temporary);
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(temporary, dir);
    } catch (error) {
      if (!existsSync(dir)) throw error; // another run won the race: use its checkout
    }
    writeFileSync(meta, JSON.stringify({ refusedSymlinks }));
    return { dir, refusedSymlinks, materialized: true };
  } finally {
    if (existsSync(temporary)) rmSync(temporary, { recursive: true, force: true });
  }
}

/** Is a path (relative to the checkout) a symlink? Used to double-check inputs before a render. */
export function isSymlinkIn(checkout: Checkout, path: string): boolean {
  try {
    return lstatSync(join(checkout.dir, path)).isSymbolicLink();
  } catch {
    return false;
  }
}
