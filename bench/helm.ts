/**
 * `npx tsx bench/helm.ts`: what rendering a Helm release target costs, against bare `helm template`.
 *
 * 1. build a git repository: a chart of 60 objects (20 Deployments, Services and ConfigMaps from a
 *    list in its values) deployed by an Argo CD Application with a values file, inline values and
 *    parameters; head changes the Application's image tag
 * 2. per helm (helm 3.17 and 4.1 from scripts/fetch-helm.sh, or BENCH_HELM): the
 *    baseline — bare `helm template` with the same flags on a plain checkout, no sandbox — then
 *    Escalator's cold run (render both sides in the sandbox, diff, comment; fresh caches each time),
 *    then a warm run on the same SHAs; RUNS runs each (default 5), medians printed
 * 3. the same for the same chart with a podinfo-like test hook named with `randAlphaNum`
 *    (issue 36): Escalator renders such a chart twice per side to tell what is random, so its
 *    cold run is set beside the plain chart's and beside bare helm; the comment must not count
 *    the hook as a change
 * 4. exit non-zero when the warm run renders anything or the release does not render
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalGitSourceTree, renderAndDiff } from '../src/adapters/render/index.js';
import { renderComment } from '../src/planners/diff/index.js';

const RUNS = Math.max(1, Math.min(20, Number(process.env.RUNS ?? 5)));
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'escalator-bench-helm-'));
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

function commit(dir: string, files: Record<string, string>): string {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'bench');
  return git(dir, 'rev-parse', 'HEAD');
}

const chart: Record<string, string> = {
  'charts/shop/Chart.yaml': 'apiVersion: v2\nname: shop\nversion: 1.0.0\n',
  'charts/shop/values.yaml': [
    'image: {repository: ghcr.io/example/shop, tag: "1.0.0"}',
    'replicas: 2',
    'services:',
    ...Array.from(
      { length: 20 },
      (_, index) => `  - {name: svc-${String(index).padStart(2, '0')}, port: ${8000 + index}}`,
    ),
    '',
  ].join('\n'),
  'charts/shop/values-prod.yaml': 'replicas: 4\n',
  'charts/shop/templates/_helpers.tpl':
    '{{- define "shop.labels" -}}\napp.kubernetes.io/instance: {{ .root.Release.Name }}\napp.kubernetes.io/component: {{ .name }}\nhelm.sh/chart: {{ .root.Chart.Name }}-{{ .root.Chart.Version }}\n{{- end -}}\n',
  'charts/shop/templates/services.yaml': [
    '{{- range .Values.services }}',
    '---',
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: {{ $.Release.Name }}-{{ .name }}',
    '  namespace: {{ $.Release.Namespace }}',
    '  labels: {{- include "shop.labels" (dict "root" $ "name" .name) | nindent 4 }}',
    'spec:',
    '  replicas: {{ $.Values.replicas }}',
    '  selector:',
    '    matchLabels: {{- include "shop.labels" (dict "root" $ "name" .name) | nindent 6 }}',
    '  template:',
    '    metadata:',
    '      labels: {{- include "shop.labels" (dict "root" $ "name" .name) | nindent 8 }}',
    '    spec:',
    '      containers:',
    '        - name: {{ .name }}',
    '          image: "{{ $.Values.image.repository }}:{{ $.Values.image.tag }}"',
    '          ports: [{name: http, containerPort: {{ .port }}}]',
    '          env: [{name: LOG_LEVEL, value: {{ $.Values.logLevel | default "info" | quote }}}]',
    '---',
    'apiVersion: v1',
    'kind: Service',
    'metadata:',
    '  name: {{ $.Release.Name }}-{{ .name }}',
    '  namespace: {{ $.Release.Namespace }}',
    'spec:',
    '  selector: {{- include "shop.labels" (dict "root" $ "name" .name) | nindent 4 }}',
    '  ports: [{name: http, port: 80, targetPort: http}]',
    '---',
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: {{ $.Release.Name }}-{{ .name }}',
    '  namespace: {{ $.Release.Namespace }}',
    'data:',
    '  port: {{ .port | quote }}',
    '{{- end }}',
    '',
  ].join('\n'),
};

const application = (tag: string): string =>
  [
    'apiVersion: argoproj.io/v1alpha1',
    'kind: Application',
    'metadata: {name: shop-prod, namespace: argocd}',
    'spec:',
    '  destination: {namespace: shop}',
    '  source:',
    '    repoURL: https://github.com/example/gitops.git',
    '    path: charts/shop',
    '    helm:',
    '      valueFiles: [values-prod.yaml]',
    '      values: |',
    '        logLevel: warn',
    '      parameters:',
    `        - {name: image.tag, value: "${tag}"}`,
    '',
  ].join('\n');

/** A test hook whose name is random on every render, as podinfo's are. */
const randomHook: Record<string, string> = {
  'charts/shop/templates/tests/connection.yaml': [
    'apiVersion: v1',
    'kind: Pod',
    'metadata:',
    '  name: {{ .Release.Name }}-test-{{ randAlphaNum 5 | lower }}',
    '  annotations: {"helm.sh/hook": test}',
    'spec:',
    '  containers: [{name: curl, image: curlimages/curl, command: [curl, "{{ .Release.Name }}-svc-00"]}]',
    '  restartPolicy: Never',
    '',
  ].join('\n'),
};

