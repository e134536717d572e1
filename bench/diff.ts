/**
 * `npx tsx bench/diff.ts`: how long a rendered diff takes, and where the time goes.
 *
 * 1. build two git repositories in a temp folder: (a) one overlay over a 200-object base whose
 *    labels change on every object, (b) 50 overlays that all use one changed base
 * 2. for each: a cold run (empty caches; renders one at a time, so wall time = kustomize + ours),
 *    then a cold run with 2 renders at once, then a warm run on the same SHAs
 * 3. print wall time, time in kustomize, our share, `git archive` calls and renders per run;
 *    exit non-zero when a warm run archives or renders anything
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gitCalls, LocalGitSourceTree, renderAndDiff } from '../src/adapters/render/index.js';
import { renderComment } from '../src/planners/diff/index.js';

const root = mkdtempSync(join(tmpdir(), 'escalator-bench-diff-'));
const env = {
  PATH: process.env.PATH ?? '',
  HOME: root,
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.invalid',
};

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-C', dir, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    .toString('utf8')
    .trim();
}

function write(dir: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

function commit(dir: string, files: Record<string, string>): string {
  write(dir, files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'bench');
  return git(dir, 'rev-parse', 'HEAD');
}

function newRepo(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  git(dir, 'init', '-q', '-b', 'main');
  return dir;
}

function object(index: number): string {
  const name = `svc-${String(index).padStart(3, '0')}`;
  switch (index % 4) {
    case 0:
      return `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: ${name}}\n  template:\n    metadata:\n      labels: {app: ${name}}\n    spec:\n      containers:\n        - name: main\n          image: ghcr.io/example/${name}:1.0.${index}\n          ports: [{name: http, containerPort: 8080}]\n          env: [{name: MODE, value: prod}, {name: INDEX, value: "${index}"}]\n`;
    case 1:
      return `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\nspec:\n  selector: {app: ${name}}\n  ports: [{name: http, port: 80, targetPort: http}]\n`;
    case 2:
      return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  settings.conf: |\n    index=${index}\n    cache=on\n`;
    default:
      return `apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ${name}\n`;
  }
}

function overlayRepo(): { dir: string; base: string; head: string } {
  const dir = newRepo('overlay-200');
  const objects = Array.from({ length: 200 }, (_, index) => object(index));
  const files: Record<string, string> = {
    'apps/big/base/objects.yaml': objects.join('---\n'),
    'apps/big/base/kustomization.yaml': 'resources: [objects.yaml]\n',
  };
  const overlay = (version: string) =>
    `namespace: big\nresources: [../../base]\nlabels:\n  - pairs: {app.kubernetes.io/version: "${version}"}\n    includeSelectors: false\n`;
  const base = commit(dir, { ...files, 'apps/big/overlays/prod/kustomization.yaml': overlay('1.0') });
  const head = commit(dir, { 'apps/big/overlays/prod/kustomization.yaml': overlay('1.1') });
  return { dir, base, head };
}

function fiftyTargetsRepo(): { dir: string; base: string; head: string } {
  const dir = newRepo('targets-50');
  const files: Record<string, string> = {
    'shared/base/kustomization.yaml': 'resources: [objects.yaml]\n',
    'shared/base/objects.yaml': Array.from({ length: 8 }, (_, index) => object(index)).join('---\n'),
  };
  for (let app = 0; app < 50; app++)
    files[`apps/app-${String(app).padStart(2, '0')}/overlays/prod/kustomization.yaml`] =
      `namespace: app-${app}\nresources: [../../../../shared/base]\n`;
  const base = commit(dir, files);
  const head = commit(dir, {
    'shared/base/objects.yaml': Array.from({ length: 8 }, (_, index) =>
      object(index).replace('replicas: 2', 'replicas: 3'),
    ).join('---\n'),
  });
  return { dir, base, head };
}

interface Figures {
  wallMs: number;
  toolMs: number;
  checkoutMs: number;
  ourMs: number;
  archives: number;
  renders: number;
  cacheHits: number;
  commentMs: number;
  targets: number;
  objects: number;
  chars: number;
}

async function measure(
  repo: { dir: string; base: string; head: string },
  cacheDir: string,
  concurrency: number,
): Promise<Figures> {
  const archives = gitCalls.archive;
  const started = performance.now();
  const report = await renderAndDiff({
    base: LocalGitSourceTree.open(repo.dir, repo.base),
    head: LocalGitSourceTree.open(repo.dir, repo.head),
    changedPaths: null,
    options: { cacheDir, concurrency },
  });
  const rendered = performance.now();
  const comment = renderComment(report, { baseSha: repo.base, headSha: repo.head, repository: 'example/bench' });
  const wallMs = performance.now() - started;
  const toolMs = report.stats?.toolMs ?? 0;
  const checkoutMs = report.stats?.checkoutMs ?? 0;
  return {
    wallMs,
    toolMs,
    checkoutMs,
    ourMs: wallMs - (concurrency === 1 ? toolMs + checkoutMs : 0),
    archives: gitCalls.archive - archives,
    renders: report.stats?.renders ?? 0,
    cacheHits: report.stats?.renderCacheHits ?? 0,
    commentMs: performance.now() - rendered,
    targets: report.summary.targetsChecked,
    objects: report.summary.added + report.summary.changed + report.summary.removed + report.summary.renamed,
    chars: comment.length,
  };
}

function line(label: string, figures: Figures, showShare: boolean): string {
  const percent = (part: number): string => `${((part / figures.wallMs) * 100).toFixed(0)}%`;
  const share =
    showShare && figures.wallMs > 0
      ? `\n    share: kustomize ${percent(figures.toolMs)}, checkout (git archive | tar) ${percent(figures.checkoutMs)}, our code ${percent(figures.ourMs)} (${figures.ourMs.toFixed(0)} ms, of which comment ${figures.commentMs.toFixed(0)} ms)`
      : '';
  return `  ${label.padEnd(30)} ${figures.wallMs.toFixed(0).padStart(6)} ms | kustomize time ${figures.toolMs.toFixed(0).padStart(6)} ms | git archive ${figures.archives} | renders ${figures.renders} | cache hits ${figures.cacheHits}${share}`;
}

let failed = false;
try {
  for (const [name, build] of [
    ['200-object overlay', overlayRepo],
    ['50 targets, one shared base', fiftyTargetsRepo],
  ] as const) {
    const repo = build();
    const cacheSerial = join(root, `${repo.dir.split('/').pop()}-cache-serial`);
    const cold = await measure(repo, cacheSerial, 1);
    const parallel = await measure(repo, join(root, `${repo.dir.split('/').pop()}-cache-parallel`), 2);
    const warm = await measure(repo, cacheSerial, 1);
    console.log(`${name}: ${cold.targets} target(s), ${cold.objects} changed objects, comment ${cold.chars} chars`);
    console.log(line('cold, 1 render at a time', cold, true));
    console.log(line('cold, 2 renders at a time', parallel, false));
    console.log(line('warm (same SHAs again)', warm, false));
    if (warm.archives !== 0 || warm.renders !== 0) {
      console.log('  FAIL: the warm run fetched or rendered again');
      failed = true;
    }
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
