import { describe, expect, it } from 'vitest';
import {
  affectedTargets,
  argoEnvsubst,
  discoverTargets,
  releaseTemplateArgs,
  type TreeView,
} from '../../src/planners/diff/index.js';

function tree(files: Record<string, string>): TreeView {
  return { files: Object.keys(files).sort(), read: (path) => files[path] };
}

const deployment = 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n';

const repo = tree({
  'apps/web/base/kustomization.yaml': 'resources: [deployment.yaml, service.yaml]\n',
  'apps/web/base/deployment.yaml': deployment,
  'apps/web/base/service.yaml': deployment,
  'apps/web/base/unused.yaml': deployment,
  'apps/web/components/tls/kustomization.yaml':
    'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n  - path: tls.yaml\n',
  'apps/web/components/tls/tls.yaml': deployment,
  'apps/web/overlays/dev/kustomization.yaml': [
    'resources: [../../base]',
    'components: [../../components/tls]',
    'patches:',
    '  - path: replicas.yaml',
    '  - patch: |-',
    '      - op: replace',
    'patchesStrategicMerge:',
    '  - memory.yaml',
    '  - |-',
    '    apiVersion: v1',
    'patchesJson6902:',
    '  - path: json-patch.yaml',
    'configMapGenerator:',
    '  - name: settings',
    '    files: [app.properties, custom=other.properties]',
    '    envs: [settings.env]',
    'secretGenerator:',
    '  - name: creds',
    '    env: creds.env',
    'replacements:',
    '  - path: replacements.yaml',
    '',
  ].join('\n'),
  'apps/web/overlays/prod/kustomization.yaml':
    'resources: [../../base]\nhelmCharts:\n  - name: redis\n    valuesFile: redis-values.yaml\n',
  'apps/web/overlays/prod/charts/redis/Chart.yaml': 'name: redis\n',
  'apps/web/overlays/prod/charts/redis/templates/x.yaml': '{{ . }}',
  'apps/web/overlays/prod/redis-values.yaml': 'a: 1\n',
  'charts/api/Chart.yaml': 'name: api\n',
  'charts/api/values.yaml': 'tag: 1\n',
  'charts/api/values-prod.yaml': 'tag: 2\n',
  'charts/api/values-dev.yaml': 'tag: 3\n',
  'charts/api/templates/deployment.yaml': '{{ .Values.tag }}',
  'charts/api/charts/sub/Chart.yaml': 'name: sub\n',
  'charts/plain/Chart.yaml': 'name: plain\n',
  'charts/plain/values.yaml': 'x: 1\n',
  'clusters/prod/namespaces.yaml': deployment,
  'clusters/prod/README.md': '# hi',
  '.github/workflows/ci.yaml': 'on: push\n',
  'remote/kustomization.yaml':
    'resources:\n  - https://github.com/example/repo//deploy?ref=v1\n  - github.com/example/other?ref=main\n',
  'plugins/kustomization.yaml': 'resources: [cm.yaml]\ngenerators: [gen.yaml]\ntransformers: [builtin.yaml]\n',
  'plugins/cm.yaml': deployment,
  'plugins/gen.yaml':
    'apiVersion: example.com/v1\nkind: SopsGenerator\nmetadata:\n  name: x\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./run.sh\n',
  'plugins/builtin.yaml': 'apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: l}\n',
});

