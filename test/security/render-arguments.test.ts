/**
 * Issue 31: no value of the repository is ever a flag of helm. A release name is a positional
 * argument of `helm template`, and helm reads any argument that starts with `-` as a flag:
 * `releaseName: "--set-file=leak=/proc/<pid>/environ"` printed the worker's environment in the
 * diff comment, and `--values=http://127.0.0.1:…` reached a local server.
 *
 * The table sends each field of each way in (an Argo CD Application, a Flux HelmRelease, a
 * kustomization's `helmCharts` and the charts kustomize inflates otherwise) with a leading `-`, a
 * newline, a URL and a path outside the checkout, and expects a refusal naming the file, the line
 * and the field. The last tests attack through `renderAndDiff` with the real helm 3.17 and 4.1 and
 * kustomize, in `proxy` isolation (the mode where the attack worked: /proc and loopback are
 * reachable), with a canary HTTP server on 127.0.0.1 that must see no request.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoWith as repoWithCommits } from '../support/git-repo.js';
import { LocalGitSourceTree, renderAndDiff } from '../../src/adapters/render/index.js';
import { refuseHelmChart } from '../../src/adapters/render/helm.js';
import { refuseKustomization } from '../../src/adapters/render/kustomize.js';
import { discoverTargets, renderComment, type TargetNode } from '../../src/planners/diff/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HELM3 = join(ROOT, '.cache/tools/helm-3.17/helm');
const HELM4 = join(ROOT, '.cache/tools/helm-4.1/helm');

const CHART = {
  'Chart.yaml': 'apiVersion: v2\nname: web\nversion: 0.1.0\n',
  'values.yaml': 'leak: ""\n',
  'templates/cm.yaml':
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  leak: {{ .Values.leak | quote }}\n',
};
const chartAt = (dir: string): Record<string, string> =>
  Object.fromEntries(Object.entries(CHART).map(([path, text]) => [`${dir}/${path}`, text]));

/** The four shapes of a hostile value. */
const ATTACKS = {
  'a leading -': '--set-file=leak=/proc/self/environ',
  'a newline': 'web\n--set-file=leak=/proc/self/environ',
  'a URL': 'http://127.0.0.1:9/leak',
  'a path outside the checkout': '../../../../../../etc/passwd',
} as const;
type Attack = keyof typeof ATTACKS;

/**
 * One field of one way in: the files of a repository with `$V` where the value goes (written as
 * a YAML double-quoted string), the file that holds it and the field as refusals name it; the
 * target is the one with `id`. `not` lists attacks that are what the tool expects for this field.
 */
interface Field {
  way: 'Argo CD' | 'Flux' | 'kustomize';
  field: string;
  file: string;
  files: Record<string, string>;
  id: string;
  not?: Attack[];
}

const app = (helm: string, extra = '', name = 'web') =>
  `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: ${name}\nspec:\n  destination:\n    namespace: ${extra.includes('DESTINATION') ? '$V' : 'web'}\n  source:\n    path: charts/web\n    helm:\n${helm}`;
const release = (spec: string, metadata = '  name: web\n  namespace: apps\n') =>
  `apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n${metadata}spec:\n  chart:\n    spec:\n      chart: charts/web\n      sourceRef: {kind: GitRepository, name: repo}\n${spec}`;
const K = 'app/kustomization.yaml';
const kustomization = (chart: string): Record<string, string> => ({
  [K]: `helmCharts:\n  - name: web\n${chart}`,
  ...chartAt('app/charts/web'),
});

