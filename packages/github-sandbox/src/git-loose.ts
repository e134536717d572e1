import { createHash, randomBytes } from 'node:crypto';
import { access, mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { deflate, constants as zlib } from 'node:zlib';

/**
 * Git objects written in-process as loose objects, exactly as git writes them: the SHA-1 of
 * `<type> <size>\0<body>`, that text zlib-deflated into `objects/<2 hex>/<38 hex>`. Used for
 * blobs and trees (`hash-object -w`, `mktree`), which otherwise cost a git process each.
 */

const deflateAsync = promisify(deflate);

export type LooseType = 'blob' | 'tree' | 'commit' | 'tag';

/** The object id git gives `body` as an object of `type`. */
export function objectId(type: LooseType, body: Buffer): string {
  return createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex');
}

/**
 * Writes the object unless it is there already; returns its id. Atomic: written to a temporary
 * file in the same folder and renamed into place, so a reader sees all of it or nothing (two
 * writers of the same object write the same bytes). Deflated off the main thread, at git's
 * default level for loose objects (`core.looseCompression`, best speed).
 */
export async function writeLooseObject(gitDir: string, type: LooseType, body: Buffer): Promise<string> {
  const id = objectId(type, body);
  const folder = join(gitDir, 'objects', id.slice(0, 2));
  const path = join(folder, id.slice(2));
  if (await exists(path)) return id;
  const header = Buffer.from(`${type} ${body.length}\0`);
  const compressed = await deflateAsync(Buffer.concat([header, body]), { level: zlib.Z_BEST_SPEED });
  await mkdir(folder, { recursive: true });
  const temporary = join(folder, `tmp_obj_${randomBytes(6).toString('hex')}`);
  try {
    await writeFile(temporary, compressed, { mode: 0o444, flag: 'wx' });
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  return id;
}

/** Whether a file is there (a loose object, `packed-refs`). */
export async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** One entry of a tree to write: mode as given to `git mktree` (e.g. `100644`, `040000`). */
export interface TreeEntryInput {
  mode: string;
  type: string;
  sha: string;
  path: string;
}

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFGITLINK = 0o160000;

/** The object type a tree entry's mode says (`object_type()` in git): tree, commit (a submodule) or blob. */
export function modeType(mode: number): 'tree' | 'commit' | 'blob' {
  if ((mode & S_IFMT) === S_IFDIR) return 'tree';
  if ((mode & S_IFMT) === S_IFGITLINK) return 'commit';
  return 'blob';
}

/** The mode as octal, or null when it is not one (git mktree's "input format error"). */
export function parseMode(mode: string): number | null {
  return /^[0-7]{1,7}$/.test(mode) ? Number.parseInt(mode, 8) : null;
}

/**
 * The body of a tree object as `git mktree` writes it: entries sorted by name bytewise, a tree's
 * name compared as if it ended in "/" (git's `base_name_compare`), each as
 * `<octal mode without leading zeros> <name>\0<20-byte id>`.
 */
export function treeBody(entries: { mode: number; sha: string; path: string }[]): Buffer {
  const rows = entries.map((entry) => {
    const name = Buffer.from(entry.path, 'utf8');
    const key = modeType(entry.mode) === 'tree' ? Buffer.concat([name, Buffer.from('/')]) : name;
    return { entry, name, key };
  });
  rows.sort((a, b) => compareNames(a.key, b.key));
  const parts: Buffer[] = [];
  for (const { entry, name } of rows) {
    parts.push(Buffer.from(`${entry.mode.toString(8)} `), name, Buffer.from([0]), Buffer.from(entry.sha, 'hex'));
  }
  return Buffer.concat(parts);
}

/**
 * `base_name_compare`: bytes up to the shorter length, then the next byte of each (a tree's
 * implied "/", or NUL at the end of a name). Comparing the names with "/" appended does the same.
 */
function compareNames(a: Buffer, b: Buffer): number {
  const length = Math.min(a.length, b.length);
  const common = Buffer.compare(a.subarray(0, length), b.subarray(0, length));
  if (common !== 0) return common;
  return (a[length] ?? 0) - (b[length] ?? 0);
}

/** One entry as stored in a tree object: mode as git reads it back (canonical), name, id. */
export interface StoredEntry {
  mode: number;
  name: string;
  sha: string;
}

/** Parses a tree object's body, with modes canonicalized as git's `decode_tree_entry` does. */
export function parseTreeBody(body: Buffer): StoredEntry[] {
  const entries: StoredEntry[] = [];
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(0x20, at);
    const nul = body.indexOf(0, space + 1);
    if (space === -1 || nul === -1 || nul + 21 > body.length) throw new Error('A tree object is malformed.');
    const mode = Number.parseInt(body.toString('latin1', at, space), 8);
    entries.push({
      mode: canonMode(mode),
      name: body.toString('utf8', space + 1, nul),
      sha: body.toString('hex', nul + 1, nul + 21),
    });
    at = nul + 21;
  }
  return entries;
}

/** git's `canon_mode`: a regular file is 100644 or 100755, then symlink, tree, else submodule. */
function canonMode(mode: number): number {
  const kind = mode & S_IFMT;
  if (kind === 0o100000) return 0o100000 | (mode & 0o100 ? 0o755 : 0o644);
  if (kind === 0o120000) return 0o120000;
  if (kind === S_IFDIR) return S_IFDIR;
  return S_IFGITLINK;
}
