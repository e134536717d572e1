import { describe, expect, it } from 'vitest';
import {
  changeAlerts,
  deletionLoss,
  diffTarget,
  diffLines,
  normalizeObject,
  pairObjects,
  parseManifests,
  removalAlerts,
  type ManifestObject,
} from '../../src/planners/diff/index.js';

function objects(text: string): ManifestObject[] {
  const parsed = parseManifests(text);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.objects;
}

function one(text: string): ManifestObject {
  return objects(text)[0] as ManifestObject;
}

describe('parseManifests', () => {
  it('identifies objects by group, kind, namespace and name, expands Lists, skips non-objects', () => {
    const parsed = parseManifests(
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a, namespace: n}\n---\n# empty\n---\nfoo: bar\n---\napiVersion: v1\nkind: List\nitems:\n  - {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n',
    );
    expect(parsed.ok && parsed.objects.map((o) => [o.group, o.kind, o.namespace, o.name])).toEqual([
      ['apps', 'Deployment', 'n', 'a'],
      ['', 'ConfigMap', '', 'c'],
    ]);
  });

  it('refuses alias bombs instead of expanding them', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      ...Array.from(
        { length: 8 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
            .fill(`*${String.fromCharCode(97 + i)}`)
            .join(', ')}]`,
      ),
    ].join('\n');
    const parsed = parseManifests(
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  ${bomb.split('\n').join('\n  ')}\n`,
    );
    expect(parsed.ok).toBe(false);
  });

  it('reports parse errors without echoing the source line', () => {
    const parsed = parseManifests('apiVersion: v1\nkind: Secret\nstringData:\n  password: "CANARY-unclosed\n');
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.message).not.toContain('CANARY');
  });
});

describe('normalizeObject', () => {
  it('orders keys stably: apiVersion, kind, metadata first; name first in every mapping', () => {
    const a = normalizeObject(
      one('spec: {z: 1, a: 2, name: web}\nmetadata: {labels: {b: 1}, name: x}\nkind: ConfigMap\napiVersion: v1\n'),
    );
    expect(a.text).toBe(
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels:\n    b: 1\nspec:\n  name: web\n  a: 2\n  z: 1\n',
    );
  });

  it('matches containers, env, ports and volumes by name, so a reorder is no change', () => {
    const base = one(
      'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - {name: b, image: x, env: [{name: Y, value: "1"}, {name: X, value: "2"}]}\n    - {name: a, image: y}\n  volumes: [{name: v2}, {name: v1}]\n',
    );
    const head = one(
      'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - {name: a, image: y}\n    - {name: b, image: x, env: [{name: X, value: "2"}, {name: Y, value: "1"}]}\n  volumes: [{name: v1}, {name: v2}]\n',
    );
    expect(normalizeObject(base).text).toBe(normalizeObject(head).text);
    expect(normalizeObject(head).lines.find((line) => line.text.includes('value: "2"'))?.path).toBe(
      'spec.containers[b].env[X].value',
    );
  });

  it('keeps list order where items have no unique name', () => {
    const text = normalizeObject(
      one(
        'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - {name: a, ports: [{containerPort: 2}, {containerPort: 1}]}\n',
      ),
    ).text;
    expect(text.indexOf('containerPort: 2')).toBeLessThan(text.indexOf('containerPort: 1'));
  });

  it('folds stringData into data and redacts every value, keeping byte counts aside', () => {
    const normalized = normalizeObject(
      one(
        'apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {a: c2VjcmV0, b: b2xk}\nstringData: {b: new-value, c: CANARY-x}\n',
      ),
    );
    expect(normalized.text).toBe(
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  a: (redacted)\n  b: (redacted)\n  c: (redacted)\n',
    );
    expect([...(normalized.secretKeys ?? new Map())].map(([key, value]) => [key, value.bytes])).toEqual([
      ['a', 6],
      ['b', 9],
      ['c', 8],
    ]);
  });

  it('scrubs last-applied-configuration on every kind', () => {
    const text = normalizeObject(
      one(
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: \'{"data":{"password":"CANARY"}}\'\n',
      ),
    ).text;
    expect(text).not.toContain('CANARY');
    expect(text).toContain('(scrubbed)');
  });

  it('shortens long lines and binary data, with a hash so changes stay visible', () => {
    const long = 'x'.repeat(5000);
    const a = normalizeObject(
      one(
        `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {long: "${long}"}\nbinaryData: {blob: AAECAwQ=}\n`,
      ),
    );
    const b = normalizeObject(
      one(
        `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {long: "${long}y"}\nbinaryData: {blob: AAECAwU=}\n`,
      ),
    );
    expect(Math.max(...a.lines.map((line) => line.text.length))).toBeLessThan(260);
    expect(a.text).toContain('blob: (binary, 5 bytes, sha256:');
    expect(diffLines(a.lines, b.lines).hunks.join('\n').match(/^[-+]/gm)).toHaveLength(4);
  });

  it('prints multi-line strings as literal blocks and quotes ambiguous scalars', () => {
    const text = normalizeObject(
      one(
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {script: "a\\nb\\n", flag: "yes", version: "1.10", empty: ""}\n',
      ),
    ).text;
    expect(text).toContain('  script: |\n    a\n    b\n');
    expect(text).toContain('flag: "yes"');
    expect(text).toContain('version: "1.10"');
    expect(text).toContain('empty: ""');
  });
});