const FIELDS: Field[] = [
  {
    way: 'Argo CD',
    field: 'spec.source.helm.releaseName',
    file: 'apps/web.yaml',
    files: { 'apps/web.yaml': app('      releaseName: $V\n'), ...chartAt('charts/web') },
    id: 'argocd:web',
  },
  {
    way: 'Argo CD',
    field: 'metadata.name',
    file: 'apps/web.yaml',
    files: { 'apps/web.yaml': app('      skipTests: true\n', '', '$V'), ...chartAt('charts/web') },
    id: 'argocd:$V',
  },
  {
    way: 'Argo CD',
    field: 'spec.source.helm.namespace',
    file: 'apps/web.yaml',
    files: { 'apps/web.yaml': app('      namespace: $V\n'), ...chartAt('charts/web') },
    id: 'argocd:web',
  },
  {
    way: 'Argo CD',
    field: 'spec.destination.namespace',
    file: 'apps/web.yaml',
    files: { 'apps/web.yaml': app('      skipTests: true\n', 'DESTINATION'), ...chartAt('charts/web') },
    id: 'argocd:web',
  },
  {
    way: 'Argo CD',
    field: 'spec.source.helm.valueFiles[0]',
    file: 'apps/web.yaml',
    files: { 'apps/web.yaml': app('      valueFiles:\n        - $V\n'), ...chartAt('charts/web') },
    id: 'argocd:web',
    // Argo CD fetches values files over HTTP; Escalator never does, and names the release as not rendered.
    not: ['a URL'],
  },
  {
    way: 'Argo CD',
    field: 'spec.source.helm.parameters[0].name',
    file: 'apps/web.yaml',
    files: {
      'apps/web.yaml': app('      parameters:\n        - name: $V\n          value: x\n'),
      ...chartAt('charts/web'),
    },
    id: 'argocd:web',
    // A `--set` key is any text (`a\.b/c:d` is a key); joined as `--set=<name>=<value>` it is never a flag.
    not: ['a URL', 'a path outside the checkout'],
  },
  {
    way: 'Flux',
    field: 'spec.releaseName',
    file: 'flux/web.yaml',
    files: { 'flux/web.yaml': release('  releaseName: $V\n'), ...chartAt('charts/web') },
    id: 'flux:apps/web',
  },
  {
    way: 'Flux',
    field: 'spec.targetNamespace',
    file: 'flux/web.yaml',
    files: { 'flux/web.yaml': release('  targetNamespace: $V\n'), ...chartAt('charts/web') },
    id: 'flux:apps/web',
  },
  {
    way: 'Flux',
    field: 'spec.storageNamespace',
    file: 'flux/web.yaml',
    files: { 'flux/web.yaml': release('  storageNamespace: $V\n'), ...chartAt('charts/web') },
    id: 'flux:apps/web',
  },
  {
    way: 'Flux',
    field: 'metadata.namespace',
    file: 'flux/web.yaml',
    files: { 'flux/web.yaml': release('  interval: 5m\n', '  name: web\n  namespace: $V\n'), ...chartAt('charts/web') },
    id: 'flux:$V/web',
  },
  {
    way: 'Flux',
    field: 'spec.chart.spec.version',
    file: 'flux/web.yaml',
    files: {
      'flux/web.yaml': release('  interval: 5m\n').replace(
        '      chart: charts/web\n',
        '      chart: charts/web\n      version: $V\n',
      ),
      ...chartAt('charts/web'),
    },
    id: 'flux:apps/web',
  },
  {
    way: 'Flux',
    field: 'spec.chart.spec.valuesFiles[0]',
    file: 'flux/web.yaml',
    files: {
      'flux/web.yaml': release('  interval: 5m\n').replace(
        '      chart: charts/web\n',
        '      chart: charts/web\n      valuesFiles:\n        - $V\n',
      ),
      ...chartAt('charts/web'),
    },
    id: 'flux:apps/web',
  },
  ...(
    [
      ['releaseName', 'helmCharts[0].releaseName'],
      ['namespace', 'helmCharts[0].namespace'],
      ['nameTemplate', 'helmCharts[0].nameTemplate'],
      ['version', 'helmCharts[0].version'],
      ['kubeVersion', 'helmCharts[0].kubeVersion'],
      ['valuesFile', 'helmCharts[0].valuesFile'],
    ] as const
  ).map(([key, field]): Field => ({
    way: 'kustomize',
    field,
    file: K,
    files: kustomization(`    ${key}: $V\n`),
    id: 'app',
  })),
  {
    way: 'kustomize',
    field: 'helmCharts[0].apiVersions[0]',
    file: K,
    files: kustomization('    apiVersions:\n      - $V\n'),
    id: 'app',
  },
  {
    way: 'kustomize',
    field: 'helmCharts[0].additionalValuesFiles[0]',
    file: K,
    files: kustomization('    additionalValuesFiles:\n      - $V\n'),
    id: 'app',
  },
  {
    way: 'kustomize',
    field: 'helmCharts[1].name',
    file: K,
    files: kustomization('  - name: $V\n'),
    id: 'app',
  },
  {
    way: 'kustomize',
    field: 'helmChartInflationGenerator[0].releaseName',
    file: K,
    files: {
      [K]: 'helmChartInflationGenerator:\n  - chartName: web\n    releaseName: $V\n',
      ...chartAt('app/charts/web'),
    },
    id: 'app',
  },
  {
    way: 'kustomize',
    field: 'helmChartInflationGenerator[0].chartVersion',
    file: K,
    files: {
      [K]: 'helmChartInflationGenerator:\n  - chartName: web\n    chartVersion: $V\n',
      ...chartAt('app/charts/web'),
    },
    id: 'app',
  },
  {
    way: 'kustomize',
    field: 'releaseName',
    file: 'app/helm.yaml',
    files: {
      [K]: 'generators: [helm.yaml]\n',
      'app/helm.yaml':
        'apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata: {name: web}\nname: web\nreleaseName: $V\n',
      ...chartAt('app/charts/web'),
    },
    id: 'app',
  },
];

