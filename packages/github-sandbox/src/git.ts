import { join } from 'node:path';
import { CatFileBatch } from './git-batch.js';
import { GitCommandError, runGit, type RunOptions, type RunResult } from './git-command.js';
import {
  exists,
  modeType,
  parseMode,
  parseTreeBody,
  treeBody,
  writeLooseObject,
  type StoredEntry,
} from './git-loose.js';
import { parseCommit, parseNumstat, parseRaw, parseTreeLine, splitCombinedDiff, splitPatches } from './git-parse.js';
import type { CommitObject, FileChange, GitIdentity, TreeEntry } from './git-objects.js';

export type { CommitObject, FileChange, GitIdentity, TreeEntry } from './git-objects.js';
export { GitCommandError } from './git-command.js';

/** Result of `git merge-tree --write-tree`. */
export interface MergeResult {
  clean: boolean;
  tree: string;
  conflicts: string[];
}

export const ZERO_SHA = '0000000000000000000000000000000000000000';

const FULL_SHA = /^[0-9a-f]{40}$/;
const PEEL_FULL_SHA = /^[0-9a-f]{40}\^\{(commit|tree)\}$/;
/**
 * A ref name of plain characters (a full `refs/…` name or a short one git expands, like `main`),
 * optionally peeled; never all hex digits nor ending like describe output (`-g<hex>`), the two
 * forms git falls back to reading as an abbreviated SHA.
 */
const PLAIN_REF = /^(?![0-9A-Fa-f]+(\^|$))(?!-)[A-Za-z0-9._/+-]+(?<!-g[0-9A-Fa-f]*)(\^\{(commit|tree)\})?$/;