interface BenchRepo {
  name: string;
  dir: string;
  baseSha: string;
  headSha: string;
}

function benchRepo(name: string, extra: Record<string, string>): BenchRepo {
  const dir = join(root, name);
  mkdirSync(dir);
  git(dir, 'init', '-q', '-b', 'main');
  const baseSha = commit(dir, { ...chart, ...extra, 'argocd/shop.yaml': application('1.0.0') });
  const headSha = commit(dir, { 'argocd/shop.yaml': application('1.1.0') });
  return { name, dir, baseSha, headSha };
}

const repos = [benchRepo('plain chart', {}), benchRepo('chart with a random test hook', randomHook)];

const helms = (
  process.env.BENCH_HELM
    ? [['BENCH_HELM', process.env.BENCH_HELM]]
    : [
        ['3.17', join(ROOT, '.cache/tools/helm-3.17/helm')],
        ['4.1', join(ROOT, '.cache/tools/helm-4.1/helm')],
      ]
).filter(([, path]) => existsSync(path as string)) as Array<[string, string]>;
if (helms.length === 0) {
  console.error('no helm found: run scripts/fetch-helm.sh 3.17 4.1, or set BENCH_HELM');
  process.exit(2);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** Bare helm: the same release rendered at both commits with the same flags, no sandbox, no diff. */
function bare(helm: string, { dir: repo, baseSha, headSha }: BenchRepo): number {
  const started = performance.now();
  for (const [sha, tag] of [
    [baseSha, '1.0.0'],
    [headSha, '1.1.0'],
  ] as const) {
    const dir = join(root, `bare-${sha}`);
    if (!existsSync(dir)) {
      mkdirSync(dir);
      execFileSync('sh', ['-c', `git -C "${repo}" archive ${sha} | tar -x -C "${dir}"`], { env });
      writeFileSync(join(dir, 'inline-values.yaml'), 'logLevel: warn\n');
    }
    execFileSync(
      helm,
      [
        'template',
        'shop-prod',
        './charts/shop',
        '--namespace',
        'shop',
        '--values',
        './charts/shop/values-prod.yaml',
        '--values',
        './inline-values.yaml',
        '--set',
        `image.tag=${tag}`,
        '--include-crds',
      ],
      { cwd: dir, env: { PATH: env.PATH, HOME: root }, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 },
    );
  }
  return performance.now() - started;
}

async function ours(
  helm: string,
  { dir: repo, baseSha, headSha }: BenchRepo,
  cacheDir: string,
): Promise<{ wallMs: number; toolMs: number; renders: number; changed: number; status: string; counted: number }> {
  const started = performance.now();
  const report = await renderAndDiff({
    base: LocalGitSourceTree.open(repo, baseSha),
    head: LocalGitSourceTree.open(repo, headSha),
    changedPaths: null,
    options: { cacheDir, concurrency: 1, tools: { helm } },
  });
  renderComment(report, { baseSha, headSha, repository: 'example/bench' });
  const target = report.targets.find((diff) => diff.id === 'argocd:shop-prod');
  return {
    wallMs: performance.now() - started,
    toolMs: report.stats?.toolMs ?? 0,
    renders: report.stats?.renders ?? 0,
    changed: target?.counts.changed ?? 0,
    status: target?.status ?? 'missing',
    // Every object counted at all: added, removed and recreated must stay 0 with a random hook.
    counted: target ? Object.values(target.counts).reduce((sum, count) => sum + count, 0) : 0,
  };
}

const load = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
let failed = false;
try {
  console.log(
    `Helm release target (argocd:shop-prod, 60 objects, 20 change): ${RUNS} runs each, medians; load ${load()}`,
  );
  for (const [version, helm] of helms) {
    for (const repo of repos) {
      const baseline: number[] = [];
      const cold: Array<Awaited<ReturnType<typeof ours>>> = [];
      const cache = (run: number): string => join(root, `cache-${version}-${repos.indexOf(repo)}-${run}`);
      for (let run = 0; run < RUNS; run++) baseline.push(bare(helm, repo));
      for (let run = 0; run < RUNS; run++) cold.push(await ours(helm, repo, cache(run)));
      const warm = await ours(helm, repo, cache(0));
      const first = cold[0];
      // 60 objects: 20 changed, 40 unchanged; the random hook is never counted.
      if (!first || first.status !== 'changed' || first.changed !== 20 || first.counted !== 60) {
        console.log(
          `  FAIL: helm ${version}, ${repo.name}: the release did not render as expected (${first?.status}, ${first?.changed} changed, ${first?.counted} counted)`,
        );
        failed = true;
      }
      const bareMs = median(baseline);
      const coldMs = median(cold.map((figures) => figures.wallMs));
      const toolMs = median(cold.map((figures) => figures.toolMs));
      console.log(
        `  helm ${version}, ${repo.name}: bare helm template x2 ${bareMs.toFixed(0)} ms | Escalator cold ${coldMs.toFixed(0)} ms (helm in sandbox ${toolMs.toFixed(0)} ms, renders ${first?.renders}) = ${(coldMs / bareMs).toFixed(2)}x bare | warm ${warm.wallMs.toFixed(0)} ms (renders ${warm.renders})`,
      );
      if (warm.renders !== 0) {
        console.log(`  FAIL: helm ${version}, ${repo.name}: the warm run rendered again`);
        failed = true;
      }
    }
  }
  console.log(`load after: ${load()}`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
