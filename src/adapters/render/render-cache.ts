import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
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
    mkdirSync(this.dir, { recursive: true });
  }

  /** The cache key of one side of one target. Unsure targets hash every file of the commit. */
  static key(node: TargetNode, tree: SourceTree, tool: string, options: Record<string, unknown>): string {
    const files = tree.listFiles();
    const direct = new Set(node.inputFiles);
    const inputs = node.unsure.length > 0 ? files : files.filter((path) => direct.has(path) || node.inputDirs.some((dir) => dir === '' || path.startsWith(`${dir}/`)));
    const hash = createHash('sha256');
    hash.update(JSON.stringify({ v: 1, id: node.id, kind: node.kind, dir: node.dir, file: node.file, values: node.valuesFiles, tool, options }));
    for (const path of [...inputs].sort()) hash.update(`\n${path}\0${tree.blobSha?.(path) ?? gitBlobSha(tree.read(path))}${tree.isSymlink?.(path) ? '@' : ''}`);
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