describe('discoverTargets', () => {
  const nodes = discoverTargets(repo);
  const byId = (id: string) => nodes.find((node) => node.id === id);

  it('finds root kustomizations, chart targets per values variant and plain directories, not bases, components or .github', () => {
    expect(nodes.map((node) => `${node.kind}:${node.id}`)).toEqual(
      [
        'helm:charts/api/values-dev.yaml',
        'helm:charts/api/values-prod.yaml',
        'helm:charts/plain',
        'plain:clusters/prod',
        'kustomize:apps/web/overlays/dev',
        'kustomize:apps/web/overlays/prod',
        'kustomize:plugins',
        'kustomize:remote',
      ].sort((a, b) => (a.split(':')[1]! < b.split(':')[1]! ? -1 : 1)),
    );
  });

  it('follows resources, components, every patch form, generator files, envs and replacements', () => {
    expect(byId('apps/web/overlays/dev')?.inputFiles).toEqual([
      'apps/web/base/deployment.yaml',
      'apps/web/base/kustomization.yaml',
      'apps/web/base/service.yaml',
      'apps/web/components/tls/kustomization.yaml',
      'apps/web/components/tls/tls.yaml',
      'apps/web/overlays/dev/app.properties',
      'apps/web/overlays/dev/creds.env',
      'apps/web/overlays/dev/json-patch.yaml',
      'apps/web/overlays/dev/kustomization.yaml',
      'apps/web/overlays/dev/memory.yaml',
      'apps/web/overlays/dev/other.properties',
      'apps/web/overlays/dev/replacements.yaml',
      'apps/web/overlays/dev/replicas.yaml',
      'apps/web/overlays/dev/settings.env',
    ]);
    // Missing generator inputs are inputs too (adding one is a change), and make the graph unsure.
    expect(byId('apps/web/overlays/dev')?.unsure.length).toBeGreaterThan(0);
  });

  it('takes helmCharts values files and the local chart directory, and marks the need for helm', () => {
    const prod = byId('apps/web/overlays/prod');
    expect(prod?.needsHelm).toBe(true);
    expect(prod?.inputFiles).toContain('apps/web/overlays/prod/redis-values.yaml');
    expect(prod?.inputDirs).toEqual(['apps/web/overlays/prod/charts/redis']);
  });

  it('gives each chart values variant the chart files but not the other variants', () => {
    const prodChart = byId('charts/api/values-prod.yaml');
    expect(prodChart?.valuesFiles).toEqual(['charts/api/values-prod.yaml']);
    expect(prodChart?.inputFiles).toContain('charts/api/values.yaml');
    expect(prodChart?.inputFiles).toContain('charts/api/charts/sub/Chart.yaml');
    expect(prodChart?.inputFiles).not.toContain('charts/api/values-dev.yaml');
  });

  it('records remote resources and exec plugins, but not builtin transformers', () => {
    expect(byId('remote')?.remote).toEqual([
      'https://github.com/example/repo//deploy?ref=v1',
      'github.com/example/other?ref=main',
    ]);
    expect(byId('plugins')?.plugins).toEqual(['plugins/gen.yaml declares a KRM function (exec or container plugin)']);
  });

  it('with configured paths, renders exactly the matched directories and files, classified by content', () => {
    const configured = discoverTargets(repo, {
      paths: ['apps/*/base', 'clusters/prod/namespaces.yaml', 'charts/plain'],
    });
    expect(configured.map((node) => `${node.kind}:${node.id}`)).toEqual([
      'kustomize:apps/web/base',
      'helm:charts/plain',
      'plain:clusters/prod/namespaces.yaml',
    ]);
  });
});

describe('what GitOps agents deploy', () => {
  const files = {
    'apps/web/base/kustomization.yaml': 'resources: [deployment.yaml]\n',
    'apps/web/base/deployment.yaml': deployment,
    'apps/web/overlays/prod/kustomization.yaml': 'resources: [../../base]\n',
    'apps/api/base/kustomization.yaml': 'resources: [deployment.yaml]\n',
    'apps/api/base/deployment.yaml': deployment,
    'apps/api/overlays/prod/kustomization.yaml': 'resources: [../../base]\n',
    'charts/api/Chart.yaml': 'name: api\n',
    'charts/api/values.yaml': 'tag: 1\n',
    'charts/api/values-prod.yaml': 'tag: 2\n',
  };
  const ids = (extra: Record<string, string>) => discoverTargets(tree({ ...files, ...extra })).map((node) => node.id);

  it('makes a base an Argo CD Application or a Flux Kustomization deploys a target of its own, and a chart a HelmRelease deploys a release target beside the values files no release reads', () => {
    expect(ids({})).toEqual(['apps/api/overlays/prod', 'apps/web/overlays/prod', 'charts/api/values-prod.yaml']);
    expect(
      ids({
        'argocd/web.yaml':
          'apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web}\nspec:\n  sources:\n    - repoURL: https://github.com/example/gitops.git\n      path: apps/web/base\n',
        'clusters/dev/api.yaml': [
          'apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: api}\nspec: {path: ./apps/api/base, prune: true}',
          '---',
          'apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: api}\nspec:\n  chart:\n    spec: {chart: ./charts/api, sourceRef: {kind: GitRepository, name: flux-system}}',
          '',
        ].join('\n'),
      }),
    ).toEqual([
      'apps/api/base',
      'apps/api/overlays/prod',
      'apps/web/base',
      'apps/web/overlays/prod',
      'argocd',
      'charts/api/values-prod.yaml',
      'clusters/dev',
      'flux:api',
    ]);
    // A HelmRelease of a chart from a Helm repository names no directory of this repository.
    expect(
      ids({
        'clusters/dev/api.yaml':
          'apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: api}\nspec:\n  chart:\n    spec: {chart: charts/api, sourceRef: {kind: HelmRepository, name: bitnami}}\n',
      }),
    ).not.toContain('charts/api');
  });
});

