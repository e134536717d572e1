import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadEnv } from '../../src/config/env.js';
import {
  buildKustomize,
  checkInstall,
  container,
  type Container,
  deployments,
  envValue,
  expectOwnConfigMaps,
  find,
  IMAGE,
  type K8sObject,
  podEnvironment,
  root,
  type Selector,
  selects,
  testSecrets,
  WORKER_SECCOMP_PROFILE,
} from './install-checks.js';

/**
 * The Kustomize manifests under deploy/ are built the way an operator builds them
 * (`kustomize build`, or `kubectl kustomize` without it) and the objects are checked against what
 * the product needs (test/deploy/install-checks.ts, the same checks as the Helm chart's), plus
 * what is Kustomize's own: the namespaces the overlays create and the sandbox overlay.
 */

/** Kinds and names, with generated ConfigMaps' hashes replaced by `<hash>`. */
function inventory(objects: K8sObject[]): string[] {
  return objects
    .map(
      (o) =>
        `${o.kind}/${o.kind === 'ConfigMap' ? o.metadata.name.replace(/-[a-z0-9]{10}$/, '-<hash>') : o.metadata.name}`,
    )
    .sort();
}

describe('deploy/base', () => {
  it('builds, and tags the image with the package version', () => {
    const objects = buildKustomize('deploy/base');
    const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
    for (const deployment of deployments(objects)) expect(container(deployment).image).toBe(`${IMAGE}:${version}`);
  });
});

describe('deploy/overlays/production', () => {
  const objects = (): K8sObject[] => buildKustomize('deploy/overlays/production');

  it('holds exactly the objects an operator expects', () => {
    expect(inventory(objects())).toEqual([
      'ConfigMap/escalator-config-<hash>',
      'ConfigMap/escalator-relay-targets-<hash>',
      'Deployment/escalator-web',
      'Deployment/escalator-worker',
      'Namespace/escalator',
      'NetworkPolicy/escalator',
      'NetworkPolicy/escalator-relay-egress',
      'PodDisruptionBudget/escalator-web',
      'PodDisruptionBudget/escalator-worker',
      'Service/escalator-web',
      'Service/escalator-worker',
      'ServiceAccount/escalator',
      'ServiceMonitor/escalator',
    ]);
  });

  it('puts every namespaced object in the escalator namespace, which enforces the restricted Pod Security Standard', () => {
    for (const o of objects()) {
      if (o.kind === 'Namespace') continue;
      expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe('escalator');
    }
    expect(find(objects(), 'Namespace', 'escalator').metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe(
      'restricted',
    );
  });

  checkInstall(objects, { replicas: { web: 3, worker: 3 }, digest: true, relayEgressPorts: [8080, 9292] });
});

describe('deploy/overlays/sandbox', () => {
  const objects = (): K8sObject[] => buildKustomize('deploy/overlays/sandbox');

  it('runs the whole product in one pod with ESCALATOR_ROLE=all', () => {
    const all = deployments(objects());
    expect(all.map((d) => d.metadata.name)).toEqual(['escalator-web']);
    const web = all[0]!;
    expect(web.spec.replicas).toBe(1);
    expect(envValue(container(web), 'ESCALATOR_ROLE')?.value).toBe('all');
    expect(container(web).image).toMatch(new RegExp(`^${IMAGE.replace(/\./g, '\\.')}:`));
    expect(container(web).livenessProbe?.httpGet?.path).toBe('/healthz');
    expect(container(web).readinessProbe?.httpGet?.path).toBe('/readyz');
    // The worker's room for renders comes along.
    expect(container(web).resources?.limits?.memory).toBe('1Gi');
    expect(web.spec.template.spec.volumes?.find((v) => v.name === 'tmp')?.emptyDir?.sizeLimit).toBe('3Gi');
    const loaded = loadEnv(podEnvironment(objects(), web, testSecrets));
    expect(loaded.ok && loaded.env.ESCALATOR_ROLE).toBe('all');
    expect(loaded.ok && loaded.env.LOG_LEVEL).toBe('debug');
  });

  it('gives the one pod, which renders, the worker seccomp profile and namespace isolation', () => {
    const web = deployments(objects())[0]!;
    expect(web.spec.template.spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'Localhost', localhostProfile: WORKER_SECCOMP_PROFILE },
    });
    expect(container(web).securityContext?.capabilities).toEqual({ drop: ['ALL'] });
    const loaded = loadEnv(podEnvironment(objects(), web, testSecrets));
    expect(loaded.ok && loaded.env.ESCALATOR_RENDER_ISOLATION).toBe('namespace');
  });

  it("drops the worker Deployment's Service, and the ServiceMonitor still finds the one pod", () => {
    expect(
      objects()
        .filter((o) => o.kind === 'Service')
        .map((o) => o.metadata.name),
    ).toEqual(['escalator-web']);
    expect(objects().filter((o) => o.kind === 'ServiceMonitor')).toHaveLength(1);
  });

  it('drops the worker budget and keeps one that lets the single pod be drained', () => {
    const pdbs = objects().filter((o) => o.kind === 'PodDisruptionBudget');
    expect(pdbs.map((p) => p.metadata.name)).toEqual(['escalator-web']);
    const pdb = pdbs[0] as K8sObject & { spec: { selector: Selector; maxUnavailable?: number; minAvailable?: number } };
    expect(pdb.spec.maxUnavailable).toBe(1);
    expect(pdb.spec.minAvailable).toBeUndefined();
    expect(selects(pdb.spec.selector, deployments(objects())[0]!.spec.template.metadata.labels)).toBe(true);
  });

  it('lives in its own namespace', () => {
    for (const o of objects())
      if (o.kind !== 'Namespace')
        expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe('escalator-sandbox');
  });

  it('refers only to ConfigMaps it contains', () => {
    expectOwnConfigMaps(objects());
  });
});

