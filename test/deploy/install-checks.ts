import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { loadEnv } from '../../src/config/env.js';
import { EnvSchema } from '../../src/config/env.schema.js';
import { loadRelayTargets } from '../../src/config/relay-targets.js';

/**
 * What every way of installing Escalator on Kubernetes must give the product, checked on the
 * rendered objects: the Kustomize deploy (test/deploy/deploy.test.ts) and the Helm chart
 * (test/deploy/helm-chart.test.ts) both call {@link checkInstall}, so one list of checks holds
 * for both. The roles, one image, probes on the port the process listens on, the hardened pod
 * settings, disruption budgets and network rules per role, and a Secret reference for every
 * variable the process refuses to start without.
 */

export const root = resolve(import.meta.dirname, '../..');
export const IMAGE = 'ghcr.io/escalator-gitops/escalator';

export interface Meta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
export interface Selector {
  matchLabels?: Record<string, string>;
}
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string };
  };
}
export interface Probe {
  httpGet?: { path: string; port: string | number };
}
export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports?: Array<{ name?: string; containerPort: number; protocol?: string }>;
  env?: EnvVar[];
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    runAsNonRoot?: boolean;
    privileged?: boolean;
    capabilities?: { drop?: string[]; add?: string[] };
  };
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
}
export interface PodSpec {
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  terminationGracePeriodSeconds?: number;
  securityContext?: {
    runAsNonRoot?: boolean;
    runAsUser?: number;
    runAsGroup?: number;
    seccompProfile?: { type: string; localhostProfile?: string };
  };
  hostUsers?: boolean;
  containers: Container[];
  volumes?: Array<{
    name: string;
    emptyDir?: { sizeLimit?: string };
    configMap?: { name: string };
    secret?: { secretName: string; optional?: boolean };
  }>;
}
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: Meta;
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  automountServiceAccountToken?: boolean;
}
export interface Deployment extends K8sObject {
  spec: {
    replicas?: number;
    selector: Selector;
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}
interface NetworkPolicyPort {
  port: number;
  protocol?: string;
}
interface NetworkPolicy extends K8sObject {
  spec: {
    podSelector: Selector;
    policyTypes: string[];
    ingress?: Array<{ ports?: NetworkPolicyPort[] }>;
    egress?: Array<{ ports?: NetworkPolicyPort[]; to?: unknown[] }>;
  };
}

/**
 * The objects of a multi-document YAML stream, read as the Kubernetes API reads them: YAML 1.1,
 * so `defaultMode: 0440` is octal (288), as kubectl and the API server take it.
 */
export function parseObjects(text: string): K8sObject[] {
  return parseAllDocuments(text, { version: '1.1' })
    .filter((document) => document.contents !== null)
    .map((document) => {
      expect(document.errors).toEqual([]);
      return document.toJS() as K8sObject;
    });
}

/** `kustomize build` when installed, else `kubectl kustomize` (which embeds kustomize). */
function kustomizeCommand(): [string, string[]] {
  try {
    execFileSync('kustomize', ['version'], { stdio: 'ignore' });
    return ['kustomize', ['build']];
  } catch {
    return ['kubectl', ['kustomize']];
  }
}

const builds = new Map<string, K8sObject[]>();
/** The objects `kustomize build <dir>` makes, `dir` relative to the repository (built once per file). */
export function buildKustomize(dir: string): K8sObject[] {
  const cached = builds.get(dir);
  if (cached) return cached;
  const [command, args] = kustomizeCommand();
  const text = execFileSync(command, [...args, join(root, dir)], { encoding: 'utf8', timeout: 60_000 });
  const objects = parseObjects(text);
  builds.set(dir, objects);
  return objects;
}

export function find<T extends K8sObject = K8sObject>(objects: K8sObject[], kind: string, name: string): T {
  const found = objects.filter((o) => o.kind === kind && o.metadata.name === name);
  expect(found, `${kind}/${name}`).toHaveLength(1);
  return found[0] as T;
}

export function deployments(objects: K8sObject[]): Deployment[] {
  return objects.filter((o): o is Deployment => o.kind === 'Deployment');
}

export function container(deployment: Deployment): Container {
  expect(deployment.spec.template.spec.containers).toHaveLength(1);
  return deployment.spec.template.spec.containers[0]!;
}

export function envValue(c: Container, name: string): EnvVar | undefined {
  return c.env?.find((e) => e.name === name);
}

export function selects(selector: Selector, labels: Record<string, string>): boolean {
  const wanted = Object.entries(selector.matchLabels ?? {});
  return wanted.length > 0 && wanted.every(([key, value]) => labels[key] === value);
}

/** Variables the process cannot start without: schema fields with neither a default nor `optional()`. */
export const requiredBySchema = Object.entries(EnvSchema.shape)
  .filter(([, schema]) => !schema.safeParse(undefined).success)
  .map(([name]) => name)
  .sort();

/** Every TypeScript file under src/, for "does the code read this variable?". */
export function sourceText(): string {
  const texts: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith('.ts')) texts.push(readFileSync(path, 'utf8'));
    }
  };
  walk(join(root, 'src'));
  return texts.join('\n');
}

