/**
 * The render pre-check (issue 22, section 1): before kustomize or helm runs, a target that would
 * fetch something remote, read outside the repository, or that Escalator cannot read the way the
 * tool reads it is refused, with one reason naming the file, the field and the value.
 *
 * The table drives the pure planner (`discoverTargets`) and the refusal text the adapters print;
 * the last tests go through `renderAndDiff` with the real `kubectl kustomize` and a canary HTTP
 * server on 127.0.0.1 that must receive no request.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitEnv, repoWith as repoWithCommits, runGit } from '../support/git-repo.js';
import { LocalGitSourceTree, renderAndDiff, type SourceTree } from '../../src/adapters/render/index.js';
import { refuseHelmChart } from '../../src/adapters/render/helm.js';
import { refuseKustomization } from '../../src/adapters/render/kustomize.js';
import {
  discoverTargets,
  renderCheckSummary,
  renderComment,
  type TargetNode,
  type TreeView,
} from '../../src/planners/diff/index.js';

const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {v: "1"}\n`;

/** A tree of text files; `symlinks` maps a link's path to its target (as git stores it). */
function tree(files: Record<string, string>, symlinks: Record<string, string> = {}): TreeView {
  const all: Record<string, string> = { ...files, ...symlinks };
  return { files: Object.keys(all).sort(), read: (path) => all[path], isSymlink: (path) => path in symlinks };
}

function refusalOf(node: TargetNode | undefined): string | undefined {
  if (!node) return 'no such target';
  return node.kind === 'helm' ? refuseHelmChart(node) : refuseKustomization(node, [], false);
}

const REMOTE = (what: string) => `refused: remote resources are not fetched (${what}); vendor them into the repository`;
const OUTSIDE = (what: string) =>
  `refused: Escalator never reads outside the repository (${what}); keep everything the overlay uses inside the repository`;
const UNREADABLE = (what: string) =>
  `refused: Escalator cannot tell what this target reads (${what}); write the kustomization as one YAML mapping of the fields kustomize documents, and push again`;
const K = 'app/kustomization.yaml';
const TARBALL = '../../tarballs/other-org/gitops/0123456789abcdef0123456789abcdef01234567';

interface Probe {
  name: string;
  files: Record<string, string>;
  symlinks?: Record<string, string>;
  id?: string;
  refused: string;
}