describe('Helm releases the agents define', () => {
  const chart = {
    'charts/hello/Chart.yaml': 'apiVersion: v2\nname: hello\nversion: 1.0.0\n',
    'charts/hello/values.yaml': 'image: {repository: ghcr.io/example/hello, tag: "1.0"}\n',
    'charts/hello/values-staging.yaml': 'image: {tag: "1.1"}\n',
    'charts/hello/values-prod.yaml': 'image: {tag: "1.0"}\n',
    'charts/hello/templates/deployment.yaml': deployment,
    'envs/prod/hello.yaml': 'replicaCount: 3\n',
  };
  const releases = (extra: Record<string, string>) =>
    discoverTargets(tree({ ...chart, ...extra })).filter((node) => node.release !== undefined);

  it('reads an Argo CD Application as argo-cd renders it: release name, namespace, values files, values, parameters, CRDs', () => {
    const [node, ...rest] = releases({
      'argocd/hello.yaml': [
        'apiVersion: argoproj.io/v1alpha1',
        'kind: Application',
        'metadata: {name: hello-staging, namespace: argocd}',
        'spec:',
        '  destination: {namespace: staging}',
        '  source:',
        '    repoURL: https://github.com/example/gitops.git',
        '    path: charts/hello',
        '    helm:',
        '      valueFiles: [values-staging.yaml, /envs/prod/hello.yaml]',
        '      values: |',
        '        logLevel: debug',
        '      parameters:',
        '        - {name: a, value: "x,y"}',
        '        - {name: b, value: "{1,2}"}',
        '        - {name: c, value: "007", forceString: true}',
        '        - {name: a, value: z}',
        '',
      ].join('\n'),
    });
    expect(rest).toEqual([]);
    expect(node?.id).toBe('argocd:hello-staging');
    expect(node?.inputFiles).toContain('argocd/hello.yaml');
    expect(node?.inputFiles).toContain('charts/hello/values-staging.yaml');
    expect(node?.inputFiles).not.toContain('charts/hello/values-prod.yaml');
    expect(node?.release).toMatchObject({
      releaseName: 'hello-staging',
      namespace: 'staging',
      chart: 'charts/hello',
      valuesFiles: ['charts/hello/values-staging.yaml', 'envs/prod/hello.yaml'],
      inlineValues: [{ name: 'helm.values', text: 'logLevel: debug\n' }],
      set: [
        { name: 'a', value: 'z' },
        { name: 'b', value: '{1,2}' },
      ],
      setString: [{ name: 'c', value: '007' }],
      includeCrds: true,
    });
  });

  it('names a chart from a Helm repository or an OCI registry as not fetched', () => {
    const nodes = releases({
      'argocd/redis.yaml':
        'apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: redis}\nspec:\n  source: {repoURL: "oci://registry.example.com/charts", chart: redis, targetRevision: 19.0.1}\n',
      'flux/podinfo.yaml':
        'apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: podinfo, namespace: apps}\nspec:\n  chartRef: {kind: OCIRepository, name: podinfo}\n',
    });
    expect(nodes.map((node) => [node.id, node.release?.skip])).toEqual([
      [
        'argocd:redis',
        'the chart redis 19.0.1 comes from oci://registry.example.com/charts; charts from remote repositories are never fetched while rendering a pull request',
      ],
      [
        'flux:apps/podinfo',
        'the chart comes from the OCIRepository podinfo; charts from remote repositories are never fetched while rendering a pull request',
      ],
    ]);
    expect(nodes[0]?.inputFiles).toEqual(['argocd/redis.yaml']);
    // A remote chart with values from this repository: a change to those values names the release.
    const [multi] = releases({
      'argocd/redis.yaml':
        'apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: redis}\nspec:\n  sources:\n    - {repoURL: "https://charts.example.com", chart: redis, targetRevision: 19.0.1, helm: {valueFiles: [$values/envs/prod/hello.yaml, values-big.yaml]}}\n    - {repoURL: "https://github.com/example/gitops.git", ref: values}\n',
    });
    expect(multi?.inputFiles).toEqual(['argocd/redis.yaml', 'envs/prod/hello.yaml']);
    expect(multi?.release?.skip).toContain('never fetched');
  });

  it('reads a Flux HelmRelease as helm-controller installs it: release name, target namespace, valuesFrom ConfigMaps, values, CRD policy', () => {
    const long = 'a-release-name-that-is-long-enough-to-be-cut-by-helm-controller';
    const [node, shortened] = releases({
      'flux/hello.yaml': [
        'apiVersion: helm.toolkit.fluxcd.io/v2',
        'kind: HelmRelease',
        'metadata: {name: hello, namespace: apps}',
        'spec:',
        '  targetNamespace: prod',
        '  install: {crds: Skip}',
        '  chart: {spec: {chart: ./charts/hello, sourceRef: {kind: GitRepository, name: flux-system}, valuesFiles: [charts/hello/values-prod.yaml]}}',
        '  valuesFrom:',
        '    - {kind: ConfigMap, name: hello-values}',
        '    - {kind: Secret, name: hello-secrets}',
        '  values: {replicaCount: 2}',
        '---',
        'apiVersion: helm.toolkit.fluxcd.io/v2',
        'kind: HelmRelease',
        `metadata: {name: ${long}, namespace: apps}`,
        'spec:',
        '  chart: {spec: {chart: charts/hello, sourceRef: {kind: GitRepository, name: flux-system}}}',
        '',
      ].join('\n'),
      'charts/hello/crds/greetings.yaml': 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n',
      'flux/values.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello-values, namespace: apps}\ndata:\n  values.yaml: |\n    image: {tag: "2.0"}\n',
    });
    expect(node?.id).toBe('flux:apps/a-release-name-that-is-long-enough-to-be-cut-by-helm-controller');
    expect(node?.release?.releaseName).toMatch(/^a-release-name-that-is-long-enough-to-be-[0-9a-f]{12}$/);
    expect(node?.release?.releaseName).toHaveLength(53);
    expect(node?.release?.includeCrds).toBe(true);
    expect(node?.release?.notes.join(' ')).toContain('upgrade.crds');
    expect(shortened?.id).toBe('flux:apps/hello');
    expect(shortened?.inputFiles).toContain('flux/values.yaml');
    expect(shortened?.release).toMatchObject({
      releaseName: 'prod-hello',
      namespace: 'prod',
      valuesFiles: ['charts/hello/values-prod.yaml'],
      inlineValues: [
        { name: 'ConfigMap hello-values values.yaml', text: 'image: {tag: "2.0"}\n' },
        { name: 'spec.values', text: '{"replicaCount":2}' },
      ],
      includeCrds: false,
    });
    expect(shortened?.release?.notes.join(' ')).toContain('never reads Secrets');
  });

  it("marks Flux valuesFiles as replacing the chart's values.yaml, also when every file is missing and ignored; Argo CD valueFiles layer", () => {
    const flux = (chartSpec: string) =>
      releases({
        'flux/hello.yaml': `apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: hello, namespace: apps}\nspec:\n  chart: {spec: {chart: ./charts/hello, sourceRef: {kind: GitRepository, name: flux-system}${chartSpec}}}\n`,
      })[0]?.release;
    expect(flux(', valuesFiles: [charts/hello/values.yaml, envs/prod/hello.yaml]')).toMatchObject({
      chartValuesReplaced: true,
      valuesFiles: ['charts/hello/values.yaml', 'envs/prod/hello.yaml'],
    });
    expect(flux(', valuesFiles: [envs/none.yaml], ignoreMissingValuesFiles: true')).toMatchObject({
      chartValuesReplaced: true,
      valuesFiles: [],
    });
    expect(flux('')?.chartValuesReplaced).toBeUndefined();
    const argo = releases({
      'argocd/hello.yaml':
        'apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: hello}\nspec:\n  source: {path: charts/hello, helm: {valueFiles: [values-prod.yaml]}}\n  destination: {namespace: hello}\n',
    })[0]?.release;
    expect(argo?.chartValuesReplaced).toBeUndefined();
  });

  it('reads file:// dependencies as inputs of every release that uses them, and builds the ones not vendored', () => {
    const dependencies = (vendored: Record<string, string>) =>
      discoverTargets(
        tree({
          'charts/common/Chart.yaml': 'apiVersion: v2\nname: common\nversion: 1.0.0\n',
          'charts/common/templates/cm.yaml': deployment,
          'charts/shop/Chart.yaml':
            'apiVersion: v2\nname: shop\nversion: 1.0.0\ndependencies:\n  - {name: common, version: ^1.0.0, repository: "file://../common"}\n  - {name: local, version: 1.0.0, repository: "file://./sub"}\n',
          'charts/shop/sub/Chart.yaml': 'apiVersion: v2\nname: local\nversion: 1.0.0\n',
          'charts/shop/templates/deployment.yaml': deployment,
          'apps/shop.yaml':
            'apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: shop}\nspec:\n  source: {path: charts/shop}\n  destination: {namespace: shop}\n',
          ...vendored,
        }),
      );
    const nodes = dependencies({});
    const shop = nodes.find((node) => node.id === 'argocd:shop');
    expect(shop?.dependencyDirs).toEqual(['charts/common']);
    expect(shop?.buildDependencies).toEqual(['common (file://../common)', 'local (file://./sub)']);
    expect(shop?.inputFiles).toEqual(
      expect.arrayContaining(['charts/common/Chart.yaml', 'charts/common/templates/cm.yaml']),
    );
    expect(shop?.remote).toEqual([]);
    expect(shop?.outside).toBeUndefined();
    expect(
      affectedTargets(nodes, nodes, ['charts/common/templates/cm.yaml']).targets.map(
        (target) => (target.head ?? target.base)?.id,
      ),
    ).toEqual(['argocd:shop', 'charts/common']);
    const vendored = dependencies({
      'charts/shop/charts/common-1.0.0.tgz': '',
      'charts/shop/charts/local/Chart.yaml': 'apiVersion: v2\nname: local\nversion: 1.0.0\n',
    }).find((node) => node.id === 'argocd:shop');
    expect(vendored?.buildDependencies).toBeUndefined();
  });

  it("checks a dependency's values schemas, but not what its own Chart.yaml names (helm dependency build does not build it)", () => {
    const shop = discoverTargets(
      tree({
        'charts/common/Chart.yaml':
          'apiVersion: v2\nname: common\nversion: 1.0.0\ndependencies:\n  - {name: redis, version: 1.0.0, repository: "https://charts.example.com"}\n',
        'charts/common/values.schema.json': '{"$ref": "https://example.com/schema.json"}',
        'charts/shop/Chart.yaml':
          'apiVersion: v2\nname: shop\nversion: 1.0.0\ndependencies:\n  - {name: common, version: 1.0.0, repository: "file://../common"}\n',
      }),
    ).find((node) => node.id === 'charts/shop');
    expect(shop?.remote).toEqual(['charts/common/values.schema.json $ref: https://example.com/schema.json']);
  });

  it('turns a release into the flags argo-cd passes to helm template, in its order', () => {
    const [node] = releases({
      'argocd/hello.yaml':
        'apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: hello}\nspec:\n  destination: {namespace: web}\n  source:\n    path: charts/hello\n    helm:\n      namespace: other\n      skipCrds: true\n      skipTests: true\n      valueFiles: [values-prod.yaml]\n      valuesObject: {a: 1}\n      values: "ignored: true"\n      parameters: [{name: b, value: "1,2"}, {name: c, value: x, forceString: true}]\n',
    });
    expect(
      releaseTemplateArgs(node?.release as NonNullable<typeof node>['release'] & object, (i) => `/v/${i}.yaml`),
    ).toEqual([
      '--namespace=other',
      '--values=./charts/hello/values-prod.yaml',
      '--values=/v/0.yaml',
      '--set=b=1\\,2',
      '--set-string=c=x',
      '--skip-tests',
    ]);
    expect(node?.release?.inlineValues).toEqual([{ name: 'helm.valuesObject', text: '{"a":1}' }]);
  });

  it('names what it cannot resolve instead of guessing: values outside the repository, a ConfigMap it does not hold, targetPath', () => {
    const app = (valueFiles: string, extra = '') =>
      `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: hello}\nspec:\n  source:\n    path: charts/hello\n    helm:\n      valueFiles: [${valueFiles}]\n${extra}`;
    expect(releases({ 'a.yaml': app('../../../etc/passwd') })[0]?.arguments).toEqual([
      'a.yaml line 8 spec.source.helm.valueFiles[0]: ../../../etc/passwd is not a path inside the repository',
    ]);
    expect(releases({ 'a.yaml': app('https://example.com/values.yaml') })[0]?.release?.skip).toContain(
      'values files are never fetched',
    );
    const missing = releases({ 'a.yaml': app('values-qa.yaml', '      ignoreMissingValueFiles: true\n') })[0]?.release;
    expect(missing?.skip).toBeUndefined();
    expect(missing?.valuesFiles).toEqual([]);
    expect(missing?.notes.join(' ')).toContain('values-qa.yaml');
    const flux = (valuesFrom: string) =>
      `apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: hello, namespace: apps}\nspec:\n  chart: {spec: {chart: charts/hello, sourceRef: {kind: GitRepository, name: flux-system}}}\n  valuesFrom: [${valuesFrom}]\n`;
    expect(releases({ 'f.yaml': flux('{kind: ConfigMap, name: generated}') })[0]?.release?.skip).toBe(
      'its values come from the ConfigMap generated (key values.yaml), which is neither a ConfigMap manifest nor a configMapGenerator file in the repository',
    );
    expect(
      releases({ 'f.yaml': flux('{kind: ConfigMap, name: generated, optional: true}') })[0]?.release?.skip,
    ).toBeUndefined();
    expect(
      releases({ 'f.yaml': flux('{kind: ConfigMap, name: one, targetPath: image.tag}') })[0]?.release?.skip,
    ).toContain('targetPath');
  });

  it('expands $ARGOCD_APP_* in values file paths and parameters as Argo CD does, with the commit being rendered', () => {
    expect(argoEnvsubst('a-$X-${X}-$$-${Y}-$Z_1', { X: 'x', Z_1: 'z' })).toBe('a-x-x-$--z');
    const [node] = discoverTargets({
      ...tree({
        ...chart,
        'charts/hello/values-hello.yaml': 'a: 1\n',
        'a.yaml':
          'apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: hello}\nspec:\n  destination: {namespace: web}\n  source:\n    path: charts/hello\n    helm:\n      valueFiles: [values-$ARGOCD_APP_NAME.yaml]\n      parameters: [{name: rev, value: "${ARGOCD_APP_REVISION_SHORT}-$ARGOCD_APP_NAMESPACE"}]\n',
      }),
      sha: '0123456789abcdef0123456789abcdef01234567',
    }).filter((candidate) => candidate.release);
    expect(node?.release?.valuesFiles).toEqual(['charts/hello/values-hello.yaml']);
    expect(node?.release?.set).toEqual([{ name: 'rev', value: '0123456-web' }]);
  });

  it('reads a valuesFrom ConfigMap that a kustomization generates from a file, as Flux users write them', () => {
    const [node] = releases({
      'clusters/prod/hello.yaml':
        'apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: hello, namespace: apps}\nspec:\n  chart: {spec: {chart: charts/hello, sourceRef: {kind: GitRepository, name: flux-system}}}\n  valuesFrom: [{kind: ConfigMap, name: hello-values}, {kind: ConfigMap, name: hello-extra, valuesKey: extra.yaml}]\n',
      'clusters/prod/kustomization.yaml':
        'namespace: apps\nresources: [hello.yaml]\nconfigMapGenerator:\n  - name: hello-values\n    files: [values.yaml=prod-values.yaml]\n  - name: hello-extra\n    files: [config/extra.yaml]\n',
      'clusters/prod/prod-values.yaml': 'image: {tag: "3.0"}\n',
      'clusters/prod/config/extra.yaml': 'replicaCount: 5\n',
    });
    expect(node?.release?.skip).toBeUndefined();
    expect(node?.release?.inlineValues).toEqual([
      { name: 'ConfigMap hello-values values.yaml', text: 'image: {tag: "3.0"}\n' },
      { name: 'ConfigMap hello-extra extra.yaml', text: 'replicaCount: 5\n' },
    ]);
    expect(node?.inputFiles).toEqual(
      expect.arrayContaining(['clusters/prod/prod-values.yaml', 'clusters/prod/config/extra.yaml']),
    );
  });

  it('leaves an Application that says its source is kustomize or a directory to those renderers', () => {
    expect(
      releases({
        'a.yaml':
          'apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: hello}\nspec:\n  source: {path: charts/hello, directory: {recurse: true}}\n',
      }),
    ).toEqual([]);
  });
});