/** A path ls-tree takes literally and that names one entry: no magic, no `.`/`..`, no empty segment. */
function isPlainPath(path: string): boolean {
  return (
    /^[^:/\0*?[\\]/.test(path) &&
    !/[\0*?[\\]/.test(path) &&
    path.split('/').every((part) => part !== '' && part !== '.' && part !== '..')
  );
}

/**
 * A bare git repository on disk, driven by the `git` CLI. Every object and ref is real git;
 * callers serialize ref updates per repository (see `lock.ts`). Blobs and trees are written
 * in-process as loose objects (git-loose.ts) and objects and plain ref names are read through one
 * long-lived `git cat-file --batch-command` (git-batch.ts): a process per call cost the end-to-end
 * tests most of their main-thread time. `close()` ends that process.
 */
export class GitRepository {
  /** Answers about immutable objects (named by full SHAs) never change, so they are memoized. */
  private readonly memo = new Map<string, Promise<unknown>>();
  /**
   * Answers that depend on refs (ref values, names resolved to commits). Every ref write goes
   * through this class, which clears them, so they are exact.
   */
  private readonly byName = new Map<string, Promise<string | null>>();
  /** Types of objects known to exist: an object never changes or goes away (nothing here prunes). */
  private readonly types = new Map<string, string>();
  /** `<sha>^{commit}` and `<sha>^{tree}` answers that named an object: they never change. */
  private readonly peeled = new Map<string, string>();
  /** Object reads (contents, types, peeling full SHAs) without a process each. */
  private readonly batch: CatFileBatch;

  constructor(readonly dir: string) {
    this.batch = new CatFileBatch(dir);
  }

  /** Stops the repository's long-lived reader; a later read starts it again. */
  close(): Promise<void> {
    return this.batch.close();
  }

  private remember<T>(key: string, compute: () => Promise<T>): Promise<T> {
    let value = this.memo.get(key) as Promise<T> | undefined;
    if (!value) {
      value = compute();
      this.memo.set(key, value);
      value.catch(() => this.memo.delete(key));
    }
    return value;
  }

  /** Creates an empty bare repository whose HEAD points at `defaultBranch`. */
  static async init(dir: string, defaultBranch: string): Promise<GitRepository> {
    await runGit(['init', '--quiet', '--bare', `--initial-branch=${defaultBranch}`, dir], {});
    return new GitRepository(dir);
  }

  run(args: string[], options: RunOptions = {}): Promise<RunResult> {
    return runGit(args, { ...options, env: { GIT_DIR: this.dir, ...options.env } });
  }

  async text(args: string[], options: RunOptions = {}): Promise<string> {
    return (await this.run(args, options)).stdout.toString('utf8');
  }

  /** Writes a blob as `git hash-object -w --stdin` does (no filters: the bytes as given). */
  async writeBlob(content: Buffer): Promise<string> {
    const sha = await writeLooseObject(this.dir, 'blob', content);
    this.types.set(sha, 'blob');
    return sha;
  }

  async readBlob(sha: string): Promise<Buffer> {
    const object = FULL_SHA.test(sha) ? await this.batch.contents(sha) : null;
    if (object?.type === 'blob' && object.body) return object.body;
    // Anything else (not a full SHA, missing, a tag to peel) answers, or fails, as `cat-file blob` does.
    return (await this.run(['cat-file', 'blob', sha])).stdout;
  }

  /** The object type, or null when the object does not exist. */
  async objectType(sha: string): Promise<string | null> {
    if (!FULL_SHA.test(sha)) return null;
    const known = this.types.get(sha);
    if (known) return known;
    const object = await this.batch.info(sha);
    if (object) this.types.set(sha, object.type);
    return object?.type ?? null;
  }

  /** Resolves a branch, tag, ref or SHA to a commit SHA; null when it names nothing. */
  resolveCommit(rev: string): Promise<string | null> {
    if (rev.startsWith('-')) return Promise.resolve(null);
    return this.revParse(`${rev}^{commit}`);
  }

  private revParse(spec: string): Promise<string | null> {
    if (PEEL_FULL_SHA.test(spec)) return this.peel(spec);
    let value = this.byName.get(spec);
    if (!value) {
      value = PLAIN_REF.test(spec) && !spec.includes('..') ? this.readRefByBatch(spec) : this.revParseCli(spec);
      this.byName.set(spec, value);
      value.catch(() => this.byName.delete(spec));
    }
    return value;
  }

  private async revParseCli(spec: string): Promise<string | null> {
    const result = await this.run(['rev-parse', '--verify', '--quiet', spec], { okCodes: [1, 128] });
    return result.code === 0 ? result.stdout.toString().trim() : null;
  }

  /**
   * `rev-parse --verify` of a plain ref name (`refs/heads/x`, `main`, optionally `^{commit}` or
   * `^{tree}`) by the long-lived reader. Both resolve the name with the same git function; the
   * pattern leaves out what only rev-parse interprets (`..` ranges, `^@`-style shorthands) and what
   * could make the long-lived process differ from a fresh one (abbreviated SHAs, including the
   * `-g<hex>` of describe output, are looked up in a cache of loose objects a process fills once).
   * Refs are read from their files at every lookup; only a `packed-refs` file is cached (by its
   * stat), and none is ever written here, so without one the answer is exactly rev-parse's: the
   * CLI answers if one appears. (A ref naming a missing object, which update-ref refuses to write,
   * is the one case that would differ: rev-parse prints it, cat-file says missing.)
   */
  private async readRefByBatch(spec: string): Promise<string | null> {
    if (await exists(join(this.dir, 'packed-refs'))) return this.revParseCli(spec);
    return (await this.batch.info(spec))?.oid ?? null;
  }

  /**
   * `rev-parse --verify <sha>^{commit|tree}` for a full SHA: the object, peeled (tags to their
   * target, commits to their tree) by the long-lived reader, which resolves names as rev-parse
   * does. A found answer never changes; "not found" is asked again, as the object may be written.
   */
  private async peel(spec: string): Promise<string | null> {
    const known = this.peeled.get(spec);
    if (known) return known;
    const object = await this.batch.info(spec);
    if (!object) return null;
    this.peeled.set(spec, object.oid);
    this.types.set(object.oid, object.type);
    return object.oid;
  }

  /** Writes a ref unconditionally (for GitHub's own `refs/pull/N/*`). */
  async setRef(ref: string, sha: string): Promise<void> {
    await this.run(['update-ref', ref, sha]);
    this.byName.clear();
  }

  /** Resolves a tree, or the tree of a commit or ref; null when it names nothing. */
  resolveTree(rev: string): Promise<string | null> {
    if (rev.startsWith('-')) return Promise.resolve(null);
    return this.revParse(`${rev}^{tree}`);
  }

  readRef(ref: string): Promise<string | null> {
    return ref.startsWith('-') ? Promise.resolve(null) : this.revParse(ref);
  }

  /** Full ref names and SHAs under `prefix` (e.g. `refs/heads/`), sorted by name. */
  async listRefs(prefix: string): Promise<{ ref: string; sha: string }[]> {
    const out = await this.text(['for-each-ref', '--format=%(refname) %(objectname)', prefix]);
    return out
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [ref = '', sha = ''] = line.split(' ');
        return { ref, sha };
      });
  }

  /**
   * Compare-and-swap a ref: succeeds only when the ref still holds `oldSha`
   * (`ZERO_SHA` means "must not exist"). Returns false when someone else moved it.
   */
  async updateRef(ref: string, newSha: string, oldSha: string): Promise<boolean> {
    const result = await this.run(['update-ref', ref, newSha, oldSha], { okCodes: [1, 128] });
    // Cleared after the write, so no read that started earlier can leave a stale value behind.
    this.byName.clear();
    return result.code === 0;
  }

  async deleteRef(ref: string, oldSha: string): Promise<boolean> {
    const result = await this.run(['update-ref', '-d', ref, oldSha], { okCodes: [1, 128] });
    this.byName.clear();
    return result.code === 0;
  }

  async lsTree(treeish: string, options: { recursive?: boolean; path?: string } = {}): Promise<TreeEntry[]> {
    const path = options.path;
    if (FULL_SHA.test(treeish) && (path === undefined || (!options.recursive && isPlainPath(path)))) {
      const entries = await this.lsTreeInProcess(treeish, options.recursive ?? false, path);
      if (entries) return entries;
    }
    const args = ['ls-tree', '-z', '-l'];
    if (options.recursive) args.push('-r', '-t');
    args.push(treeish);
    if (options.path !== undefined) args.push('--', options.path);
    const out = await this.text(args);
    return out.split('\0').filter(Boolean).map(parseTreeLine);
  }

  /**
   * `ls-tree -z -l [-r -t] <sha> [-- <plain path>]` from tree objects read by the long-lived
   * reader: entries in tree order (with `-r -t` a tree right before what it holds), modes as
   * git prints them (six octal digits, canonical), sizes of blobs. A path is walked down from the
   * root (its own entry, or nothing). Null, for the CLI to answer, when something is missing.
   */
  private async lsTreeInProcess(treeish: string, recursive: boolean, path?: string): Promise<TreeEntry[] | null> {
    const root = await this.peel(`${treeish}^{tree}`);
    if (!root) return null;
    const show = async (entry: StoredEntry, full: string): Promise<TreeEntry | null> => {
      const type = modeType(entry.mode);
      const shown: TreeEntry = { mode: entry.mode.toString(8).padStart(6, '0'), type, sha: entry.sha, path: full };
      if (type !== 'blob') return shown;
      const size = await this.objectSize(entry.sha);
      if (size === null) return null;
      shown.size = size;
      return shown;
    };
    const found: (TreeEntry | null)[] = [];
    if (path !== undefined) {
      const names = path.split('/');
      let tree: string | null = root;
      for (const [index, name] of names.entries()) {
        const entries: StoredEntry[] | null = tree ? await this.treeEntries(tree) : [];
        if (!entries) return null;
        const entry: StoredEntry | undefined = entries.find((candidate) => candidate.name === name);
        if (!entry) return [];
        if (index === names.length - 1) found.push(await show(entry, path));
        else tree = modeType(entry.mode) === 'tree' ? entry.sha : null;
      }
    } else {
      const walk = async (tree: string, prefix: string): Promise<boolean> => {
        const entries = await this.treeEntries(tree);
        if (!entries) return false;
        for (const entry of entries) {
          found.push(await show(entry, `${prefix}${entry.name}`));
          if (recursive && modeType(entry.mode) === 'tree' && !(await walk(entry.sha, `${prefix}${entry.name}/`)))
            return false;
        }
        return true;
      };
      if (!(await walk(root, ''))) return null;
    }
    return found.every((entry) => entry !== null) ? (found as TreeEntry[]) : null;
  }

  /** A tree's entries as stored; null when it is missing or not a tree. */
  private treeEntries(tree: string): Promise<StoredEntry[] | null> {
    return this.remember(`tree ${tree}`, async () => {
      const object = await this.batch.contents(tree);
      return object?.type === 'tree' && object.body ? parseTreeBody(object.body) : null;
    });
  }

  private async objectSize(sha: string): Promise<number | null> {
    return this.remember(`size ${sha}`, async () => (await this.batch.info(sha))?.size ?? null);
  }

  /**
   * Writes one tree level; `entries` are direct children (no slashes in paths). The tree
   * `git mktree` would write, byte for byte, refused for the same reasons: a malformed mode or
   * SHA, a type that contradicts the mode, an object that is missing (a submodule's commit may
   * be) or of another type than the mode says.
   */
  async mktree(entries: Pick<TreeEntry, 'mode' | 'type' | 'sha' | 'path'>[]): Promise<string> {
    const refuse = (message: string) => new GitCommandError(['mktree', '-z'], 128, `fatal: ${message}\n`);
    const rows = entries.map((entry) => {
      const mode = parseMode(entry.mode);
      const line = `${entry.mode} ${entry.type} ${entry.sha}\t${entry.path}`;
      if (mode === null || !FULL_SHA.test(entry.sha)) throw refuse(`input format error: ${line}`);
      if (entry.path.includes('/')) throw refuse(`path ${entry.path} contains slash`);
      const type = modeType(mode);
      if (type !== entry.type)
        throw refuse(`entry '${entry.path}' object type (${entry.type}) doesn't match mode type (${type})`);
      return { mode, type, sha: entry.sha, path: entry.path };
    });
    const found = await Promise.all(rows.map((row) => this.objectType(row.sha)));
    rows.forEach((row, index) => {
      const actual = found[index] ?? null;
      if (actual === null && row.type !== 'commit')
        throw refuse(`entry '${row.path}' object ${row.sha} is unavailable`);
      if (actual !== null && actual !== row.type)
        throw refuse(`entry '${row.path}' object ${row.sha} is a ${actual} but specified type was (${row.type})`);
    });
    const sha = await writeLooseObject(this.dir, 'tree', treeBody(rows));
    this.types.set(sha, 'tree');
    return sha;
  }

  async commitTree(
    tree: string,
    parents: string[],
    message: string,
    author: GitIdentity,
    committer: GitIdentity,
  ): Promise<string> {
    const args = ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-F', '-'];
    const env = {
      GIT_AUTHOR_NAME: author.name,
      GIT_AUTHOR_EMAIL: author.email,
      GIT_AUTHOR_DATE: gitDate(author.date),
      GIT_COMMITTER_NAME: committer.name,
      GIT_COMMITTER_EMAIL: committer.email,
      GIT_COMMITTER_DATE: gitDate(committer.date),
    };
    return (await this.text(args, { input: message, env })).trim();
  }

  readCommit(sha: string): Promise<CommitObject> {
    return this.remember(`commit ${sha}`, async () => {
      const object = FULL_SHA.test(sha) ? await this.batch.contents(sha) : null;
      if (object?.type === 'commit' && object.body) return parseCommit(sha, object.body.toString('utf8'));
      // Anything else (not a full SHA, missing, a tag to peel) answers, or fails, as `cat-file commit` does.
      return parseCommit(sha, await this.text(['cat-file', 'commit', sha]));
    });
  }

  isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    return this.rememberIfShas(`ancestor ${ancestor} ${descendant}`, [ancestor, descendant], async () => {
      const result = await this.run(['merge-base', '--is-ancestor', ancestor, descendant], { okCodes: [1] });
      return result.code === 0;
    });
  }

  mergeBase(a: string, b: string): Promise<string | null> {
    return this.rememberIfShas(`merge-base ${a} ${b}`, [a, b], async () => {
      const result = await this.run(['merge-base', a, b], { okCodes: [1] });
      return result.code === 0 ? result.stdout.toString().trim() : null;
    });
  }

  private rememberIfShas<T>(key: string, revs: string[], compute: () => Promise<T>): Promise<T> {
    return revs.every((rev) => /^[0-9a-f]{40}$/.test(rev)) ? this.remember(key, compute) : compute();
  }

  /** Merges `theirs` into `ours` without a worktree (git ≥ 2.38). */
  mergeTree(ours: string, theirs: string): Promise<MergeResult> {
    return this.rememberIfShas(`merge-tree ${ours} ${theirs}`, [ours, theirs], () =>
      this.computeMergeTree(ours, theirs),
    );
  }

  private async computeMergeTree(ours: string, theirs: string): Promise<MergeResult> {
    const result = await this.run(['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', ours, theirs], {
      okCodes: [1],
    });
    const [tree = '', ...conflicts] = result.stdout.toString('utf8').split('\0').filter(Boolean);
    return { clean: result.code === 0, tree, conflicts };
  }

  /** Commits reachable from `head` but not from `exclude`, newest first. */
  revList(head: string, options: { exclude?: string; path?: string; max?: number } = {}): Promise<string[]> {
    const key = `rev-list ${head} ${options.exclude ?? ''} ${options.path ?? ''} ${options.max ?? ''}`;
    // A copy per caller: callers reverse it in place, which would reorder the remembered list for
    // the next one (the commits of a pull request came out newest first every other call).
    return this.rememberIfShas(key, [head, ...(options.exclude ? [options.exclude] : [])], () =>
      this.computeRevList(head, options),
    ).then((shas) => [...shas]);
  }

  private async computeRevList(
    head: string,
    options: { exclude?: string; path?: string; max?: number },
  ): Promise<string[]> {
    const args = ['rev-list'];
    if (options.max !== undefined) args.push(`--max-count=${options.max}`);
    args.push(head);
    if (options.exclude) args.push(`^${options.exclude}`);
    if (options.path) args.push('--', options.path);
    return (await this.text(args)).split('\n').filter(Boolean);
  }

  /** Files that differ between two commits or trees, with rename detection. */
  diff(from: string, to: string): Promise<FileChange[]> {
    return this.rememberIfShas(`diff ${from} ${to}`, [from, to], () => this.computeDiff(from, to));
  }

  private async computeDiff(from: string, to: string): Promise<FileChange[]> {
    // One process for what `--raw`, `--numstat` and the patch print alone (-z changes only how
    // the first two end their records and adds one NUL before the patch).
    const output = await this.text([
      'diff',
      '--raw',
      '--numstat',
      '--patch',
      '-z',
      '-M',
      '--no-abbrev',
      '--no-color',
      from,
      to,
    ]);
    const { raw, numstat, patch } = splitCombinedDiff(output);
    const patches = splitPatches(patch);
    const counts = parseNumstat(numstat);
    return parseRaw(raw).map((change, index) => {
      const count = counts[index];
      const patch = patches[index];
      return {
        ...change,
        additions: count?.additions ?? 0,
        deletions: count?.deletions ?? 0,
        ...(patch === undefined ? {} : { patch }),
      };
    });
  }

  async archive(sha: string, prefix: string, format: 'tar.gz' | 'zip'): Promise<Buffer> {
    return (await this.run(['archive', `--format=${format}`, `--prefix=${prefix}`, sha])).stdout;
  }
}

function gitDate(date: Date): string {
  return `${Math.floor(date.getTime() / 1000)} +0000`;
}