const probes: Probe[] = [
  // Remote references outside `resources`: every field kustomize loads through its file loader
  // (which fetches http/https URLs) or clones through its git loader.
  {
    name: 'configMapGenerator files in the key=path form',
    files: { [K]: 'configMapGenerator:\n  - name: leak\n    files: [creds=http://10.0.0.1/latest/meta-data]\n' },
    refused: REMOTE(`${K} line 3 configMapGenerator[0].files[0]: creds=http://10.0.0.1/latest/meta-data`),
  },
  {
    name: 'configMapGenerator files with an upper-case scheme',
    files: { [K]: 'configMapGenerator:\n  - name: leak\n    files: [HTTP://10.0.0.1/x]\n' },
    refused: REMOTE(`${K} line 3 configMapGenerator[0].files[0]: HTTP://10.0.0.1/x`),
  },
  {
    name: 'secretGenerator envs',
    files: { [K]: 'secretGenerator:\n  - name: leak\n    envs: [https://10.0.0.1/x.env]\n' },
    refused: REMOTE(`${K} line 3 secretGenerator[0].envs[0]: https://10.0.0.1/x.env`),
  },
  {
    name: 'secretGenerator env (the deprecated single form)',
    files: { [K]: 'secretGenerator:\n  - name: leak\n    env: Https://10.0.0.1/x.env\n' },
    refused: REMOTE(`${K} line 3 secretGenerator[0].env: Https://10.0.0.1/x.env`),
  },
  {
    name: 'patches[].path',
    files: { [K]: 'resources: [cm.yaml]\npatches:\n  - path: http://10.0.0.1/p.yaml\n', 'app/cm.yaml': cm('a') },
    refused: REMOTE(`${K} line 3 patches[0].path: http://10.0.0.1/p.yaml`),
  },
  {
    name: 'patchesStrategicMerge',
    files: {
      [K]: 'resources: [cm.yaml]\npatchesStrategicMerge:\n  - https://10.0.0.1/p.yaml\n',
      'app/cm.yaml': cm('a'),
    },
    refused: REMOTE(`${K} line 3 patchesStrategicMerge[0]: https://10.0.0.1/p.yaml`),
  },
  {
    name: 'patchesJson6902[].path',
    files: {
      [K]: 'resources: [cm.yaml]\npatchesJson6902:\n  - target: {kind: ConfigMap, name: a}\n    path: https://10.0.0.1/p.yaml\n',
      'app/cm.yaml': cm('a'),
    },
    refused: REMOTE(`${K} line 4 patchesJson6902[0].path: https://10.0.0.1/p.yaml`),
  },
  {
    name: 'replacements[].path',
    files: { [K]: 'resources: [cm.yaml]\nreplacements:\n  - path: http://10.0.0.1/r.yaml\n', 'app/cm.yaml': cm('a') },
    refused: REMOTE(`${K} line 3 replacements[0].path: http://10.0.0.1/r.yaml`),
  },
  {
    name: 'crds',
    files: { [K]: 'resources: [cm.yaml]\ncrds: [http://10.0.0.1/crd.json]\n', 'app/cm.yaml': cm('a') },
    refused: REMOTE(`${K} line 2 crds[0]: http://10.0.0.1/crd.json`),
  },
  {
    name: 'configurations',
    files: { [K]: 'resources: [cm.yaml]\nconfigurations: [http://10.0.0.1/c.yaml]\n', 'app/cm.yaml': cm('a') },
    refused: REMOTE(`${K} line 2 configurations[0]: http://10.0.0.1/c.yaml`),
  },
  {
    name: 'openapi.path',
    files: { [K]: 'resources: [cm.yaml]\nopenapi:\n  path: http://10.0.0.1/schema.json\n', 'app/cm.yaml': cm('a') },
    refused: REMOTE(`${K} line 3 openapi.path: http://10.0.0.1/schema.json`),
  },
  {
    name: 'helmCharts[].valuesFile',
    files: {
      [K]: 'helmCharts:\n  - name: web\n    valuesFile: http://10.0.0.1/values.yaml\n',
      'app/charts/web/Chart.yaml': 'name: web\n',
    },
    refused: REMOTE(`${K} line 3 helmCharts[0].valuesFile: http://10.0.0.1/values.yaml`),
  },
  {
    name: 'helmCharts[].additionalValuesFiles',
    files: {
      [K]: 'helmCharts:\n  - name: web\n    additionalValuesFiles: [http://10.0.0.1/values.yaml]\n',
      'app/charts/web/Chart.yaml': 'name: web\n',
    },
    refused: REMOTE(`${K} line 3 helmCharts[0].additionalValuesFiles[0]: http://10.0.0.1/values.yaml`),
  },
  {
    name: 'helmChartInflationGenerator values (the deprecated chart form)',
    files: {
      [K]: 'helmChartInflationGenerator:\n  - chartName: web\n    values: http://10.0.0.1/values.yaml\n',
      'app/charts/web/Chart.yaml': 'name: web\n',
    },
    refused: REMOTE(`${K} line 3 helmChartInflationGenerator[0].values: http://10.0.0.1/values.yaml`),
  },
  {
    name: 'a git resource over ssh with an upper-case scheme',
    files: { [K]: 'resources: [SSH://git@10.0.0.1/org/repo.git]\n' },
    refused: REMOTE('SSH://git@10.0.0.1/org/repo.git'),
  },
  {
    name: 'a git resource in scp form with any user name',
    files: { [K]: 'resources: [deploy@10.0.0.1:org/repo]\n' },
    refused: REMOTE('deploy@10.0.0.1:org/repo'),
  },
  {
    name: 'a GitHub base with a mixed-case host',
    files: { [K]: 'bases: [GitHub.com/org/repo]\n' },
    refused: REMOTE('GitHub.com/org/repo'),
  },
  {
    name: 'a remote component',
    files: { [K]: 'components: [Https://10.0.0.1/org/repo//c]\n' },
    refused: REMOTE('Https://10.0.0.1/org/repo//c'),
  },
  {
    name: 'an inline builtin generator that reads a URL',
    files: {
      [K]: 'generators:\n  - |\n    apiVersion: builtin\n    kind: ConfigMapGenerator\n    metadata: {name: leak}\n    files: [creds=http://10.0.0.1/x]\n',
    },
    refused: REMOTE(`${K} generators[0] files[0]: creds=http://10.0.0.1/x`),
  },
  {
    name: 'a builtin transformer file that patches from a URL',
    files: {
      [K]: 'resources: [cm.yaml]\ntransformers: [patch.yaml]\n',
      'app/cm.yaml': cm('a'),
      'app/patch.yaml':
        'apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: p}\npath: https://10.0.0.1/p.yaml\n',
    },
    refused: REMOTE('app/patch.yaml path: https://10.0.0.1/p.yaml'),
  },

  // Reads outside the repository: file://, absolute paths, ../ past the root — also into the shared tarball cache.
  {
    name: 'a file:// git resource',
    files: { [K]: 'resources: [file:///var/cache/escalator/tarballs/other-org/gitops]\n' },
    refused: REMOTE('file:///var/cache/escalator/tarballs/other-org/gitops'),
  },
  {
    name: "helmGlobals.chartHome in another tenant's cached repository",
    files: { [K]: `helmGlobals:\n  chartHome: ${TARBALL}/charts\nhelmCharts:\n  - name: web\n` },
    refused: OUTSIDE(`${K} line 2 helmGlobals.chartHome reads ${TARBALL}/charts`),
  },
  {
    name: 'helmGlobals.chartHome as an absolute path',
    files: { [K]: 'helmGlobals:\n  chartHome: /etc\nhelmCharts:\n  - name: web\n' },
    refused: OUTSIDE(`${K} line 2 helmGlobals.chartHome reads /etc`),
  },
  {
    name: 'helmGlobals.configHome outside the repository',
    files: {
      [K]: 'helmGlobals:\n  configHome: /root/.config/helm\nhelmCharts:\n  - name: web\n',
      'app/charts/web/Chart.yaml': 'name: web\n',
    },
    refused: OUTSIDE(`${K} line 2 helmGlobals.configHome reads /root/.config/helm`),
  },
  {
    name: 'a chart name that climbs out of chartHome',
    files: { [K]: `helmCharts:\n  - name: ../${TARBALL}/chart\n` },
    refused: OUTSIDE(`${K} line 2 helmCharts[0].name reads ../${TARBALL}/chart`),
  },
  {
    name: 'helmChartInflationGenerator chartHome as an absolute path',
    files: { [K]: 'helmChartInflationGenerator:\n  - chartName: web\n    chartHome: /var/cache\n' },
    refused: OUTSIDE(`${K} line 3 helmChartInflationGenerator[0].chartHome reads /var/cache`),
  },

  // What the YAML 1.2 parser did not see: Go's case-insensitive field names, merge keys, several documents.
  {
    name: 'a field name in another case (Go JSON matches field names case-insensitively)',
    files: { [K]: 'Resources: [https://10.0.0.1/x.yaml]\n' },
    refused: REMOTE('https://10.0.0.1/x.yaml'),
  },
  {
    name: 'a generator field name in another case',
    files: { [K]: 'configmapgenerator:\n  - name: leak\n    FILES: [creds=http://10.0.0.1/x]\n' },
    refused: REMOTE(`${K} line 3 configmapgenerator[0].FILES[0]: creds=http://10.0.0.1/x`),
  },
  {
    name: 'a field name with a Unicode fold (ſ folds to s in Go)',
    files: { [K]: 're\u017fources: [https://10.0.0.1/x.yaml]\n' },
    refused: REMOTE('https://10.0.0.1/x.yaml'),
  },
  {
    name: 'a merge key that adds generator files',
    files: {
      [K]: 'configMapGenerator:\n  - name: ok\n    literals: [a=b]\n  - <<: {name: leak, files: [creds=http://10.0.0.1/x]}\n',
    },
    refused: REMOTE(`${K} line 4 configMapGenerator[1].files[0]: creds=http://10.0.0.1/x`),
  },
  {
    name: 'a merge key at the top level',
    files: { [K]: '<<: {resources: [https://10.0.0.1/x.yaml]}\n' },
    refused: REMOTE('https://10.0.0.1/x.yaml'),
  },
  {
    name: 'a second YAML document',
    files: { [K]: 'resources: [https://10.0.0.1/x.yaml]\n---\nresources: [cm.yaml]\n', 'app/cm.yaml': cm('a') },
    refused: REMOTE('https://10.0.0.1/x.yaml'),
  },

  // "Cannot tell" is refused.
  {
    name: 'a kustomization that does not parse',
    files: { [K]: 'resources: [cm.yaml\n', 'app/cm.yaml': cm('a') },
    refused: UNREADABLE(`${K} does not parse as YAML (line 2)`),
  },
  {
    name: 'a kustomization that is not valid UTF-8',
    files: { [K]: 'resources: [cm.yaml]\nnamePrefix: "\uFFFD"\n', 'app/cm.yaml': cm('a') },
    refused: UNREADABLE(`${K} is not valid UTF-8`),
  },
  {
    name: 'a kustomization over the YAML limits (an alias bomb)',
    files: {
      [K]: `a: &a [x, x, x, x, x, x, x, x, x]\n${'bcdefghij'
        .split('')
        .map((name, i) => `${name}: &${name} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(', ')}]`)
        .join('\n')}\n`,
    },
    refused: UNREADABLE(
      `${K}: the file's aliases expand to more than 100,000 values when read (an alias bomb, or an alias inside the value it names); write the values out instead`,
    ),
  },
  {
    name: 'a field of an unexpected type',
    files: { [K]: 'resources:\n  - {path: https://10.0.0.1/x.yaml}\n' },
    refused: UNREADABLE(`${K} resources[0] is a mapping where kustomize expects a string`),
  },
  {
    name: 'a generator list written as a mapping',
    files: { [K]: 'configMapGenerator: {name: leak, files: [creds=http://10.0.0.1/x]}\n' },
    refused: UNREADABLE(`${K} configMapGenerator is a mapping where kustomize expects a list`),
  },
  {
    name: 'a binary scalar (YAML 1.1 !!binary decodes to the bytes of a URL)',
    files: { [K]: 'resources: [!!binary aHR0cDovLzEwLjAuMC4xL3g=]\n' },
    refused: UNREADABLE(`${K} resources[0] is binary data where kustomize expects a string`),
  },

  // Symbolic links the walk follows.
  {
    name: 'a symlinked folder whose kustomization fetches',
    files: { [K]: 'resources: [base]\n', 'shared/kustomization.yaml': 'resources: [https://10.0.0.1/x.yaml]\n' },
    symlinks: { 'app/base': '../shared' },
    refused: REMOTE('https://10.0.0.1/x.yaml'),
  },
  {
    name: 'a symlinked folder that leaves the repository',
    files: { [K]: 'resources: [base/x.yaml]\n' },
    symlinks: { 'app/base': '../../../../tarballs/other-org' },
    refused: 'refused: symbolic links point outside the repository (app/base)',
  },

  {
    name: 'a kustomization file that is a symbolic link to one that fetches',
    files: { 'shared/k.yaml': 'resources: [https://10.0.0.1/x.yaml]\n' },
    symlinks: { [K]: '../shared/k.yaml' },
    refused: REMOTE('https://10.0.0.1/x.yaml'),
  },
  {
    name: 'a symlinked chart home whose chart schema fetches',
    files: {
      [K]: 'helmGlobals: {chartHome: vendor}\nhelmCharts:\n  - name: web\n',
      'shared/charts/web/Chart.yaml': 'apiVersion: v2\nname: web\nversion: 1.0.0\n',
      'shared/charts/web/values.schema.json': '{"$ref": "http://10.0.0.1/s.json"}',
    },
    symlinks: { 'app/vendor': '../shared/charts' },
    refused: REMOTE('shared/charts/web/values.schema.json $ref: http://10.0.0.1/s.json'),
  },
  {
    name: 'a symlinked subchart folder whose schema fetches',
    id: 'chart',
    files: {
      'chart/Chart.yaml': 'apiVersion: v2\nname: chart\nversion: 1.0.0\n',
      'chart/values.yaml': 'a: 1\n',
      'shared/lib/Chart.yaml': 'apiVersion: v2\nname: lib\nversion: 1.0.0\n',
      'shared/lib/values.schema.json': '{"$ref": "http://10.0.0.1/s.json"}',
    },
    symlinks: { 'chart/charts/lib': '../../shared/lib' },
    refused: REMOTE('shared/lib/values.schema.json $ref: http://10.0.0.1/s.json'),
  },

  // Helm charts: dependencies and the values schema that helm template loads.
  {
    name: 'a chart dependency from file:// outside the repository',
    id: 'chart',
    files: {
      'chart/Chart.yaml': `apiVersion: v2\nname: chart\nversion: 1.0.0\ndependencies:\n  - name: lib\n    version: 1.0.0\n    repository: file://../${TARBALL}/lib\n`,
      'chart/values.yaml': 'a: 1\n',
    },
    refused: OUTSIDE(`chart/Chart.yaml dependencies[0].repository reads file://../${TARBALL}/lib`),
  },
  {
    name: 'a chart dependency from a remote repository that is not vendored',
    id: 'chart',
    files: {
      'chart/Chart.yaml':
        'apiVersion: v2\nname: chart\nversion: 1.0.0\ndependencies:\n  - name: lib\n    version: 1.0.0\n    repository: HTTPS://10.0.0.1/charts\n',
      'chart/values.yaml': 'a: 1\n',
    },
    refused: REMOTE(
      'chart/Chart.yaml dependencies[0].repository: HTTPS://10.0.0.1/charts (lib is not vendored under chart/charts/)',
    ),
  },
  {
    name: 'a values schema that references a URL',
    id: 'chart',
    files: {
      'chart/Chart.yaml': 'apiVersion: v2\nname: chart\nversion: 1.0.0\n',
      'chart/values.yaml': 'a: 1\n',
      'chart/values.schema.json': '{"type": "object", "properties": {"a": {"$ref": "http://10.0.0.1/a.json"}}}',
    },
    refused: REMOTE('chart/values.schema.json $ref: http://10.0.0.1/a.json'),
  },
  {
    name: 'a values schema that references a local file',
    id: 'chart',
    files: {
      'chart/Chart.yaml': 'apiVersion: v2\nname: chart\nversion: 1.0.0\n',
      'chart/values.yaml': 'a: 1\n',
      'chart/values.schema.json': '{"$ref": "file:///etc/passwd"}',
    },
    refused: REMOTE('chart/values.schema.json $ref: file:///etc/passwd'),
  },
  {
    name: 'a values schema with a meta-schema kustomize does not know',
    id: 'chart',
    files: {
      'chart/Chart.yaml': 'apiVersion: v2\nname: chart\nversion: 1.0.0\n',
      'chart/values.yaml': 'a: 1\n',
      'chart/values.schema.json': '{"$schema": "http://10.0.0.1/meta.json"}',
    },
    refused: REMOTE('chart/values.schema.json $schema: http://10.0.0.1/meta.json'),
  },
  {
    name: 'a chart inflated by a kustomization whose schema references a URL',
    files: {
      [K]: 'helmCharts:\n  - name: web\n',
      'app/charts/web/Chart.yaml': 'apiVersion: v2\nname: web\nversion: 1.0.0\n',
      'app/charts/web/values.schema.json': '{"$ref": "https://10.0.0.1/a.json"}',
    },
    refused: REMOTE('app/charts/web/values.schema.json $ref: https://10.0.0.1/a.json'),
  },
];

