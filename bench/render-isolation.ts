/**
 * `npx tsx bench/render-isolation.ts`: what the render sandbox costs per render.
 *
 * 1. write a checkout with two targets: a small overlay (one Deployment, one ConfigMap generator)
 *    and a 200-object overlay
 * 2. for each target, render it `BENCH_RUNS` times (default 30) with the real kustomize (else
 *    `kubectl kustomize`) three ways, interleaved so machine load hits all alike: bare (runTool,
 *    no isolation: today's cost), `namespace` (renderWithTool, the default), `proxy` (renderWithTool,
 *    the fallback with its per-render copy of the checkout)
 * 3. print the median and p90 ms per render of each, and the ratio and added ms against bare;
 *    exit non-zero when an isolated render's output differs from the bare one
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import {
  findExecutable,
  renderWithTool,
  runTool,
  scrubbedEnv,
  type RenderIsolationMode,
  type ToolRunOptions,
} from '../src/adapters/render/index.js';

const runs = Number(process.env.BENCH_RUNS ?? 30);
const tool = findExecutable('kustomize', process.env.PATH) ?? findExecutable('kubectl', process.env.PATH);
if (!tool) throw new Error('neither kustomize nor kubectl is on PATH; install one to run this benchmark');
const toolArgs = basename(tool) === 'kustomize' ? ['build'] : ['kustomize'];

const root = mkdtempSync(join(tmpdir(), 'escalator-bench-isolation-'));
const checkout = join(root, 'checkout');
const write = (path: string, text: string): void => {
  mkdirSync(dirname(join(checkout, path)), { recursive: true });
  writeFileSync(join(checkout, path), text);
};
write(
  'small/kustomization.yaml',
  'resources: [deployment.yaml]\nconfigMapGenerator:\n  - name: settings\n    literals: [mode=fast]\nimages:\n  - name: ghcr.io/example/hello\n    newTag: 1.2.3\n',
);
write(
  'small/deployment.yaml',
  'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: hello\nspec:\n  template:\n    spec:\n      containers:\n        - name: hello\n          image: ghcr.io/example/hello:1.0.0\n',
);
write(
  'large/kustomization.yaml',
  `resources:\n${Array.from({ length: 200 }, (_, i) => `  - cm-${i}.yaml\n`).join('')}commonLabels:\n  team: bench\n`,
);
for (let i = 0; i < 200; i++)
  write(
    `large/cm-${i}.yaml`,
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\ndata:\n${Array.from({ length: 20 }, (_, k) => `  key-${k}: value-${i}-${k}\n`).join('')}`,
  );

const limits = { timeoutMs: 60_000, maxOutputBytes: 64 * 1024 * 1024, maxMemoryBytes: 1024 * 1024 * 1024 };
const options = (mode: RenderIsolationMode): ToolRunOptions => ({
  ...limits,
  home: join(root, 'home'),
  path: process.env.PATH,
  isolation: { mode, binaries: [tool] },
});

type Way = 'bare' | RenderIsolationMode;
async function renderOnce(way: Way, dir: string): Promise<{ ms: number; yaml: string }> {
  const args = [...toolArgs, '--load-restrictor', 'LoadRestrictionsRootOnly', `./${dir}`];
  const started = performance.now();
  if (way === 'bare') {
    const result = await runTool(tool as string, args, {
      ...limits,
      cwd: checkout,
      env: scrubbedEnv(process.env.PATH, join(root, 'home')),
    });
    return { ms: performance.now() - started, yaml: result.code === 0 ? result.stdout : `failed: ${result.stderr}` };
  }
  const result = await renderWithTool('kustomize', tool as string, args, checkout, options(way));
  return {
    ms: performance.now() - started,
    yaml:
      result.outcome.status === 'ok'
        ? result.outcome.yaml
        : `failed: ${result.outcome.status === 'failed' ? result.outcome.message : result.outcome.status}`,
  };
}

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
};

let broken = false;
console.log(
  `tool: ${tool}; ${runs} renders per way and target; load ${loadavg()
    .map((load) => load.toFixed(2))
    .join(' ')}`,
);
// Warm up (page cache, the one-time isolation probe) before measuring.
for (const way of ['bare', 'namespace', 'proxy'] as const) await renderOnce(way, 'small');
for (const dir of ['small', 'large']) {
  const times: Record<Way, number[]> = { bare: [], namespace: [], proxy: [] };
  let reference: string | undefined;
  for (let i = 0; i < runs; i++) {
    for (const way of ['bare', 'namespace', 'proxy'] as const) {
      const { ms, yaml } = await renderOnce(way, dir);
      times[way].push(ms);
      reference ??= yaml;
      if (yaml !== reference) {
        broken = true;
        console.log(`${dir} ${way}: output differs from the bare render: ${yaml.slice(0, 200)}`);
      }
    }
  }
  const bare = quantile(times.bare, 0.5);
  for (const way of ['bare', 'namespace', 'proxy'] as const) {
    const median = quantile(times[way], 0.5);
    const extra = way === 'bare' ? '' : `  ratio ${(median / bare).toFixed(2)}  +${(median - bare).toFixed(1)} ms`;
    console.log(
      `${dir.padEnd(5)} ${way.padEnd(9)} median ${median.toFixed(1).padStart(6)} ms  p90 ${quantile(times[way], 0.9).toFixed(1).padStart(6)} ms${extra}`,
    );
  }
}
console.log(
  `load after ${loadavg()
    .map((load) => load.toFixed(2))
    .join(' ')}`,
);
rmSync(root, { recursive: true, force: true });
if (broken) process.exit(1);
