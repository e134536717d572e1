import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadEnv } from '../../src/config/env.js';
import { EnvSchema } from '../../src/config/env.schema.js';
import { loadRelayTargets } from '../../src/config/relay-targets.js';
import {
  buildKustomize,
  checkInstall,
  container,
  type Deployment,
  deployments,
  envNames,
  envValue,
  find,
  IMAGE,
  type K8sObject,
  parseObjects,
  podEnvironment,
  root,
  selects,
  sourceText,
  testSecrets,
} from './install-checks.js';

/**
 * Escalator's own chart (deploy/helm/escalator) under the real helm 3 and helm 4
 * (scripts/fetch-helm.sh puts them in .cache/tools): `helm lint --strict`, `helm template`, the
 * rendered objects checked by the same checks as the Kustomize deploy (install-checks.ts), and
 * compared with the Kustomize deploy object by object: both must install the same product.
 * values.schema.json must make helm refuse a wrong value, naming its path.
 */

const CHART = join(root, 'deploy/helm/escalator');
const VERSIONS = ['3.17', '4.1'] as const;
type HelmVersion = (typeof VERSIONS)[number];
const PRODUCTION = join(CHART, 'ci/production-values.yaml');

/** helm's own directories (config, cache, data) go to a scratch folder, never the user's. */
const helmHome = mkdtempSync(join(tmpdir(), 'escalator-helm-chart-'));
afterAll(() => rmSync(helmHome, { recursive: true, force: true }));

function helmBinary(version: HelmVersion): string {
  const path = join(root, `.cache/tools/helm-${version}/helm`);
  if (!existsSync(path))
    throw new Error(
      `helm ${version} is not at ${relative(root, path)}: run scripts/fetch-helm.sh (it fetches helm 3.17 and 4.1 into .cache/tools), then run this test again`,
    );
  return path;
}

interface HelmRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

function helm(version: HelmVersion, args: string[]): HelmRun {
  const run = spawnSync(helmBinary(version), args, {
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: helmHome,
      HELM_CONFIG_HOME: join(helmHome, 'config'),
      HELM_CACHE_HOME: join(helmHome, 'cache'),
      HELM_DATA_HOME: join(helmHome, 'data'),
      // No cluster is contacted by template and lint; a stray kubeconfig must not be read either.
      KUBECONFIG: join(helmHome, 'no-kubeconfig'),
    },
  });
  if (run.error) throw run.error;
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

const texts = new Map<string, string>();
/** `helm template escalator deploy/helm/escalator --namespace escalator …args`, once per arguments. */
function template(version: HelmVersion, args: string[] = []): string {
  const key = JSON.stringify([version, args]);
  const cached = texts.get(key);
  if (cached !== undefined) return cached;
  const run = helm(version, ['template', 'escalator', CHART, '--namespace', 'escalator', ...args]);
  if (run.status !== 0) throw new Error(`helm ${version} template ${args.join(' ')} failed: ${run.stderr}`);
  texts.set(key, run.stdout);
  return run.stdout;
}

function render(version: HelmVersion, args: string[] = []): K8sObject[] {
  return parseObjects(template(version, args));
}

/**
 * An object as the product sees it: labels, annotations and selectors left out (the chart adds
 * its release to them; that selectors pick the right pods is checked by checkInstall), generated
 * ConfigMaps' hash suffixes removed, and the relay targets file read as YAML (its comments differ).
 */
function normalize(object: K8sObject): unknown {
  const copy = structuredClone(object) as K8sObject & Record<string, unknown>;
  const unhash = (name: string): string => name.replace(/-[a-z0-9]{10}$/, '');
  delete copy.metadata.labels;
  delete copy.metadata.annotations;
  if (copy.kind === 'ConfigMap') {
    copy.metadata.name = unhash(copy.metadata.name);
    for (const [key, value] of Object.entries(copy.data ?? {}))
      if (key.endsWith('.yaml')) copy.data![key] = JSON.stringify(parse(value));
  }
  const spec = copy.spec as Record<string, unknown> | undefined;
  if (spec) {
    delete spec.selector;
    delete spec.podSelector;
  }
  if (copy.kind === 'Deployment') {
    const pod = (copy as unknown as Deployment).spec.template;
    delete (pod as { metadata?: unknown }).metadata;
    for (const constraint of (pod.spec as { topologySpreadConstraints?: Array<{ labelSelector?: unknown }> })
      .topologySpreadConstraints ?? [])
      delete constraint.labelSelector;
    for (const volume of pod.spec.volumes ?? [])
      if (volume.configMap) volume.configMap.name = unhash(volume.configMap.name);
    for (const c of pod.spec.containers)
      for (const from of c.envFrom ?? [])
        if (from.configMapRef) from.configMapRef.name = unhash(from.configMapRef.name);
  }
  return copy;
}