describe('the render pre-check', () => {
  it.each(probes.map((probe) => [probe.name, probe] as const))('refuses %s', (_name, probe) => {
    const nodes = discoverTargets(tree(probe.files, probe.symlinks));
    expect(refusalOf(nodes.find((node) => node.id === (probe.id ?? 'app')))).toBe(probe.refused);
  });

  it('shows a value with control characters escaped and a long one cut', () => {
    const long = `http://10.0.0.1/${'a'.repeat(300)}`;
    const nodes = discoverTargets(
      tree({ [K]: `configMapGenerator:\n  - name: a\n    files: ["k=http://10.0.0.1/\\nx", "${long}"]\n` }),
    );
    expect(refusalOf(nodes[0])).toBe(
      REMOTE(
        `${K} line 3 configMapGenerator[0].files[0]: "k=http://10.0.0.1/\\nx", ${K} line 3 configMapGenerator[0].files[1]: ${long.slice(0, 200)}… (${long.length - 200} more characters)`,
      ),
    );
  });

  it('still renders what kustomize reads inside the repository, and follows a symlinked folder inside it', () => {
    const nodes = discoverTargets(
      tree(
        {
          [K]: 'resources: [base]\nconfigMapGenerator:\n  - name: a\n    files: [key=conf/a.txt]\n    envs: [a.env]\nhelmGlobals: {chartHome: vendor}\nhelmCharts:\n  - name: web\n    valuesFile: web.yaml\n',
          'app/conf/a.txt': 'x',
          'app/a.env': 'A=1\n',
          'app/web.yaml': 'a: 1\n',
          'app/vendor/web/Chart.yaml':
            'apiVersion: v2\nname: web\nversion: 1.0.0\ndependencies:\n  - {name: lib, version: 1.0.0, repository: "https://charts.example.com"}\n',
          'app/vendor/web/charts/lib-1.0.0.tgz': 'tgz',
          'app/vendor/web/values.schema.json':
            '{"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"a": {"$ref": "#/definitions/a"}}, "definitions": {"a": {"type": "integer"}}}',
          'shared/kustomization.yaml': 'resources: [cm.yaml]\n',
          'shared/cm.yaml': cm('a'),
        },
        { 'app/base': '../shared' },
      ),
    );
    const app = nodes.find((node) => node.id === 'app');
    expect(refusalOf(app)).toBeUndefined();
    expect(app?.inputFiles).toEqual([
      'app/a.env',
      'app/base',
      'app/conf/a.txt',
      'app/kustomization.yaml',
      'app/web.yaml',
      'shared/cm.yaml',
      'shared/kustomization.yaml',
    ]);
    expect(app?.inputDirs).toEqual(['app/vendor/web']);
  });
});