/** The files with the value written in, and the line it is on (1-based). */
function withValue(field: Field, value: string): { files: Record<string, string>; line: number } {
  const quoted = JSON.stringify(value);
  const template = field.files[field.file] as string;
  const line = template.split('\n').findIndex((text) => text.includes('$V')) + 1;
  const files = Object.fromEntries(
    Object.entries(field.files).map(([path, text]) => [path, text.split('$V').join(quoted)]),
  );
  return { files, line };
}

function refusalOf(node: TargetNode): string | undefined {
  return node.kind === 'helm' ? refuseHelmChart(node) : refuseKustomization(node, [], false);
}

describe('values of the repository bound for helm', () => {
  const cells = FIELDS.flatMap((field) =>
    (Object.keys(ATTACKS) as Attack[])
      .filter((attack) => !field.not?.includes(attack))
      .map((attack) => [`${field.way} ${field.field} with ${attack}`, field, attack] as const),
  );

  it.each(cells)('refuses %s, naming its file, line and field', (_name, field, attack) => {
    const value = ATTACKS[attack];
    const { files, line } = withValue(field, value);
    const tree = { files: Object.keys(files).sort(), read: (path: string) => files[path] };
    const node = discoverTargets(tree).find((candidate) => candidate.id === field.id.split('$V').join(value));
    expect(node, 'the target').toBeDefined();
    const refusal = refusalOf(node as TargetNode);
    expect(refusal).toMatch(/^refused: /);
    expect(refusal).toContain(`${field.file} line ${line} ${field.field}`);
  });

  it('names an Argo CD values file that is a URL as not rendered, with its file and line', () => {
    const { files, line } = withValue(
      FIELDS.find((field) => field.field === 'spec.source.helm.valueFiles[0]') as Field,
      ATTACKS['a URL'],
    );
    const [node] = discoverTargets({ files: Object.keys(files).sort(), read: (path) => files[path] }).filter(
      (candidate) => candidate.id === 'argocd:web',
    );
    expect(node?.release?.skip).toBe(
      `the values file http://127.0.0.1:9/leak (apps/web.yaml line ${line} spec.source.helm.valueFiles[0]) is remote; values files are never fetched while rendering a pull request`,
    );
  });

  it('leaves values that are what helm expects alone', () => {
    const files: Record<string, string> = {
      'apps/web.yaml': app(
        '      releaseName: web-1.prod\n      namespace: web\n      valueFiles: [values.yaml]\n      parameters: [{name: "a\\\\.b/c", value: x}]\n',
      ),
      'flux/web.yaml': release(
        '  releaseName: web\n  targetNamespace: prod\n  storageNamespace: flux-system\n',
      ).replace('      chart: charts/web\n', '      chart: charts/web\n      version: ">=0.1.0 <1.0.0"\n'),
      [K]: 'helmCharts:\n  - name: web\n    version: 0.1.0\n    releaseName: web\n    namespace: web\n    nameTemplate: \'web-{{ "x" | upper | lower }}\'\n    kubeVersion: v1.31.2\n    apiVersions: [monitoring.coreos.com/v1/ServiceMonitor, v1]\n    valuesFile: values.yaml\n',
      'app/values.yaml': 'leak: ""\n',
      ...chartAt('charts/web'),
      ...chartAt('app/charts/web'),
    };
    const nodes = discoverTargets({ files: Object.keys(files).sort(), read: (path) => files[path] });
    for (const id of ['argocd:web', 'flux:apps/web', 'app'])
      expect(refusalOf(nodes.find((node) => node.id === id) as TargetNode), id).toBeUndefined();
  });

  it('refuses a name template that reads the environment or resolves a host', () => {
    for (const template of [
      '{{ env "PRIVATE_KEY" }}',
      '{{expandenv "$WEBHOOK_SECRET"}}',
      '{{ getHostByName "x.example" }}',
    ]) {
      const files: Record<string, string> = {
        [K]: `helmCharts:\n  - name: web\n    nameTemplate: ${JSON.stringify(template)}\n`,
        ...chartAt('app/charts/web'),
      };
      const [node] = discoverTargets({ files: Object.keys(files).sort(), read: (path) => files[path] });
      expect(refusalOf(node as TargetNode)).toContain(`${K} line 3 helmCharts[0].nameTemplate`);
    }
  });
});