/** The environment a pod of this Deployment starts with, secrets replaced by test values. */
export function podEnvironment(
  objects: K8sObject[],
  deployment: Deployment,
  secrets: Record<string, string>,
): Record<string, string> {
  const c = container(deployment);
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, find(objects, 'ConfigMap', from.configMapRef.name).data);
  }
  for (const variable of c.env ?? []) {
    if (variable.value !== undefined) env[variable.name] = variable.value;
    const ref = variable.valueFrom?.secretKeyRef;
    if (ref && secrets[ref.key] !== undefined) env[variable.name] = secrets[ref.key]!;
  }
  return env;
}

/** Every variable name a Deployment's container sets, from its ConfigMaps and its own `env`. */
export function envNames(objects: K8sObject[], deployment: Deployment): string[] {
  const names = Object.keys(podEnvironment(objects, deployment, {}));
  return [...new Set([...names, ...(container(deployment).env ?? []).map((e) => e.name)])].sort();
}

export const testSecrets = {
  'redis-url': 'redis://:password@redis.escalator.svc:6379',
  'app-id': '12345',
  'private-key': '-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n',
  'webhook-secret': 'webhook-secret-for-tests',
};

/** Every ConfigMap a Deployment reads (environment or volume) is one of the install's objects. */
export function expectOwnConfigMaps(objects: K8sObject[]): void {
  const names = new Set(objects.filter((o) => o.kind === 'ConfigMap').map((o) => o.metadata.name));
  for (const deployment of deployments(objects)) {
    for (const from of container(deployment).envFrom ?? [])
      if (from.configMapRef) expect(names).toContain(from.configMapRef.name);
    for (const volume of deployment.spec.template.spec.volumes ?? [])
      if (volume.configMap) expect(names).toContain(volume.configMap.name);
  }
}

/** What an install is configured with, where installs may legitimately differ. */
export interface InstallExpectations {
  replicas: { web: number; worker: number };
  /** Whether the image must be pinned by digest as well as tag. */
  digest: boolean;
  /** Ports of the worker egress rules for relays to in-cluster agents; [] when there are none. */
  relayEgressPorts: number[];
}

/**
 * Registers, in the calling `describe`, the checks every install of Escalator must pass.
 * `objects` renders the install (lazily, so a missing tool fails the test that needs it).
 */
/** The worker's seccomp profile below the kubelet's seccomp folder (deploy/seccomp). */
export const WORKER_SECCOMP_PROFILE = 'profiles/escalator-worker.json';

/** Whether a Deployment's pods run renders: the worker role, or both roles in one. */
export function rendersIn(objects: K8sObject[], deployment: Deployment): boolean {
  const role = podEnvironment(objects, deployment, testSecrets).ESCALATOR_ROLE;
  return role === 'worker' || role === 'all';
}