describe('the pre-check through renderAndDiff', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'escalator-precheck-'));
  let canary: Server;
  let requests = 0;
  let port = 0;
  beforeAll(async () => {
    canary = createServer((request, response) => {
      requests++;
      response.end('CANARY-internal-secret\n');
    });
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
    port = (canary.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => canary.close(() => resolve()));
    rmSync(scratch, { recursive: true, force: true });
  });

  const env = gitEnv(scratch);
  const git = (dir: string, ...args: string[]): string => runGit(env, dir, ...args);
  const repoWith = (...commits: Array<Record<string, string>>) => repoWithCommits(scratch, ...commits);

  it('refuses the hostile targets with their reasons in the comment, fetches nothing, and renders the good target beside them', async () => {
    const url = `http://127.0.0.1:${port}`;
    const { dir, shas } = repoWith(
      { 'good/kustomization.yaml': 'resources: [cm.yaml]\n', 'good/cm.yaml': cm('a') },
      {
        'good/cm.yaml': cm('b'),
        'leak/kustomization.yaml': `configMapGenerator:\n  - name: leak\n    files: [creds=HTTP://127.0.0.1:${port}/creds]\n`,
        'merged/kustomization.yaml': `configMapGenerator:\n  - <<: {name: leak, envs: [${url}/env]}\n`,
        'cased/kustomization.yaml': `Resources: [${url}/cm.yaml]\n`,
        'broken/kustomization.yaml': `resources: [${url}/cm.yaml\n`,
      },
    );
    const report = await renderAndDiff({
      base: LocalGitSourceTree.open(dir, shas[0] as string),
      head: LocalGitSourceTree.open(dir, shas[1] as string),
      changedPaths: null,
      options: { cacheDir: join(scratch, 'cache'), tools: { helm: null } },
    });
    expect(requests).toBe(0);
    const upper = `HTTP://127.0.0.1:${port}`;
    expect(
      report.targets.map((target) => [
        target.id,
        target.failure
          ? `${target.failure.side}: ${target.failure.message}`
          : `rendered, ${target.objects.length} changed`,
      ]),
    ).toEqual([
      ['broken', `head: ${UNREADABLE('broken/kustomization.yaml does not parse as YAML (line 2)')}`],
      ['cased', `head: ${REMOTE(`${url}/cm.yaml`)}`],
      ['good', 'rendered, 1 changed'],
      [
        'leak',
        `head: ${REMOTE(`leak/kustomization.yaml line 3 configMapGenerator[0].files[0]: creds=${upper}/creds`)}`,
      ],
      ['merged', `head: ${REMOTE(`merged/kustomization.yaml line 2 configMapGenerator[0].envs[0]: ${url}/env`)}`],
    ]);
    const body = renderComment(report, {
      baseSha: shas[0] as string,
      headSha: shas[1] as string,
      repository: 'example/gitops',
    });
    expect(body).toContain(
      `refused: remote resources are not fetched (leak/kustomization.yaml line 3 configMapGenerator[0].files[0]: creds=${upper}/creds); vendor them into the repository`,
    );
    expect(body).not.toContain('CANARY-internal-secret');
  });

  it('names a chart whose dependencies from a chart repository are not vendored as not rendered: nothing runs, nothing is fetched, the check is neutral (issue 36)', async () => {
    const url = `http://127.0.0.1:${port}`;
    const chart = (tag: number, schema?: string): Record<string, string> => ({
      'chart/Chart.yaml': `apiVersion: v2\nname: chart\nversion: 1.0.0\ndependencies:\n  - {name: lib, version: 1.0.0, repository: "${url}/charts"}\n`,
      'chart/templates/x.yaml': '{{ . }}\n',
      'chart/values.yaml': `image: {repository: ghcr.io/example/x, tag: "${tag}"}\n`,
      ...(schema ? { 'chart/values.schema.json': schema } : {}),
    });
    const { dir, shas } = repoWith(
      { ...chart(1), 'fetching/Chart.yaml': chart(1)['chart/Chart.yaml'] as string, 'fetching/values.yaml': 'a: 1\n' },
      {
        ...chart(2),
        // The same dependency, and a schema that would load a URL: a refusal, as before.
        'fetching/values.yaml': 'a: 2\n',
        'fetching/values.schema.json': `{"$ref": "${url}/schema.json"}`,
      },
    );
    const report = await renderAndDiff({
      base: LocalGitSourceTree.open(dir, shas[0] as string),
      head: LocalGitSourceTree.open(dir, shas[1] as string),
      changedPaths: null,
      options: { cacheDir: join(scratch, 'cache-dependencies'), tools: { helm: fakeHelm() } },
    });
    expect(requests).toBe(0);
    const chartTarget = report.targets.find((target) => target.id === 'chart');
    expect(chartTarget).toMatchObject({ status: 'not-rendered', alerts: [] });
    expect(chartTarget?.notRendered).toContain(
      `its chart depends on charts from chart repositories that are not vendored (chart/Chart.yaml dependencies[0].repository: ${url}/charts (lib is not vendored under chart/charts/))`,
    );
    expect(chartTarget?.images.map((image) => [image.from, image.to])).toEqual([
      ['ghcr.io/example/x:1', 'ghcr.io/example/x:2'],
    ]);
    expect(report.targets.find((target) => target.id === 'fetching')?.failure?.message).toContain(
      `fetching/values.schema.json $ref: ${url}/schema.json`,
    );
    // Only the refused target fails the check; the dependency alone would leave it neutral.
    expect(renderCheckSummary({ ...report, summary: { ...report.summary, failures: 0 } }).conclusion).toBe('neutral');
    // Two runs, both refusals of `fetching` (base and head) before any tool: none for `chart`.
    expect(report.stats?.renders).toBe(2);
  });

  it('refuses a kustomization that reads through a symlinked folder the graph did not follow, and a chart whose archived subchart schema fetches', async () => {
    const url = `http://127.0.0.1:${port}`;
    const archiveDir = mkdtempSync(join(scratch, 'archive-'));
    mkdirSync(join(archiveDir, 'lib'));
    writeFileSync(join(archiveDir, 'lib/Chart.yaml'), 'apiVersion: v2\nname: lib\nversion: 1.0.0\n');
    writeFileSync(join(archiveDir, 'lib/values.schema.json'), `{"properties": {"a": {"$ref": "${url}/schema.json"}}}`);
    execFileSync('tar', ['-czf', join(archiveDir, 'lib-1.0.0.tgz'), '-C', archiveDir, 'lib']);
    const chart = {
      'chart/Chart.yaml':
        'apiVersion: v2\nname: chart\nversion: 1.0.0\ndependencies:\n  - {name: lib, version: 1.0.0, repository: "https://charts.example.com"}\n',
      'chart/templates/x.yaml': '{{ . }}\n',
      'chart/values.yaml': 'tag: 1\n',
    };
    const { dir, shas } = repoWith(
      { 'good/kustomization.yaml': 'resources: [cm.yaml]\n', 'good/cm.yaml': cm('a'), ...chart },
      {
        'good/cm.yaml': cm('b'),
        'app/kustomization.yaml': 'resources: [base]\n',
        'app/base': 'symlink:../shared',
        'shared/kustomization.yaml': 'resources: [cm.yaml]\n',
        'shared/cm.yaml': cm('s'),
        'chart/values.yaml': 'tag: 2\n',
      },
    );
    // The archive as bytes: written after the first commit so that only the head holds it.
    execFileSync('cp', [join(archiveDir, 'lib-1.0.0.tgz'), join(dir, 'chart/charts-lib.tgz')]);
    mkdirSync(join(dir, 'chart/charts'), { recursive: true });
    execFileSync('mv', [join(dir, 'chart/charts-lib.tgz'), join(dir, 'chart/charts/lib-1.0.0.tgz')]);
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'vendor lib');
    const head = git(dir, 'rev-parse', 'HEAD');
    const helm = fakeHelm();
    // A source tree that does not say which paths are links (only sha, listFiles, read and writeTo, as a tarball-backed one may be).
    const withoutLinks = (tree: LocalGitSourceTree): SourceTree => ({
      sha: tree.sha,
      listFiles: () => tree.listFiles(),
      read: (path) => tree.read(path),
      writeTo: (into) => tree.writeTo(into),
    });
    const report = await renderAndDiff({
      base: withoutLinks(LocalGitSourceTree.open(dir, shas[0] as string)),
      head: withoutLinks(LocalGitSourceTree.open(dir, head)),
      changedPaths: null,
      options: { cacheDir: join(scratch, 'cache-links'), tools: { helm } },
    });
    expect(requests).toBe(0);
    expect(
      report.targets.map((target) => [
        target.id,
        target.failure
          ? `${target.failure.side}: ${target.failure.message}`
          : `rendered, ${target.objects.length} changed`,
      ]),
    ).toEqual([
      [
        'app',
        'head: refused: Escalator cannot tell what this target reads (it reads through symbolic links to folders: app/base); link the files, not the folder, or list the folder itself',
      ],
      // At base the dependency is not vendored yet; at head its archive's schema fetches.
      ['chart', `both: ${REMOTE(`chart/charts/lib-1.0.0.tgz:lib/values.schema.json $ref: ${url}/schema.json`)}`],
      ['good', 'rendered, 1 changed'],
      ['shared', 'rendered, 1 changed'],
    ]);
  });
});

function fakeHelm(): string {
  return fileURLToPath(new URL('../diff/support/fake-helm.sh', import.meta.url));
}