describe('the attack through renderAndDiff with the real helm and kustomize, in proxy isolation', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'escalator-arguments-'));
  let canary: Server;
  const hits: string[] = [];
  let port = 0;
  beforeAll(async () => {
    canary = createServer((request, response) => {
      hits.push(`${request.method} ${request.url}`);
      response.end('leak: CANARY-values-from-loopback\n');
    });
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
    port = (canary.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => canary.close(() => resolve()));
    rmSync(scratch, { recursive: true, force: true });
  });

  const repoWith = (...commits: Array<Record<string, string>>) => repoWithCommits(scratch, ...commits);

  it('takes no revision that git would read as an option', () => {
    const { dir, shas } = repoWith({ 'a.yaml': 'a: 1\n' });
    const marker = join(scratch, 'written-by-git');
    expect(() => LocalGitSourceTree.open(dir, `--output=${marker}`)).toThrow(
      `"--output=${marker}" is not a revision (it starts with "-", which git reads as an option); name a branch, tag or commit SHA`,
    );
    expect(() => LocalGitSourceTree.merge(dir, shas[0] as string, '--output=x')).toThrow('is not a commit SHA');
    expect(LocalGitSourceTree.open(dir, 'main').sha).toBe(shas[0]);
  });

  /** What this worker's environment holds, as helm would print it from /proc (the comment cuts long lines, so every entry counts). */
  const environ = readFileSync(`/proc/${process.pid}/environ`, 'utf8')
    .split('\0')
    .filter((entry) => entry.length >= 16 && entry.includes('='));

  it.each([
    ['helm 3.17', HELM3],
    ['helm 4.1', HELM4],
  ])(
    'with %s: the --set-file release name prints no environment, the --values release name fetches nothing, and a good release renders',
    async (name, helm) => {
      const steal = `--set-file=leak=/proc/${process.pid}/environ`;
      const fetch = `--values=http://127.0.0.1:${port}/values.yaml`;
      const base = {
        ...chartAt('charts/web'),
        ...chartAt('kust/charts/web'),
        'apps/good.yaml': app('      releaseName: good-web\n', '', 'good'),
      };
      const { dir, shas } = repoWith(base, {
        'apps/good.yaml': app('      releaseName: good-web-2\n', '', 'good'),
        'apps/steal.yaml': app(`      releaseName: ${JSON.stringify(steal)}\n`, '', 'steal'),
        'flux/fetch.yaml': release(`  releaseName: ${JSON.stringify(fetch)}\n`, '  name: fetch\n  namespace: apps\n'),
        'kust/kustomization.yaml': `helmCharts:\n  - name: web\n    releaseName: ${JSON.stringify(steal)}\n`,
      });
      const report = await renderAndDiff({
        base: LocalGitSourceTree.open(dir, shas[0] as string),
        head: LocalGitSourceTree.open(dir, shas[1] as string),
        changedPaths: null,
        options: { cacheDir: join(scratch, `cache-${name.replace(/\W/g, '')}`), isolation: 'proxy', tools: { helm } },
      });
      const body = renderComment(report, {
        baseSha: shas[0] as string,
        headSha: shas[1] as string,
        repository: 'example/gitops',
      });
      expect(environ.length).toBeGreaterThan(0);
      for (const entry of environ) expect(body).not.toContain(entry.slice(0, 40));
      expect(hits).toEqual([]);
      expect(body).not.toContain('CANARY-values-from-loopback');

      const byId = new Map(report.targets.map((target) => [target.id, target]));
      const refusal = (id: string): string => byId.get(id)?.failure?.message ?? `no failure: ${byId.get(id)?.status}`;
      expect(refusal('argocd:steal')).toBe(
        `refused: values that reach helm's command line are not what helm expects (apps/steal.yaml line 11 spec.source.helm.releaseName: ${steal} is not a Helm release name (lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at most 53 characters)); correct them and push again`,
      );
      expect(refusal('flux:apps/fetch')).toContain(
        `flux/fetch.yaml line 11 spec.releaseName: ${fetch} is not a Helm release name`,
      );
      expect(refusal('kust')).toContain(
        `kust/kustomization.yaml line 3 helmCharts[0].releaseName: ${steal} is not a Helm release name`,
      );
      for (const id of ['argocd:steal', 'flux:apps/fetch', 'kust']) expect(body).toContain(refusal(id));

      // The good release renders through `helm template … -- <release> <chart>`: the name is its own.
      const good = byId.get('argocd:good');
      expect(good?.failure).toBeUndefined();
      expect(JSON.stringify(good?.objects)).toContain('good-web-2');
    },
    120_000,
  );
});
