import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { ConflictError, NotFoundError } from '../../observability/errors.js';

/**
 * The files of one commit. The local-git implementation reads a repository on disk; a GitHub
 * implementation (tarball or Git Data API) can stand in for it without the renderers knowing.
 */
export interface SourceTree {
  /** The commit SHA. Caches are keyed by it. */
  readonly sha: string;
  /** Every file path (blobs and symlinks), `/`-separated, sorted. */
  listFiles(): string[];
  /** A file's bytes. Throws NotFoundError when the path is not a file of this commit. */
  read(path: string): Buffer;
  /** The git blob id of a file, when the implementation knows it without reading (cache keys). */
  blobSha?(path: string): string | undefined;
  /** Is the path a symbolic link? (Its `read` is the link target.) */
  isSymlink?(path: string): boolean;
  /** Read many files in one go before they are asked for one by one. */
  preload?(paths: readonly string[]): void;
  /** Write the whole commit into an empty directory (the checkout materializer's fast path). */
  writeTo?(dir: string): Promise<void>;
}

/** Git's blob id of some content: what `git hash-object` prints. */
export function gitBlobSha(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

/** Counters of git calls, so a benchmark can prove that a second run fetches nothing. */
export const gitCalls = { archive: 0, lsTree: 0, catFile: 0 };

interface Entry {
  mode: string;
  blob: string;
}

function git(repoDir: string, args: string[], input?: string): Buffer {
  return execFileSync('git', ['-C', repoDir, ...args], {
    maxBuffer: 1024 * 1024 * 1024,
    ...(input !== undefined ? { input } : {}),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** A commit of a git repository on this machine: `git ls-tree -r` for the listing, `git cat-file` for content. */
export class LocalGitSourceTree implements SourceTree {
  readonly sha: string;
  private readonly entries = new Map<string, Entry>();
  private readonly contents = new Map<string, Buffer>();

  private constructor(
    private readonly repoDir: string,
    sha: string,
  ) {
    this.sha = sha;
    gitCalls.lsTree++;
    const listing = git(repoDir, ['ls-tree', '-r', '-z', '--full-tree', sha]).toString('utf8');
    for (const record of listing.split('\0')) {
      if (record === '') continue;
      const tab = record.indexOf('\t');
      const [mode, type, blob] = record.slice(0, tab).split(' ') as [string, string, string];
      if (type !== 'blob') continue; // submodules (commit entries) are not files of this tree
      this.entries.set(record.slice(tab + 1), { mode, blob });
    }
  }

  /** Open `rev` (a branch, tag or SHA) of the repository at `repoDir`. */
  static open(repoDir: string, rev: string): LocalGitSourceTree {
    // git reads an argument that starts with `-` as an option (`--end-of-options` needs git 2.30).
    if (rev.startsWith('-'))
      throw new NotFoundError(
        `"${rev}" is not a revision (it starts with "-", which git reads as an option); name a branch, tag or commit SHA`,
      );
    let sha: string;
    try {
      sha = git(repoDir, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`])
        .toString('utf8')
        .trim();
    } catch {
      throw new NotFoundError(
        `"${rev}" is not a commit of the git repository at ${repoDir}; check the revision name (git log --oneline) and --repo`,
      );
    }
    return new LocalGitSourceTree(repoDir, sha);
  }

  /**
   * `head` merged into `base` the way GitHub builds a pull request's test merge commit (which no
   * clone has): `git merge-tree --write-tree` (git 2.38 or later), then a commit with fixed author,
   * committer and date, so the same two commits give the same SHA on every machine. Its objects go
   * into the repository's object store; no ref moves and the work tree is not touched.
   * Throws ConflictError when the two do not merge cleanly (GitHub then has no merge commit either).
   */
  static merge(repoDir: string, baseSha: string, headSha: string): LocalGitSourceTree {
    for (const sha of [baseSha, headSha])
      if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(sha))
        throw new NotFoundError(`"${sha}" is not a commit SHA; merge takes the SHAs LocalGitSourceTree.open resolved`);
    let tree: string;
    try {
      tree = git(repoDir, ['merge-tree', '--write-tree', '--no-messages', baseSha, headSha])
        .toString('utf8')
        .split('\n')[0]
        ?.trim() as string;
    } catch (error) {
      const status = (error as { status?: number }).status;
      if (status === 1)
        throw new ConflictError(
          `${headSha.slice(0, 7)} does not merge cleanly into ${baseSha.slice(0, 7)}, so GitHub has no merge commit either; run without --merged`,
          { cause: error },
        );
      throw new Error(
        `git merge-tree --write-tree failed (it needs git 2.38 or later): ${String((error as { stderr?: Buffer }).stderr ?? error).trim()}`,
        { cause: error },
      );
    }
    const fixed = { GIT_AUTHOR_DATE: '2000-01-01T00:00:00Z', GIT_COMMITTER_DATE: '2000-01-01T00:00:00Z' };
    const who = {
      GIT_AUTHOR_NAME: 'Escalator',
      GIT_AUTHOR_EMAIL: 'escalator@localhost',
      GIT_COMMITTER_NAME: 'Escalator',
      GIT_COMMITTER_EMAIL: 'escalator@localhost',
    };
    const sha = execFileSync(
      'git',
      ['-C', repoDir, 'commit-tree', tree, '-p', baseSha, '-p', headSha, '-m', `Merge ${headSha} into ${baseSha}`],
      { env: { ...process.env, ...who, ...fixed }, stdio: ['ignore', 'pipe', 'pipe'] },
    )
      .toString('utf8')
      .trim();
    return new LocalGitSourceTree(repoDir, sha);
  }

  listFiles(): string[] {
    return [...this.entries.keys()].sort();
  }

  blobSha(path: string): string | undefined {
    return this.entries.get(path)?.blob;
  }

  isSymlink(path: string): boolean {
    return this.entries.get(path)?.mode === '120000';
  }

  read(path: string): Buffer {
    const cached = this.contents.get(path);
    if (cached) return cached;
    const entry = this.entries.get(path);
    if (!entry) throw new NotFoundError(`${path} is not a file at commit ${this.sha}`);
    gitCalls.catFile++;
    const content = git(this.repoDir, ['cat-file', 'blob', entry.blob]);
    this.contents.set(path, content);
    return content;
  }

  preload(paths: readonly string[]): void {
    const wanted = [...new Set(paths)].filter((path) => this.entries.has(path) && !this.contents.has(path));
    if (wanted.length === 0) return;
    gitCalls.catFile++;
    const output = git(
      this.repoDir,
      ['cat-file', '--batch'],
      wanted.map((path) => `${this.entries.get(path)?.blob}\n`).join(''),
    );
    let offset = 0;
    for (const path of wanted) {
      const newline = output.indexOf(0x0a, offset);
      const header = output.subarray(offset, newline).toString('utf8').split(' ');
      const size = Number(header[2]);
      const start = newline + 1;
      this.contents.set(path, Buffer.from(output.subarray(start, start + size)));
      offset = start + size + 1;
    }
  }

  /** `git archive <sha> | tar -x`: the whole commit in one call. */
  async writeTo(dir: string): Promise<void> {
    gitCalls.archive++;
    await new Promise<void>((resolve, reject) => {
      const archive = spawn('git', ['-C', this.repoDir, 'archive', '--format=tar', this.sha], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const tar = spawn('tar', ['-x', '-f', '-', '-C', dir], { stdio: ['pipe', 'ignore', 'pipe'] });
      let errors = '';
      archive.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
      tar.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
      archive.stdout.pipe(tar.stdin);
      let pending = 2;
      let failed = false;
      const done = (code: number | null): void => {
        if (code !== 0) failed = true;
        if (--pending === 0) {
          if (failed) reject(new Error(`git archive ${this.sha} | tar -x failed: ${errors.trim()}`));
          else resolve();
        }
      };
      archive.on('close', done);
      tar.on('close', done);
      archive.on('error', reject);
      tar.on('error', reject);
    });
  }
}

/** Paths whose content differs between two trees (added, removed or changed), sorted. */
export function changedPathsBetween(base: SourceTree, head: SourceTree): string[] {
  const baseFiles = new Set(base.listFiles());
  const headFiles = new Set(head.listFiles());
  const changed: string[] = [];
  const id = (tree: SourceTree, path: string): string => tree.blobSha?.(path) ?? gitBlobSha(tree.read(path));
  for (const path of new Set([...baseFiles, ...headFiles])) {
    if (
      !baseFiles.has(path) ||
      !headFiles.has(path) ||
      id(base, path) !== id(head, path) ||
      (base.isSymlink?.(path) ?? false) !== (head.isSymlink?.(path) ?? false)
    )
      changed.push(path);
  }
  return changed.sort();
}