describe('deploy/seccomp', () => {
  const objects = (): K8sObject[] => buildKustomize('deploy/seccomp');
  type DaemonSet = K8sObject & {
    spec: {
      template: {
        spec: {
          securityContext?: { runAsUser?: number; seccompProfile?: { type: string } };
          tolerations?: Array<{ operator?: string }>;
          automountServiceAccountToken?: boolean;
          containers: Array<Container & { command?: string[] }>;
          volumes: Array<{ name: string; hostPath?: { path: string; type?: string }; configMap?: { name: string } }>;
        };
      };
    };
  };

  it('holds the profile byte for byte, and a DaemonSet in kube-system that writes it where the workers name it', () => {
    expect(inventory(objects())).toEqual([
      'ConfigMap/escalator-seccomp-profile-<hash>',
      'DaemonSet/escalator-seccomp-profile',
    ]);
    const profile = objects().find((o) => o.kind === 'ConfigMap')!;
    expect(profile.data?.['escalator-worker.json']).toBe(
      readFileSync(join(root, 'deploy/seccomp/escalator-worker.json'), 'utf8'),
    );
    const installer = find<DaemonSet>(objects(), 'DaemonSet', 'escalator-seccomp-profile');
    expect(installer.metadata.namespace).toBe('kube-system');
    const pod = installer.spec.template.spec;
    const host = pod.volumes.find((v) => v.hostPath)!;
    // The kubelet's default seccomp root is /var/lib/kubelet/seccomp; Localhost profiles are relative to it.
    expect(`${host.hostPath?.path}/escalator-worker.json`).toBe(`/var/lib/kubelet/seccomp/${WORKER_SECCOMP_PROFILE}`);
    expect(pod.volumes.find((v) => v.configMap)?.configMap?.name).toBe(profile.metadata.name);
    const c = pod.containers[0]!;
    const mounted = (name: string): string | undefined => c.volumeMounts?.find((m) => m.name === name)?.mountPath;
    const script = c.command?.join(' ') ?? '';
    expect(script).toContain(`cp ${mounted(pod.volumes.find((v) => v.configMap)!.name)}/escalator-worker.json`);
    expect(script).toContain(`${mounted(host.name)}/escalator-worker.json`);
    // Root only for the root-owned folder: nothing else.
    expect(c.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      privileged: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.tolerations).toEqual([{ operator: 'Exists' }]);
    // The release's own image, as deploy/base tags it.
    const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
    expect(c.image).toBe(`${IMAGE}:${version}`);
  });
});