describe('affectedTargets', () => {
  const nodes = discoverTargets(repo);
  const ids = (changed: string[] | null) =>
    affectedTargets(nodes, nodes, changed).targets.map((target) => (target.head ?? target.base)?.id);

  it('maps a shared base file to every overlay that uses it', () => {
    expect(ids(['apps/web/base/deployment.yaml'])).toEqual(['apps/web/overlays/dev', 'apps/web/overlays/prod']);
  });

  it('ignores files no kustomization references, and says so', () => {
    const result = affectedTargets(nodes, nodes, ['apps/web/base/unused.yaml', 'README.md']);
    expect(result.targets).toEqual([]);
    expect(result.unplaced).toEqual(['README.md', 'apps/web/base/unused.yaml']);
  });

  it('maps a chart template to every values variant, and a variant only to itself', () => {
    expect(ids(['charts/api/templates/deployment.yaml'])).toEqual([
      'charts/api/values-dev.yaml',
      'charts/api/values-prod.yaml',
    ]);
    expect(ids(['charts/api/values-dev.yaml'])).toEqual(['charts/api/values-dev.yaml']);
  });

  it('renders everything when the changed paths are unknown', () => {
    expect(ids(null)).toHaveLength(nodes.length);
  });

  it('uses both graphs: a file referenced only at head, a target that exists only at base', () => {
    const head = tree({
      'app/kustomization.yaml': 'resources: [a.yaml, b.yaml]\n',
      'app/a.yaml': deployment,
      'app/b.yaml': deployment,
    });
    const base = tree({
      'app/kustomization.yaml': 'resources: [a.yaml]\n',
      'app/a.yaml': deployment,
      'gone/kustomization.yaml': 'resources: [x.yaml]\n',
      'gone/x.yaml': deployment,
    });
    const result = affectedTargets(discoverTargets(base), discoverTargets(head), [
      'app/b.yaml',
      'gone/kustomization.yaml',
      'gone/x.yaml',
    ]);
    expect(result.targets.map((target) => [target.base?.id, target.head?.id])).toEqual([
      ['app', 'app'],
      ['gone', undefined],
    ]);
  });

  it('renders an unsure target when a changed file below it cannot be placed', () => {
    const broken = tree({
      'app/kustomization.yaml': 'resources: [a.yaml\n',
      'app/a.yaml': deployment,
      'other/kustomization.yaml': 'resources: []\n',
    });
    const graph = discoverTargets(broken);
    expect(graph.find((node) => node.id === 'app')?.unsure[0]).toMatch(/does not parse/);
    expect(affectedTargets(graph, graph, ['app/a.yaml']).targets.map((target) => target.head?.id)).toEqual(['app']);
  });
});

