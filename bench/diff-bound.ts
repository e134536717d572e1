/**
 * `npx tsx bench/diff-bound.ts`: what one huge pull request costs the worker's event loop.
 *
 * 1. the line diff of a ConfigMap whose 11,000 lines all change: the unbounded library call (what
 *    Escalator did) against `diffLines` (bounded by edits), in this process
 * 2. parsing a 20,000-key mapping: the `yaml` package's own duplicate-key check against
 *    `parseYamlDocuments` (linear), in this process
 * 3. a pull request changing that ConfigMap, rendered and diffed by `renderAndDiff` (diffs in
 *    threads), against the same diff run on the event loop (`diffTarget`, the earlier way), while
 *    a 10 ms timer measures the event loop: its longest stall is what a webhook or a BullMQ lock
 *    renewal would have waited
 * Prints each figure and the ratio ours/baseline.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { structuredPatch } from 'diff';
import { parseAllDocuments } from 'yaml';
import { DiffThreads } from '../src/adapters/render/diff-threads.js';
import { LocalGitSourceTree, renderAndDiff } from '../src/adapters/render/index.js';
import { diffLines, diffTarget, normalizeObject, parseManifests } from '../src/planners/diff/index.js';
import { parseYamlDocuments } from '../src/planners/yaml-parse.js';

function configMap(lines: number, tag: string): string {
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n${Array.from({ length: lines }, (_, i) => `  key${i}: "${tag}-${i}"`).join('\n')}\n`;
}

function timed<T>(work: () => T): { ms: number; value: T } {
  const started = performance.now();
  const value = work();
  return { ms: performance.now() - started, value };
}

const ratio = (ours: number, baseline: number): string => `${(ours / baseline).toFixed(3)}`;
const ms = (value: number): string => `${value.toFixed(0)} ms`;

// 1. line diff
const before = configMap(11_000, 'before');
const after = configMap(11_000, 'after');
const lines = (yaml: string) => {
  const parsed = parseManifests(yaml);
  if (!parsed.ok) throw new Error(parsed.message);
  return normalizeObject(parsed.objects[0]!).lines;
};
const [baseLines, headLines] = [lines(before), lines(after)];
const text = (list: typeof baseLines): string => list.map((line) => `${line.text}\n`).join('');
const unbounded = timed(() =>
  structuredPatch('base', 'head', text(baseLines), text(headLines), undefined, undefined, { context: 3 }),
);
const bounded = timed(() => diffLines(baseLines, headLines));
console.log(
  `line diff, 11,000 changed lines: unbounded ${ms(unbounded.ms)}, bounded ${ms(bounded.ms)} (${JSON.stringify(bounded.value.tooLarge)}), ratio ${ratio(bounded.ms, unbounded.ms)}`,
);

// 2. duplicate-key check
const wide = configMap(20_000, 'v');
const packageCheck = timed(() => parseAllDocuments(wide, { prettyErrors: false, uniqueKeys: true }));
const linearCheck = timed(() => parseYamlDocuments(wide, { prettyErrors: false }));
console.log(
  `parse, 20,000-key mapping: yaml package ${ms(packageCheck.ms)}, parseYamlDocuments ${ms(linearCheck.ms)}, ratio ${ratio(linearCheck.ms, packageCheck.ms)}`,
);

// 3. the event loop during a whole pull request's diff
async function longestStall(work: () => Promise<unknown>): Promise<{ stall: number; total: number }> {
  let last = performance.now();
  let stall = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last - 10);
    last = now;
  }, 10);
  const started = performance.now();
  await work();
  const total = performance.now() - started;
  clearInterval(timer);
  return { stall: Math.max(stall, performance.now() - last - 10), total };
}

const root = mkdtempSync(join(tmpdir(), 'escalator-bench-diff-bound-'));
try {
  const repo = join(root, 'repo');
  mkdirSync(join(repo, 'app'), { recursive: true });
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: root,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'b',
    GIT_AUTHOR_EMAIL: 'b@b.invalid',
    GIT_COMMITTER_NAME: 'b',
    GIT_COMMITTER_EMAIL: 'b@b.invalid',
  };
  const git = (...args: string[]): string =>
    execFileSync('git', ['-C', repo, ...args], { env })
      .toString('utf8')
      .trim();
  git('init', '-q', '-b', 'main');
  const commit = (yaml: string): string => {
    writeFileSync(join(repo, 'app/cm.yaml'), yaml);
    git('add', '-A');
    git('commit', '-q', '-m', 'c');
    return git('rev-parse', 'HEAD');
  };
  const [baseSha, headSha] = [commit(before), commit(after)];
  const threads = new DiffThreads();
  // Start the threads once, as a long-running worker has them.
  await threads.diff({ id: 'warm', kind: 'plain', dir: 'warm' }, { status: 'absent' }, { status: 'absent' });
  const diffPullRequest = () =>
    renderAndDiff({
      base: LocalGitSourceTree.open(repo, baseSha),
      head: LocalGitSourceTree.open(repo, headSha),
      changedPaths: null,
      options: { cacheDir: join(root, 'cache'), diffThreads: threads, renderCache: false },
    });
  // Once before measuring: a running worker has found its tools (one `kustomize version` per process).
  await diffPullRequest();
  const product = await longestStall(diffPullRequest);
  const inline = await longestStall(async () =>
    diffTarget({ id: 'app', kind: 'plain', dir: 'app' }, { status: 'ok', yaml: before }, { status: 'ok', yaml: after }),
  );
  await threads.close();
  console.log(
    `event loop during one PR of 11,000 changed lines: longest stall with diff threads ${ms(product.stall)} (whole run ${ms(product.total)}), with the diff on the event loop ${ms(inline.stall)}, ratio ${ratio(product.stall, inline.stall)}`,
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