export function checkInstall(objects: () => K8sObject[], expected: InstallExpectations): void {
  const web = (): Deployment => find<Deployment>(objects(), 'Deployment', 'escalator-web');
  const worker = (): Deployment => find<Deployment>(objects(), 'Deployment', 'escalator-worker');

  it(`runs web and worker from one image${expected.digest ? ', pinned by tag and digest' : ', tagged with a version'}`, () => {
    const images = deployments(objects()).map((d) => container(d).image);
    expect(images).toHaveLength(2);
    expect(new Set(images).size).toBe(1);
    const pattern = `^${IMAGE.replace(/\./g, '\\.')}:\\d+\\.\\d+\\.\\d+${expected.digest ? '@sha256:[0-9a-f]{64}' : ''}$`;
    expect(images[0]).toMatch(new RegExp(pattern));
    // The image's own entry point (tini, then node dist/main/index.js) starts every role.
    for (const deployment of deployments(objects())) {
      expect(container(deployment).command).toBeUndefined();
      expect(container(deployment).args).toBeUndefined();
    }
  });

  it(`gives each Deployment its role, with ${expected.replicas.web} web and ${expected.replicas.worker} worker replicas`, () => {
    expect(envValue(container(web()), 'ESCALATOR_ROLE')?.value).toBe('web');
    expect(envValue(container(worker()), 'ESCALATOR_ROLE')?.value).toBe('worker');
    expect(web().spec.replicas).toBe(expected.replicas.web);
    expect(worker().spec.replicas).toBe(expected.replicas.worker);
  });

  it.each(['escalator-web', 'escalator-worker'])(
    'probes %s on /healthz for liveness and /readyz for readiness, on the port the process listens on',
    (name) => {
      const deployment = find<Deployment>(objects(), 'Deployment', name);
      const c = container(deployment);
      const http = c.ports?.find((p) => p.name === 'http');
      expect(http?.containerPort).toBe(3000);
      expect(c.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
      // The process listens on HOST:PORT from the environment; 127.0.0.1 (its default) would be
      // unreachable for the kubelet.
      const env = podEnvironment(objects(), deployment, testSecrets);
      expect(env.PORT).toBe(String(http?.containerPort));
      expect(env.HOST).toBe('0.0.0.0');
    },
  );

  it('exposes the web pods on port 3000 through the Service', () => {
    const service = find<
      K8sObject & {
        spec: { ports: Array<{ name: string; port: number; targetPort: string }>; selector: Record<string, string> };
      }
    >(objects(), 'Service', 'escalator-web');
    expect(service.spec.ports).toEqual([{ name: 'http', port: 3000, targetPort: 'http', protocol: 'TCP' }]);
  });

  it('routes the web Service only to web pods, and gives workers a headless Service for scraping only', () => {
    const service = find<K8sObject & { spec: { selector: Record<string, string> } }>(
      objects(),
      'Service',
      'escalator-web',
    );
    const selector = { matchLabels: service.spec.selector };
    expect(selects(selector, web().spec.template.metadata.labels)).toBe(true);
    expect(selects(selector, worker().spec.template.metadata.labels)).toBe(false);
    const workers = find<K8sObject & { spec: { selector: Record<string, string>; clusterIP: string } }>(
      objects(),
      'Service',
      'escalator-worker',
    );
    expect(workers.spec.clusterIP).toBe('None');
    expect(selects({ matchLabels: workers.spec.selector }, worker().spec.template.metadata.labels)).toBe(true);
    expect(selects({ matchLabels: workers.spec.selector }, web().spec.template.metadata.labels)).toBe(false);
  });

  it('runs every pod as the non-root node user with a read-only root, no privileges and RuntimeDefault seccomp (the worker: its Localhost profile)', () => {
    for (const deployment of deployments(objects())) {
      const pod = deployment.spec.template.spec;
      expect(pod.securityContext).toMatchObject({
        runAsNonRoot: true,
        runAsUser: 1000,
        runAsGroup: 1000,
        seccompProfile: rendersIn(objects(), deployment)
          ? { type: 'Localhost', localhostProfile: WORKER_SECCOMP_PROFILE }
          : { type: 'RuntimeDefault' },
      });
      const c = container(deployment);
      expect(c.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        privileged: false,
        capabilities: { drop: ['ALL'] },
      });
      expect(c.securityContext?.capabilities?.add).toBeUndefined();
      // The only writable path is an emptyDir on /tmp (renders, checkouts).
      const tmp = c.volumeMounts?.find((m) => m.mountPath === '/tmp');
      expect(pod.volumes?.find((v) => v.name === tmp?.name)?.emptyDir?.sizeLimit).toMatch(/^\d+[MG]i$/);
      expect(c.volumeMounts?.filter((m) => !m.readOnly).map((m) => m.mountPath)).toEqual(['/tmp']);
    }
  });

  it('mounts no service account token and waits 60 s for a graceful shutdown', () => {
    expect(find(objects(), 'ServiceAccount', 'escalator').automountServiceAccountToken).toBe(false);
    for (const deployment of deployments(objects())) {
      const pod = deployment.spec.template.spec;
      expect(pod.serviceAccountName).toBe('escalator');
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(pod.terminationGracePeriodSeconds).toBe(60);
      expect(container(deployment).resources?.requests?.memory).toBeDefined();
      expect(container(deployment).resources?.limits?.memory).toBeDefined();
    }
  });

  it('has one disruption budget per role, each selecting exactly that role', () => {
    const pdbWeb = find<K8sObject & { spec: { selector: Selector; maxUnavailable: number } }>(
      objects(),
      'PodDisruptionBudget',
      'escalator-web',
    );
    const pdbWorker = find<K8sObject & { spec: { selector: Selector; maxUnavailable: number } }>(
      objects(),
      'PodDisruptionBudget',
      'escalator-worker',
    );
    expect(selects(pdbWeb.spec.selector, web().spec.template.metadata.labels)).toBe(true);
    expect(selects(pdbWeb.spec.selector, worker().spec.template.metadata.labels)).toBe(false);
    expect(selects(pdbWorker.spec.selector, worker().spec.template.metadata.labels)).toBe(true);
    expect(selects(pdbWorker.spec.selector, web().spec.template.metadata.labels)).toBe(false);
    expect(pdbWeb.spec.maxUnavailable).toBe(1);
    expect(pdbWorker.spec.maxUnavailable).toBe(1);
    // Every Deployment's selector matches its own pod template.
    for (const deployment of deployments(objects()))
      expect(selects(deployment.spec.selector, deployment.spec.template.metadata.labels)).toBe(true);
  });

  it('references a Secret key, never optional, for every variable the process cannot start without', () => {
    expect(requiredBySchema).toEqual(['APP_ID', 'PRIVATE_KEY', 'WEBHOOK_SECRET']);
    // REDIS_URL has a default (127.0.0.1), which is never right in a cluster; it may hold a password.
    for (const deployment of deployments(objects())) {
      const c = container(deployment);
      for (const name of [...requiredBySchema, 'REDIS_URL']) {
        const ref = envValue(c, name)?.valueFrom?.secretKeyRef;
        expect(ref, `${deployment.metadata.name} ${name}`).toMatchObject({ name: 'escalator' });
        expect(ref?.optional, `${deployment.metadata.name} ${name}`).not.toBe(true);
      }
    }
  });

  it('gives the web role the optional tokens as optional Secret references, and the worker none of them', () => {
    const tokens = {
      ESCALATOR_REGISTRY_TOKEN: 'registry-token',
      ESCALATOR_CI_TOKEN: 'ci-token',
      ESCALATOR_ADMIN_TOKEN: 'admin-token',
      ESCALATOR_AGENT_TOKEN: 'agent-token',
    };
    for (const [name, key] of Object.entries(tokens)) {
      expect(envValue(container(web()), name)?.valueFrom?.secretKeyRef).toEqual({
        name: 'escalator',
        key,
        optional: true,
      });
      expect(envValue(container(worker()), name)).toBeUndefined();
    }
  });

  it('mounts the relay targets and their optional Secret in both roles', () => {
    for (const deployment of deployments(objects())) {
      const pod = deployment.spec.template.spec;
      const secret = pod.volumes?.find((v) => v.secret)?.secret;
      expect(secret).toMatchObject({ secretName: 'escalator-relay', optional: true });
      const mounts = container(deployment).volumeMounts?.map((m) => m.mountPath);
      expect(mounts).toContain('/var/run/secrets/escalator/relay');
      expect(mounts).toContain('/etc/escalator/relay');
    }
  });

  it('gives every pod that renders what namespace isolation needs, and leaves it the default mode', () => {
    const renderers = deployments(objects()).filter((deployment) => rendersIn(objects(), deployment));
    expect(renderers.map((d) => d.metadata.name)).toEqual(['escalator-worker']);
    for (const deployment of renderers) {
      const pod = deployment.spec.template.spec;
      // The profile that allows unshare(CLONE_NEWUSER), mount and chroot (test/deploy/seccomp-profile.test.ts
      // renders under it); no capability is added for it, and privilege escalation stays off.
      expect(pod.securityContext?.seccompProfile).toEqual({
        type: 'Localhost',
        localhostProfile: WORKER_SECCOMP_PROFILE,
      });
      expect(container(deployment).securityContext?.capabilities).toEqual({ drop: ['ALL'] });
      expect(container(deployment).securityContext?.allowPrivilegeEscalation).toBe(false);
      // The cluster's default: Kubernetes user namespaces are recommended where nodes support them (docs/operations.md).
      expect(pod.hostUsers).toBeUndefined();
      // Nothing selects the weaker proxy mode: the boot check's default, namespace, holds.
      const env = podEnvironment(objects(), deployment, testSecrets);
      expect(env.ESCALATOR_RENDER_ISOLATION).toBeUndefined();
      const loaded = loadEnv(env);
      expect(loaded.ok && loaded.env.ESCALATOR_RENDER_ISOLATION).toBe('namespace');
    }
  });

  it('sets only variables the code reads, in a form the boot check accepts', () => {
    const source = sourceText();
    for (const deployment of deployments(objects())) {
      const env = podEnvironment(objects(), deployment, testSecrets);
      // Every name is a schema field or read somewhere in src/: a misspelt variable is ignored
      // silently by the process, so it fails here instead.
      const unknown = envNames(objects(), deployment).filter(
        (name) => !(name in EnvSchema.shape) && !source.includes(name),
      );
      expect(unknown, deployment.metadata.name).toEqual([]);
      const loaded = loadEnv(env);
      expect(loaded.ok ? [] : loaded.problems).toEqual([]);
      if (!loaded.ok) continue;
      expect(loaded.env.ESCALATOR_ROLE).toBe(deployment.metadata.name === 'escalator-web' ? 'web' : 'worker');
      expect(loaded.env.REDIS_URL).toBe(testSecrets['redis-url']);
    }
  });

  it('ships relay targets that the product loads (an empty list by default)', () => {
    for (const deployment of deployments(objects())) {
      const env = podEnvironment(objects(), deployment, testSecrets);
      const file = env.ESCALATOR_RELAY_TARGETS_FILE ?? '';
      // The variable names a file inside the mounted ConfigMap.
      const mount = container(deployment).volumeMounts?.find((m) => m.mountPath === dirname(file));
      const volume = deployment.spec.template.spec.volumes?.find((v) => v.name === mount?.name);
      const data = find(objects(), 'ConfigMap', volume?.configMap?.name ?? '(no ConfigMap volume)').data ?? {};
      expect(Object.keys(data)).toEqual([basename(file)]);
      const dir = mkdtempSync(join(tmpdir(), 'escalator-deploy-'));
      try {
        writeFileSync(join(dir, basename(file)), data[basename(file)] ?? '');
        expect(loadRelayTargets({ ESCALATOR_RELAY_TARGETS_FILE: join(dir, basename(file)) })).toEqual({
          ok: true,
          targets: [],
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  it('refers only to ConfigMaps it contains', () => {
    expectOwnConfigMaps(objects());
  });

  it(`admits only port 3000 in, and lets out only DNS, Redis and HTTPS${expected.relayEgressPorts.length > 0 ? ' (plus agent ports for relays)' : ''}`, () => {
    const policy = find<NetworkPolicy>(objects(), 'NetworkPolicy', 'escalator');
    expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    for (const deployment of deployments(objects()))
      expect(selects(policy.spec.podSelector, deployment.spec.template.metadata.labels)).toBe(true);
    expect(policy.spec.ingress?.flatMap((rule) => rule.ports ?? [])).toEqual([{ port: 3000, protocol: 'TCP' }]);
    const egress = policy.spec.egress
      ?.flatMap((rule) => rule.ports ?? [])
      .map((p) => `${p.port}/${p.protocol}`)
      .sort();
    expect(egress).toEqual(['443/TCP', '53/TCP', '53/UDP', '6379/TCP']);
    for (const rule of policy.spec.egress ?? []) expect(rule.ports?.length).toBeGreaterThan(0);

    const relays = objects().filter((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'escalator-relay-egress');
    if (expected.relayEgressPorts.length === 0) {
      expect(relays).toEqual([]);
      return;
    }
    const relay = find<NetworkPolicy>(objects(), 'NetworkPolicy', 'escalator-relay-egress');
    expect(relay.spec.policyTypes).toEqual(['Egress']);
    expect(selects(relay.spec.podSelector, worker().spec.template.metadata.labels)).toBe(true);
    expect(selects(relay.spec.podSelector, web().spec.template.metadata.labels)).toBe(false);
    expect(relay.spec.egress?.flatMap((rule) => rule.ports ?? []).map((p) => p.port)).toEqual(
      expected.relayEgressPorts,
    );
  });

  it('scrapes /metrics from both Services, web and worker', () => {
    const monitor = find<
      K8sObject & { spec: { selector: Selector; endpoints: Array<{ port: string; path: string }> } }
    >(objects(), 'ServiceMonitor', 'escalator');
    expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(monitor.spec.endpoints).toHaveLength(1);
    expect(monitor.spec.endpoints[0]).toMatchObject({ port: 'http', path: '/metrics' });
    const services = objects().filter(
      (o): o is K8sObject & { spec: { ports: Array<{ name: string }> } } => o.kind === 'Service',
    );
    expect(
      services
        .filter((s) => selects(monitor.spec.selector, s.metadata.labels ?? {}))
        .map((s) => s.metadata.name)
        .sort(),
    ).toEqual(['escalator-web', 'escalator-worker']);
    for (const service of services)
      expect(service.spec.ports.map((p) => p.name)).toContain(monitor.spec.endpoints[0]!.port);
  });
}