describe('which Applications and HelmReleases are releases (issues 35 and 36)', () => {
  const chart = {
    'charts/hello/Chart.yaml': 'apiVersion: v2\nname: hello\nversion: 1.0.0\n',
    'charts/hello/values.yaml': 'image: {repository: ghcr.io/example/hello, tag: "1.0"}\n',
    'charts/hello/templates/deployment.yaml': deployment,
  };
  const releases = (files: Record<string, string>) =>
    discoverTargets(tree({ ...chart, ...files })).filter((node) => node.release !== undefined);
  // fluxcd/flux2-kustomize-helm-example apps/base/podinfo/release.yaml and apps/staging/podinfo-values.yaml (trimmed).
  const podinfo =
    'apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: podinfo, namespace: podinfo}\nspec:\n  chart: {spec: {chart: podinfo, sourceRef: {kind: HelmRepository, name: podinfo}}}\n  values: {redis: {repository: public.ecr.aws/docker/library/redis, tag: 8.6.2}}\n';
  const patch =
    'apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: podinfo, namespace: podinfo}\nspec:\n  chart: {spec: {version: ">=1.0.0-alpha"}}\n  values: {httpRoute: {hostnames: [podinfo.staging]}}\n';

  it('takes a HelmRelease that a kustomize patch holds for no release (flux2-kustomize-helm-example)', () => {
    const nodes = releases({
      'apps/base/podinfo/kustomization.yaml': 'namespace: podinfo\nresources: [release.yaml]\n',
      'apps/base/podinfo/release.yaml': podinfo,
      'apps/staging/kustomization.yaml':
        'resources: [../base/podinfo]\npatches:\n  - path: podinfo-values.yaml\n    target: {kind: HelmRelease}\n',
      'apps/staging/podinfo-values.yaml': patch,
      'apps/production/kustomization.yaml':
        'resources: [../base/podinfo]\npatchesStrategicMerge: [../patches/podinfo.yaml]\n',
      'apps/patches/podinfo.yaml': patch,
    });
    expect(nodes.map((node) => [node.id, node.release?.source])).toEqual([
      ['flux:podinfo/podinfo', 'apps/base/podinfo/release.yaml'],
    ]);
  });

  it('takes no HelmRelease from a file beside a kustomization that it does not list, and still one it lists', () => {
    const nodes = releases({
      'apps/web/kustomization.yaml': 'resources: [listed.yaml]\n',
      'apps/web/listed.yaml': podinfo.replace('name: podinfo,', 'name: listed,'),
      'apps/web/notes.yaml': podinfo.replace('name: podinfo,', 'name: unlisted,'),
    });
    expect(nodes.map((node) => node.id)).toEqual(['flux:podinfo/listed']);
  });

  it('lists a Flux chart path that this repository does not hold, and a HelmRelease with no chart, with sentences', () => {
    const nodes = releases({
      'clusters/prod/other.yaml':
        'apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: other, namespace: apps}\nspec:\n  chart: {spec: {chart: ./charts/other, sourceRef: {kind: GitRepository, name: platform}}}\n',
      'clusters/prod/bare.yaml':
        'apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: bare, namespace: apps}\nspec:\n  chart: {spec: {chart: "", version: ">=1.0.0"}}\n',
      'clusters/prod/nochart.yaml':
        'apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: nochart, namespace: apps}\nspec:\n  values: {a: 1}\n',
    });
    expect(nodes.map((node) => [node.id, node.release?.skip])).toEqual([
      [
        'flux:apps/bare',
        'its chart (version >=1.0.0) comes from a source it does not name; charts from remote repositories are never fetched while rendering a pull request',
      ],
      [
        'flux:apps/nochart',
        'it names no chart (neither spec.chart.spec nor spec.chartRef), so there is nothing to render; helm-controller would refuse it too',
      ],
      [
        'flux:apps/other',
        'the chart path ./charts/other of the GitRepository platform is not a chart directory of this repository (that GitRepository is another repository, or the chart is missing); charts in other Git repositories are never fetched while rendering a pull request',
      ],
    ]);
    for (const node of nodes) expect(node.release?.skip).not.toMatch(/ {2}| ;|the source ;/);
  });

  it('lists an Argo CD Helm source whose path is in another Git repository, with its values here and inline', () => {
    const [multi, single, ...rest] = releases({
      'argocd/a.yaml': [
        'apiVersion: argoproj.io/v1alpha1',
        'kind: Application',
        'metadata: {name: a}',
        'spec:',
        '  sources:',
        '    - {repoURL: https://github.com/example/charts.git, path: charts/a, helm: {valueFiles: [$values/envs/a.yaml, values-prod.yaml]}}',
        '    - {repoURL: https://github.com/example/gitops.git, ref: values}',
        '',
      ].join('\n'),
      'argocd/b.yaml':
        'apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: b}\nspec:\n  source: {repoURL: https://github.com/example/b.git, path: deploy, helm: {valuesObject: {image: {tag: "2"}}}}\n',
      'argocd/c.yaml':
        'apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: c}\nspec:\n  source: {repoURL: https://github.com/example/c.git, path: deploy}\n',
      'envs/a.yaml': 'image: {tag: "1"}\n',
    });
    expect(rest).toEqual([]);
    expect(multi?.id).toBe('argocd:a');
    expect(multi?.release?.skip).toBe(
      'its chart (path charts/a of https://github.com/example/charts.git) is not in this repository; charts in other Git repositories are never fetched while rendering a pull request',
    );
    expect(multi?.release?.valuesFiles).toEqual(['envs/a.yaml']);
    expect(multi?.inputFiles).toEqual(['argocd/a.yaml', 'envs/a.yaml']);
    expect(single?.id).toBe('argocd:b');
    expect(single?.release?.inlineValues).toEqual([{ name: 'helm.valuesObject', text: '{"image":{"tag":"2"}}' }]);
  });

  it('keeps remote dependencies that are not vendored apart from other remote reads of a chart', () => {
    const [node] = discoverTargets(
      tree({
        'charts/wp/Chart.yaml':
          'apiVersion: v2\nname: wp\nversion: 0.1.0\ndependencies:\n  - {name: wordpress, version: 9.0.3, repository: https://charts.helm.sh/stable}\n',
        'charts/wp/values.yaml': 'a: 1\n',
        'charts/wp/values.schema.json': '{"$ref": "https://example.com/schema.json"}',
      }),
    );
    expect(node?.remote).toHaveLength(2);
    expect(node?.remoteDependencies).toEqual([
      'charts/wp/Chart.yaml dependencies[0].repository: https://charts.helm.sh/stable (wordpress is not vendored under charts/wp/charts/)',
    ]);
  });

  it('reads a release values file as the release input only, not as a plain manifest of its folder', () => {
    const nodes = discoverTargets(
      tree({
        ...chart,
        'argocd/hello.yaml':
          'apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: hello}\nspec:\n  source: {path: charts/hello, helm: {valueFiles: [/envs/prod/hello.yaml]}}\n',
        'envs/prod/hello.yaml': 'image: {tag: "2.0"}\n',
        'envs/prod/settings.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\n',
      }),
    );
    const plain = nodes.find((node) => node.id === 'envs/prod');
    expect(plain?.inputFiles).toEqual(['envs/prod/settings.yaml']);
    expect(nodes.find((node) => node.id === 'argocd:hello')?.inputFiles).toContain('envs/prod/hello.yaml');
  });
});