describe('diffLines', () => {
  it('names the YAML path of the first changed line in each hunk header', () => {
    const base = normalizeObject(
      one(
        'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers: [{name: web, image: a:1}]\n',
      ),
    );
    const head = normalizeObject(
      one(
        'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers: [{name: web, image: a:2}]\n',
      ),
    );
    const [hunk] = diffLines(base.lines, head.lines).hunks;
    expect(hunk?.split('\n')[0]).toBe('@@ -8,4 +8,4 @@ spec.template.spec.containers[web].image');
  });

  it('writes an empty side as 0,0 and gives whole-object hunks no path', () => {
    const object = normalizeObject(one('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n'));
    expect(diffLines([], object.lines).hunks[0]?.split('\n')[0]).toBe('@@ -0,0 +1,4 @@');
    expect(diffLines(object.lines, []).hunks[0]?.split('\n')[0]).toBe('@@ -1,4 +0,0 @@');
  });
});

describe('pairObjects', () => {
  const text = (object: ManifestObject) => normalizeObject(object).text;

  it('pairs equal identities, then hash-suffix renames, namespace moves, group moves and similar content', () => {
    const base = objects(
      [
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same}\n',
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings-mttkbmmt79}\ndata: {a: "1"}\n',
        'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api, namespace: old}\n',
        'apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: web}\n',
        'apiVersion: v1\nkind: Service\nmetadata: {name: frontend}\nspec: {ports: [{port: 80}, {port: 443}], selector: {app: web, tier: front}, type: ClusterIP}\n',
        'apiVersion: v1\nkind: Service\nmetadata: {name: unrelated}\nspec: {type: ExternalName, externalName: x.example.com}\n',
      ].join('---\n'),
    );
    const head = objects(
      [
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same}\n',
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings-k7979mbk54}\ndata: {a: "2"}\n',
        'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api, namespace: new}\n',
        'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web}\n',
        'apiVersion: v1\nkind: Service\nmetadata: {name: web-frontend}\nspec: {ports: [{port: 80}, {port: 443}], selector: {app: web, tier: front}, type: ClusterIP}\n',
        'apiVersion: v1\nkind: Service\nmetadata: {name: brand-new}\nspec: {type: LoadBalancer, ports: [{port: 9}]}\n',
      ].join('---\n'),
    );
    const pairing = pairObjects(base, head, text);
    expect(pairing.pairs.map((pair) => `${pair.base.name}>${pair.head.name}:${pair.reason ?? '='}`).sort()).toEqual([
      'api>api:namespace',
      'frontend>web-frontend:similarity',
      'same>same:=',
      'settings-mttkbmmt79>settings-k7979mbk54:hash-suffix',
      'web>web:api-group',
    ]);
    expect(pairing.added.map((object) => object.name)).toEqual(['brand-new']);
    expect(pairing.removed.map((object) => object.name)).toEqual(['unrelated']);
  });

  it('never pairs a kind whose deletion loses data or cascades: it stays removed, with its CAUTION', () => {
    // Two small Namespaces sharing one label score 1.0 by similarity; a PVC moved to another namespace pairs by name.
    const base = [
      'apiVersion: v1\nkind: Namespace\nmetadata: {name: payments, labels: {team: payments}}\n',
      'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: payments}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}\n',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: payments}\ndata: {a: "1"}\n',
    ].join('---\n');
    const head = [
      'apiVersion: v1\nkind: Namespace\nmetadata: {name: payments-v2, labels: {team: payments}}\n',
      'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: payments-v2}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}\n',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: payments-v2}\ndata: {a: "1"}\n',
    ].join('---\n');
    const guarded = pairObjects(objects(base), objects(head), text, {
      neverRename: (object) => deletionLoss(object) !== undefined,
    });
    expect(guarded.pairs.map((pair) => `${pair.base.kind}:${pair.reason}`)).toEqual(['ConfigMap:namespace']);
    expect(guarded.removed.map((object) => object.kind).sort()).toEqual(['Namespace', 'PersistentVolumeClaim']);
    // Without the guard, both would have been "renamed" (the laundering this prevents).
    expect(pairObjects(objects(base), objects(head), text).pairs).toHaveLength(3);

    const diff = diffTarget(
      { id: 'apps/payments', kind: 'plain', dir: 'apps/payments' },
      { status: 'ok', yaml: base },
      { status: 'ok', yaml: head },
    );
    expect(diff.counts).toMatchObject({ added: 2, removed: 2, recreated: 1, renamed: 0 });
    expect(diff.alerts.filter((alert) => alert.level === 'caution').map((alert) => alert.object?.kind)).toEqual([
      'Namespace',
      'PersistentVolumeClaim',
    ]);
  });

  it('does not take a name that merely ends like a hash for a rename of another stem', () => {
    const base = objects('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: alpha-mttkbmmt79}\ndata: {x: "1"}\n');
    const head = objects(
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: beta-k7979mbk54}\ndata: {y: "totally different"}\n',
    );
    expect(pairObjects(base, head, text).pairs).toEqual([]);
  });
});