function normalized(objects: K8sObject[]): unknown[] {
  return objects
    .filter((o) => o.kind !== 'Namespace')
    .sort((a, b) => `${a.kind}/${a.metadata.name}`.localeCompare(`${b.kind}/${b.metadata.name}`))
    .map(normalize);
}

/** Variables set outside env.schema.ts, each with why (and the test checks the why). */
const outsideSchema = {
  // Read by src/main/index.ts (and set by the Dockerfile): production mode stops a process
  // without App credentials instead of opening the setup page.
  NODE_ENV: 'read by src/main/index.ts',
} as const;

type PodSpecWithUsers = Deployment['spec']['template']['spec'] & {
  hostUsers?: boolean;
  containers: Array<{ securityContext?: Record<string, unknown> }>;
};

const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

describe('deploy/helm/escalator', () => {
  it("is a v2 chart whose appVersion is package.json's version", () => {
    const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as Record<string, unknown>;
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'escalator', type: 'application', appVersion: version });
  });

  it('accepts under config only non-secret variables of env.schema.ts that the chart does not set itself', () => {
    const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8')) as {
      $schema: string;
      additionalProperties: boolean;
      properties: { config: { additionalProperties: boolean; properties: Record<string, unknown> } };
    };
    // Draft 7: what helm 3's validator knows; helm 4 validates it too.
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.config.additionalProperties).toBe(false);
    const names = Object.keys(schema.properties.config.properties);
    expect(names.filter((name) => !(name in EnvSchema.shape))).toEqual([]);
    const setByChart = ['ESCALATOR_ROLE', 'HOST', 'PORT', 'ESCALATOR_RELAY_TARGETS_FILE', 'ESCALATOR_RELAY_TARGETS'];
    const secrets = ['REDIS_URL', 'APP_ID', 'PRIVATE_KEY', 'WEBHOOK_SECRET', 'ESCALATOR_REGISTRY_TOKEN'];
    const tokens = ['ESCALATOR_CI_TOKEN', 'ESCALATOR_ADMIN_TOKEN', 'ESCALATOR_AGENT_TOKEN'];
    expect(names.filter((name) => [...setByChart, ...secrets, ...tokens].includes(name))).toEqual([]);
  });

  it('renders the same bytes under helm 3.17 and helm 4.1', () => {
    for (const args of [[], ['-f', PRODUCTION]]) expect(template('4.1', args)).toBe(template('3.17', args));
  });
  it("renders docs/operations.md's production values file, which the product boots with", () => {
    const docs = readFileSync(join(root, 'docs/operations.md'), 'utf8');
    const block = /^`escalator-values\.yaml`[\s\S]*?^```yaml\n([\s\S]*?)^```$/m.exec(docs)?.[1];
    expect(block, 'the escalator-values.yaml block of docs/operations.md').toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), 'escalator-chart-docs-'));
    try {
      const file = join(dir, 'escalator-values.yaml');
      // The placeholder an operator replaces with the release's digest.
      writeFileSync(file, block!.replace('sha256:<digest>', `sha256:${'0'.repeat(64)}`));
      for (const v of VERSIONS) {
        const run = helm(v, ['template', 'escalator', CHART, '--namespace', 'escalator', '-f', file]);
        expect(run.status, run.stderr).toBe(0);
        const objects = parseObjects(run.stdout);
        expect(objects.filter((o) => o.kind === 'Ingress').map((o) => o.metadata.name)).toEqual(['escalator']);
        expect(objects.filter((o) => o.kind === 'NetworkPolicy').map((o) => o.metadata.name)).toEqual([
          'escalator',
          'escalator-relay-egress',
        ]);
        for (const deployment of deployments(objects)) {
          expect(deployment.spec.replicas).toBe(3);
          const loaded = loadEnv(podEnvironment(objects, deployment, testSecrets));
          expect(loaded.ok ? [] : loaded.problems).toEqual([]);
        }
        const data = find(objects, 'ConfigMap', 'escalator-relay-targets').data?.['relay-targets.yaml'];
        expect((parse(data ?? '') as { targets: Array<{ name: string }> }).targets.map((t) => t.name)).toEqual([
          'argocd',
        ]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('makes helm install refuse a wrong value before anything is applied', () => {
    // helm 4's client-side dry run needs no cluster; helm 3's install always contacts one, and
    // refuses with the same schema check as its template (below).
    const run = helm('4.1', ['install', 'escalator', CHART, '--dry-run=client', '--set', 'web.replicas=two']);
    expect(run.status).not.toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain("INSTALLATION FAILED: values don't meet the specifications of the schema(s)");
    expect(run.stderr).toContain("- at '/web/replicas': got string, want integer");
  });
});

describe.each(VERSIONS)('helm %s', (v) => {
  it('lints the chart with --strict, with the default values and with each ci/ values file', () => {
    const valueFiles = readdirSync(join(CHART, 'ci')).map((file) => join(CHART, 'ci', file));
    expect(valueFiles.length).toBeGreaterThan(0);
    for (const args of [[], ...valueFiles.map((file) => ['-f', file])]) {
      const run = helm(v, ['lint', '--strict', CHART, ...args]);
      expect(run.stderr + run.stdout, args.join(' ')).toContain('1 chart(s) linted, 0 chart(s) failed');
      expect(run.status, run.stdout + run.stderr).toBe(0);
    }
  });

  describe('with the default values', () => {
    const objects = (): K8sObject[] => render(v);

    checkInstall(objects, { replicas: { web: 2, worker: 1 }, digest: false, relayEgressPorts: [] });

    it("tags the image with the chart's appVersion", () => {
      for (const deployment of deployments(objects())) expect(container(deployment).image).toBe(`${IMAGE}:${version}`);
    });

    it('installs the same objects as deploy/base, with the same settings', () => {
      const chart = normalized(objects()).map((o) => {
        delete (o as K8sObject).metadata.namespace;
        return o;
      });
      expect(chart).toEqual(normalized(buildKustomize('deploy/base')));
    });
  });

  describe('with ci/production-values.yaml', () => {
    const objects = (): K8sObject[] => render(v, ['-f', PRODUCTION]);

    checkInstall(objects, { replicas: { web: 3, worker: 3 }, digest: true, relayEgressPorts: [8080, 9292] });

    it('installs the same objects as deploy/overlays/production, with the same settings', () => {
      expect(normalized(objects())).toEqual(normalized(buildKustomize('deploy/overlays/production')));
    });

    it('puts every object in the release namespace', () => {
      for (const o of objects()) expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe('escalator');
    });

    it('sets only variables declared in env.schema.ts, NODE_ENV aside', () => {
      for (const deployment of deployments(objects()))
        expect(envNames(objects(), deployment).filter((name) => !(name in EnvSchema.shape))).toEqual(['NODE_ENV']);
      expect(sourceText()).toContain('process.env.NODE_ENV');
    });
  });

  describe('values.schema.json', () => {
    /** How each helm names a value's path in a schema error: helm 3 `a.b`, helm 4 `'/a/b'`. */
    const named = (path: string[]): string => (v === '3.17' ? `- ${path.join('.')}:` : `- at '/${path.join('/')}':`);

    it.each([
      { why: 'a string for a number', args: ['--set', 'web.replicas=two'], path: ['web', 'replicas'] },
      { why: 'a misspelt setting', args: ['--set', 'config.LOG_LEVL=debug'], path: ['config'], also: 'LOG_LEVL' },
      {
        why: 'a secret among the settings',
        args: ['--set', 'config.PRIVATE_KEY=x'],
        path: ['config'],
        also: 'PRIVATE_KEY',
      },
      { why: 'a value the product refuses', args: ['--set', 'config.LOG_LEVEL=loud'], path: ['config', 'LOG_LEVEL'] },
      { why: 'a digest that is not sha256', args: ['--set', 'image.digest=sha256:abc'], path: ['image', 'digest'] },
      {
        why: 'a Redis URL with a password',
        args: ['--set', 'redis.url=redis://:pw@redis:6379'],
        path: ['redis', 'url'],
      },
      {
        why: 'an unconfined seccomp profile',
        args: ['--set', 'worker.seccompProfile.type=Unconfined'],
        path: ['worker', 'seccompProfile', 'type'],
      },
      { why: 'a privileged port', args: ['--set', 'port=80'], path: ['port'] },
      { why: 'no Secret name', args: ['--set', 'secrets.name='], path: ['secrets', 'name'] },
      {
        why: 'a relay target of an unknown type',
        args: [
          '--set-json',
          'relay.targets=[{"name":"a","type":"argo","url":"http://x","secret":{"env":"X"},"repos":["a/b"]}]',
        ],
        path: ['relay', 'targets', '0', 'type'],
      },
    ])('refuses $why, naming its path', ({ args, path, also }) => {
      const run = helm(v, ['template', 'escalator', CHART, ...args]);
      expect(run.status).not.toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain("values don't meet the specifications of the schema(s)");
      expect(run.stderr).toContain(named(path));
      if (also) expect(run.stderr).toContain(also);
    });
  });

  describe('options', () => {
    const web = (objects: K8sObject[]): Deployment => find<Deployment>(objects, 'Deployment', 'escalator-web');
    const worker = (objects: K8sObject[]): Deployment => find<Deployment>(objects, 'Deployment', 'escalator-worker');

    it('passes ESCALATOR_AGENT_TOKEN to the web role only, as an optional Secret reference, unless its key is ""', () => {
      expect(envValue(container(web(render(v))), 'ESCALATOR_AGENT_TOKEN')?.valueFrom?.secretKeyRef).toEqual({
        name: 'escalator',
        key: 'agent-token',
        optional: true,
      });
      expect(envValue(container(worker(render(v))), 'ESCALATOR_AGENT_TOKEN')).toBeUndefined();
      const off = render(v, ['--set', 'secrets.keys.agentToken=']);
      expect(envValue(container(web(off)), 'ESCALATOR_AGENT_TOKEN')).toBeUndefined();
    });

    it('leaves out an optional token whose key is empty, and reads every key from the Secret named', () => {
      const objects = render(v, ['--set', 'secrets.keys.ciToken=', '--set', 'secrets.name=escalator-app']);
      expect(envValue(container(web(objects)), 'ESCALATOR_CI_TOKEN')).toBeUndefined();
      for (const deployment of deployments(objects))
        for (const variable of container(deployment).env ?? [])
          if (variable.valueFrom?.secretKeyRef) expect(variable.valueFrom.secretKeyRef.name).toBe('escalator-app');
    });

    it('takes a Redis URL without credentials as a plain value, which the boot check accepts', () => {
      const objects = render(v, ['--set', 'redis.url=redis://redis.escalator.svc:6379/2']);
      for (const deployment of deployments(objects)) {
        expect(envValue(container(deployment), 'REDIS_URL')).toEqual({
          name: 'REDIS_URL',
          value: 'redis://redis.escalator.svc:6379/2',
        });
        const loaded = loadEnv(podEnvironment(objects, deployment, testSecrets));
        expect(loaded.ok && loaded.env.REDIS_URL).toBe('redis://redis.escalator.svc:6379/2');
      }
    });

    it('writes settings as the strings the product parses, and rolls the pods when one changes', () => {
      const objects = render(v, [
        '--set',
        'config.ESCALATOR_WEBHOOK_BUFFER_BYTES=209715200',
        '--set',
        'config.ESCALATOR_RENDER_ISOLATION=proxy',
      ]);
      const env = podEnvironment(objects, worker(objects), testSecrets);
      // A whole number from values must not reach the pod as 2.097152e+08.
      expect(env.ESCALATOR_WEBHOOK_BUFFER_BYTES).toBe('209715200');
      expect(env.ESCALATOR_MAX_BODY_BYTES).toBe('1048576');
      const loaded = loadEnv(env);
      expect(loaded.ok && loaded.env.ESCALATOR_RENDER_ISOLATION).toBe('proxy');
      const checksum = (d: Deployment): string | undefined =>
        (d.spec.template as { metadata: { annotations?: Record<string, string> } }).metadata.annotations?.[
          'checksum/config'
        ];
      expect(checksum(worker(objects))).toMatch(/^[0-9a-f]{64}$/);
      expect(checksum(worker(objects))).not.toBe(checksum(worker(render(v))));
    });

    it('renders relay targets from values into the file both roles read, which the product loads', () => {
      const target = {
        name: 'argocd',
        type: 'argocd',
        url: 'http://argocd-server.argocd.svc.cluster.local/api/webhook',
        secret: { file: '/var/run/secrets/escalator/relay/argocd' },
        repos: ['example/gitops'],
      };
      const objects = render(v, ['--set-json', `relay.targets=${JSON.stringify([target])}`]);
      const data = find(objects, 'ConfigMap', 'escalator-relay-targets').data ?? {};
      const dir = mkdtempSync(join(tmpdir(), 'escalator-chart-relay-'));
      try {
        // The target's secret file, where the test can write it instead of the mounted Secret.
        writeFileSync(join(dir, 'argocd'), 'argocd-webhook-secret\n');
        const text = (data['relay-targets.yaml'] ?? '').replace(target.secret.file, join(dir, 'argocd'));
        writeFileSync(join(dir, 'relay-targets.yaml'), text);
        const loaded = loadRelayTargets({ ESCALATOR_RELAY_TARGETS_FILE: join(dir, 'relay-targets.yaml') });
        expect(loaded.ok ? loaded.targets.map((t) => [t.name, t.type, t.url]) : loaded).toEqual([
          ['argocd', 'argocd', target.url],
        ]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      // A ConfigMap managed elsewhere replaces the chart's.
      const own = render(v, ['--set', 'relay.existingConfigMap=my-relay-targets']);
      expect(own.filter((o) => o.metadata.name === 'escalator-relay-targets')).toEqual([]);
      for (const deployment of deployments(own))
        expect(deployment.spec.template.spec.volumes?.find((vol) => vol.name === 'relay-targets')?.configMap).toEqual({
          name: 'my-relay-targets',
        });
    });

    it('exposes only the public routes through the optional Ingress, to the web Service', () => {
      expect(render(v).filter((o) => o.kind === 'Ingress')).toEqual([]);
      const objects = render(v, [
        '--set',
        'ingress.enabled=true',
        '--set',
        'ingress.className=nginx',
        '--set',
        'ingress.host=escalator.example.com',
        '--set',
        'ingress.tlsSecretName=escalator-tls',
      ]);
      const ingress = find<
        K8sObject & {
          spec: {
            ingressClassName: string;
            tls: unknown[];
            rules: Array<{
              host: string;
              http: { paths: Array<{ path: string; pathType: string; backend: { service: unknown } }> };
            }>;
          };
        }
      >(objects, 'Ingress', 'escalator');
      expect(ingress.spec.ingressClassName).toBe('nginx');
      expect(ingress.spec.tls).toEqual([{ hosts: ['escalator.example.com'], secretName: 'escalator-tls' }]);
      expect(ingress.spec.rules).toHaveLength(1);
      expect(ingress.spec.rules[0]!.host).toBe('escalator.example.com');
      expect(ingress.spec.rules[0]!.http.paths.map((p) => `${p.pathType} ${p.path}`)).toEqual([
        'Exact /api/github/webhooks',
        'Exact /api/v1/images',
        'Prefix /registry',
      ]);
      for (const path of ingress.spec.rules[0]!.http.paths)
        expect(path.backend.service).toEqual({ name: 'escalator-web', port: { name: 'http' } });
    });

    it('leaves out the ServiceMonitor, the NetworkPolicy and the budgets when asked, and labels the ServiceMonitor for a Prometheus', () => {
      const off = render(v, [
        '--set',
        'serviceMonitor.enabled=false',
        '--set',
        'networkPolicy.enabled=false',
        '--set',
        'web.podDisruptionBudget.enabled=false',
        '--set',
        'worker.podDisruptionBudget.enabled=false',
      ]);
      expect(off.filter((o) => ['ServiceMonitor', 'NetworkPolicy', 'PodDisruptionBudget'].includes(o.kind))).toEqual(
        [],
      );
      const labelled = render(v, ['--set', 'serviceMonitor.labels.release=kube-prometheus-stack']);
      expect(find(labelled, 'ServiceMonitor', 'escalator').metadata.labels?.release).toBe('kube-prometheus-stack');
    });

    it('gives the worker the seccomp profile render isolation needs by default, and leaves the web role on RuntimeDefault', () => {
      const objects = render(v);
      expect((worker(objects).spec.template.spec as PodSpecWithUsers).securityContext?.seccompProfile).toEqual({
        type: 'Localhost',
        localhostProfile: 'profiles/escalator-worker.json',
      });
      expect((web(objects).spec.template.spec as PodSpecWithUsers).securityContext?.seccompProfile).toEqual({
        type: 'RuntimeDefault',
      });
      expect(envValue(container(worker(objects)), 'ESCALATOR_RENDER_ISOLATION')).toBeUndefined();
    });

    it('lets an operator add an AppArmor profile and a user namespace to the worker, leaving the web role as it is', () => {
      const objects = render(v, [
        '--set',
        'worker.appArmorProfile.type=Localhost',
        '--set',
        'worker.appArmorProfile.localhostProfile=escalator-worker',
        '--set',
        'worker.hostUsers=false',
      ]);
      const pod = worker(objects).spec.template.spec as PodSpecWithUsers;
      expect(pod.securityContext?.seccompProfile).toEqual({
        type: 'Localhost',
        localhostProfile: 'profiles/escalator-worker.json',
      });
      expect(pod.hostUsers).toBe(false);
      expect(pod.containers[0]?.securityContext).toMatchObject({
        appArmorProfile: { type: 'Localhost', localhostProfile: 'escalator-worker' },
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
      });
      const webPod = web(objects).spec.template.spec as PodSpecWithUsers;
      expect(webPod.securityContext?.seccompProfile).toEqual({ type: 'RuntimeDefault' });
      expect(webPod.hostUsers).toBeUndefined();
      expect(webPod.containers[0]?.securityContext).not.toHaveProperty('appArmorProfile');
      // Unset by default, as in deploy/base (the equality with it above covers the defaults).
      expect((worker(render(v)).spec.template.spec as PodSpecWithUsers).hostUsers).toBeUndefined();
    });

    it('scales web and worker separately', () => {
      const objects = render(v, ['--set', 'web.replicas=4', '--set', 'worker.replicas=7']);
      expect(web(objects).spec.replicas).toBe(4);
      expect(worker(objects).spec.replicas).toBe(7);
    });

    it('names objects after another release, whose pods no selector of this one picks', () => {
      const run = helm(v, ['template', 'staging', CHART, '--namespace', 'escalator']);
      expect(run.status, run.stderr).toBe(0);
      const other = parseObjects(run.stdout);
      expect(deployments(other).map((d) => d.metadata.name)).toEqual([
        'staging-escalator-web',
        'staging-escalator-worker',
      ]);
      const ours = render(v);
      for (const deployment of deployments(other)) {
        for (const service of ours.filter((o) => o.kind === 'Service'))
          expect(
            selects(
              { matchLabels: (service.spec as { selector: Record<string, string> }).selector },
              deployment.spec.template.metadata.labels,
            ),
          ).toBe(false);
      }
    });

    it('sets no variable outside env.schema.ts but those it must, with every option on', () => {
      const objects = render(v, [
        '-f',
        PRODUCTION,
        '--set',
        'secrets.keys.agentToken=agent-token',
        '--set',
        'redis.url=redis://redis:6379',
        '--set',
        'config.ESCALATOR_REDIS_PREFIX=staging',
        '--set',
        'ingress.enabled=true',
      ]);
      const outside = new Set<string>();
      for (const deployment of deployments(objects))
        for (const name of envNames(objects, deployment)) if (!(name in EnvSchema.shape)) outside.add(name);
      for (const name of outside) expect(Object.keys(outsideSchema), name).toContain(name);
      // The exception holds for its reason: NODE_ENV is read by the code.
      expect(sourceText()).toContain('process.env.NODE_ENV');
    });
  });
});
