import { createHash, createHmac, randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { RenderOutcome, TargetNode } from '../../planners/diff/index.js';
import { gitBlobSha, type SourceTree } from './source-tree.js';

/**
 * Renders cached on disk by target and inputs: the key hashes the target, the tool and its version,
 * the render options, and the git blob id of every file the target reads. Two commits that agree
 * on those files share the render, and a second run on the same SHAs runs no tool and fetches nothing.
 */
export class RenderCache {
  hits = 0;
  misses = 0;
  private readonly dir: string;

  constructor(cacheRoot: string) {
    this.dir = join(cacheRoot, 'renders');
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  /** The cache key of one side of one target. Unsure targets hash every file of the commit. */
  static key(node: TargetNode, tree: SourceTree, tool: string, options: Record<string, unknown>): string {
    const files = tree.listFiles();
    const direct = new Set(node.inputFiles);
    const inputs =
      node.unsure.length > 0
        ? files
        : files.filter(
            (path) => direct.has(path) || node.inputDirs.some((dir) => dir === '' || path.startsWith(`${dir}/`)),
          );
    const hash = createHash('sha256');
    hash.update(
      JSON.stringify({
        // 4: renders cached before values bound for helm's command line were checked (issue 31) may
        // hold what such a value made helm read; none of them is served again.
        // 5: helm renders now build file:// dependencies, replace values.yaml with Flux valuesFiles
        // and render random charts twice (issue 36).
        v: 5,
        id: node.id,
        kind: node.kind,
        dir: node.dir,
        file: node.file,
        values: node.valuesFiles,
        release: node.release,
        tool,
        options,
      }),
    );
    for (const path of [...inputs].sort())
      hash.update(
        `\n${path}\0${tree.blobSha?.(path) ?? gitBlobSha(tree.read(path))}${tree.isSymlink?.(path) ? '@' : ''}`,
      );
    // Missing references are inputs too: their absence is part of the result.
    const present = new Set(files);
    for (const path of node.inputFiles.filter((file) => !present.has(file))) hash.update(`\n${path}\0missing`);
    return hash.digest('hex');
  }

  get(key: string): RenderOutcome | undefined {
    const path = join(this.dir, `${key}.json`);
    if (!existsSync(path)) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    return JSON.parse(readFileSync(path, 'utf8')) as RenderOutcome;
  }

  set(key: string, outcome: RenderOutcome): void {
    const path = join(this.dir, `${key}.json`);
    const temporary = `${path}.tmp-${process.pid}`;
    writeFileSync(temporary, JSON.stringify(outcome));
    renameSync(temporary, path);
  }
}

const KEY_FILE = 'installation-key';

/**
 * The deployment's secret for naming installation folders: 32 random bytes in
 * `<cacheRoot>/installation-key` (mode 0600), made on first use. Written to a temporary file and
 * hard-linked into place, so two workers starting together agree on one key.
 */
function installationKey(cacheRoot: string): Buffer {
  const path = join(cacheRoot, KEY_FILE);
  if (!existsSync(path)) {
    const temporary = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    writeFileSync(temporary, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
    try {
      linkSync(temporary, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error; // another worker made it first: use theirs
    } finally {
      rmSync(temporary, { force: true });
    }
  }
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  const text = readFileSync(path, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/.test(text))
    throw new Error(
      `${path} is not an installation key (64 hexadecimal characters); delete it and the folders beside it, and Escalator makes a new one`,
    );
  return Buffer.from(text, 'hex');
}

/**
 * The cache folder of one GitHub App installation: `<cacheRoot>/installations/<name>` (0700), where
 * the name is an HMAC of the installation id under the deployment's own random key — not guessable
 * from anything public, so a render of one installation cannot name a path of another's even where
 * it could read one (the render sandbox already hides them; this is the second layer).
 * Tarballs, checkouts and renders of the installation all live below it.
 */
export function installationCacheDir(cacheRoot: string, installationId: number): string {
  mkdirSync(cacheRoot, { recursive: true, mode: 0o700 });
  const name = createHmac('sha256', installationKey(cacheRoot))
    .update(`escalator installation ${installationId}`)
    .digest('hex')
    .slice(0, 32);
  const dir = join(cacheRoot, 'installations', name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(join(cacheRoot, 'installations'), 0o700);
  return dir;
}