describe('risk alerts', () => {
  const deployment = (selector: string) =>
    one(
      `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {app: ${selector}}}\n`,
    );

  it('flags a changed Deployment selector as immutable', () => {
    expect(changeAlerts('t', deployment('a'), deployment('b')).map((alert) => [alert.level, alert.field])).toEqual([
      ['caution', 'spec.selector'],
    ]);
    expect(changeAlerts('t', deployment('a'), deployment('a'))).toEqual([]);
  });

  it('flags Service clusterIP, PVC storageClassName and RoleBinding roleRef changes', () => {
    const service = (ip: string) =>
      one(`apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {clusterIP: ${ip}}\n`);
    const pvc = (cls: string) =>
      one(`apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: p}\nspec: {storageClassName: ${cls}}\n`);
    const binding = (role: string) =>
      one(
        `apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: b}\nroleRef: {kind: Role, name: ${role}}\n`,
      );
    expect(changeAlerts('t', service('10.0.0.1'), service('10.0.0.2'))[0]?.field).toBe('spec.clusterIP');
    expect(changeAlerts('t', pvc('fast'), pvc('slow'))[0]?.field).toBe('spec.storageClassName');
    expect(changeAlerts('t', binding('a'), binding('b'))[0]?.field).toBe('roleRef');
  });

  it('flags data changes of immutable ConfigMaps', () => {
    const cm = (value: string) =>
      one(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nimmutable: true\ndata: {a: "${value}"}\n`);
    expect(changeAlerts('t', cm('1'), cm('2'))[0]?.field).toBe('data');
  });

  it('warns on deletions, with a caution for kinds whose deletion cascades', () => {
    expect(removalAlerts('t', one('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n'))[0]?.level).toBe('warning');
    expect(
      removalAlerts(
        't',
        one('apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x.example.com}\n'),
      )[0]?.level,
    ).toBe('caution');
    expect(removalAlerts('t', one('apiVersion: v1\nkind: Namespace\nmetadata: {name: n}\n'))[0]?.detail).toContain(
      'everything in it',
    );
  });

  it('knows what GitOps agents delete with an object: pruning Flux Kustomizations, HelmReleases, Argo CD Applications with the resources finalizer', () => {
    const flux = (prune: boolean) =>
      one(
        `apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec: {prune: ${prune}, path: ./apps}\n`,
      );
    expect(deletionLoss(flux(true))).toContain('prune');
    expect(deletionLoss(flux(false))).toBeUndefined();
    expect(
      deletionLoss(one('apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: podinfo}\n')),
    ).toContain('uninstalls');
    const app = (finalizers: string) =>
      one(
        `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: guestbook, finalizers: ${finalizers}}\n`,
      );
    expect(deletionLoss(app('[resources-finalizer.argocd.argoproj.io]'))).toContain('every object');
    expect(deletionLoss(app('[resources-finalizer.argocd.argoproj.io/background]'))).toContain('every object');
    expect(deletionLoss(app('[]'))).toBeUndefined();
  });

  it('keeps the CAUTION of a deleted PersistentVolumeClaim even when it is paired', () => {
    const a = one('apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: a}\n');
    const b = one('apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: b}\n');
    expect(changeAlerts('t', a, b, 'namespace').map((alert) => [alert.level, alert.kind])).toEqual([
      ['caution', 'deletion'],
      ['warning', 'recreate'],
    ]);
  });

  it('warns that namespace moves and similarity renames recreate the object, but not hash renames', () => {
    const a = one('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: a}\n');
    const b = one('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: b}\n');
    expect(changeAlerts('t', a, b, 'namespace')[0]?.kind).toBe('recreate');
    expect(changeAlerts('t', a, b, 'hash-suffix')).toEqual([]);
  });
});
