import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import type { SourceTree } from '../render/source-tree.js';
import { NotFoundError } from '../../observability/errors.js';
import type { Octokit } from './client.js';
import type { RepoId } from './repo.js';

const run = promisify(execFile);

/** Tarball downloads made by this process; a second diff of the same SHAs makes none. */
export const tarballFetches = { count: 0 };

/**
 * A commit of a GitHub repository as a `SourceTree`: its tarball, downloaded once and extracted
 * into a cache directory keyed by commit SHA (a commit never changes, so the cache never goes
 * stale). Extraction keeps symlinks as symlinks so the renderer can refuse ones that leave.
 * `cacheDir` is the installation's own folder (`installationCacheDir`), so the predictable
 * `tarballs/<owner>/<repo>/<sha>` part sits below a name no other installation knows.
 */
export async function loadTarballTree(
  octokit: Octokit,
  id: RepoId,
  sha: string,
  cacheDir: string,
): Promise<SourceTree> {
  const dir = join(cacheDir, 'tarballs', id.owner.toLowerCase(), id.repo.toLowerCase(), sha);
  if (!existsSync(join(dir, '.escalator-complete'))) {
    const staging = `${dir}.partial-${process.pid}-${Date.now()}`;
    mkdirSync(staging, { recursive: true, mode: 0o700 });
    try {
      tarballFetches.count++;
      const { data } = await octokit.rest.repos.downloadTarballArchive({ ...id, ref: sha });
      const archive = join(staging, '..', `${sha}-${process.pid}.tar.gz`);
      writeFileSync(archive, Buffer.from(data as ArrayBuffer));
      await run(
        'tar',
        ['-xzf', archive, '-C', staging, '--strip-components=1', '--no-same-owner', '--no-same-permissions'],
        { timeout: 120_000, maxBuffer: 1024 * 1024 },
      );
      rmSync(archive, { force: true });
      writeFileSync(join(staging, '.escalator-complete'), sha);
      rmSync(dir, { recursive: true, force: true });
      renameSync(staging, dir);
    } catch (error) {
      rmSync(staging, { recursive: true, force: true });
      throw error;
    }
  }
  return directoryTree(dir, sha);
}

function directoryTree(root: string, sha: string): SourceTree {
  let files: string[] | undefined;
  const inside = (path: string): string => {
    const absolute = join(root, path);
    if (relative(root, absolute).startsWith('..')) throw new NotFoundError(`${path} is outside the checkout`);
    return absolute;
  };
  return {
    sha,
    listFiles() {
      files ??= walk(root, root)
        .filter((path) => path !== '.escalator-complete')
        .sort();
      return files;
    },
    read(path) {
      const absolute = inside(path);
      try {
        const stat = lstatSync(absolute);
        if (stat.isSymbolicLink()) return Buffer.from(readlinkSync(absolute));
        if (!stat.isFile()) throw new NotFoundError(`${path} is not a file of ${sha}`);
        return readFileSync(absolute);
      } catch (error) {
        if (error instanceof NotFoundError) throw error;
        throw new NotFoundError(`${path} is not a file of ${sha}`);
      }
    },
    isSymlink(path) {
      try {
        return lstatSync(inside(path)).isSymbolicLink();
      } catch {
        return false;
      }
    },
    async writeTo(dir) {
      cpSync(root, dir, {
        recursive: true,
        verbatimSymlinks: true,
        filter: (source) => !source.endsWith('.escalator-complete'),
      });
    },
  };
}

function walk(root: string, dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(root, path));
    else if (entry.isFile() || entry.isSymbolicLink()) out.push(relative(root, path));
  }
  return out;
}
