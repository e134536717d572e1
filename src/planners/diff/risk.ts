import { isDeepStrictEqual } from 'node:util';
import type { ManifestObject } from './manifest.js';
import type { Alert, ObjectRef, RenameReason } from './types.js';

/**
 * Fields the API server refuses to change once an object exists: applying such a change fails
 * (or, with `--force`, deletes and recreates the object). Keyed by `group/Kind`.
 */
const immutableFields: Record<string, string[]> = {
  'apps/Deployment': ['spec.selector'],
  'apps/ReplicaSet': ['spec.selector'],
  'apps/DaemonSet': ['spec.selector'],
  'apps/StatefulSet': ['spec.selector', 'spec.serviceName', 'spec.volumeClaimTemplates', 'spec.podManagementPolicy'],
  'batch/Job': ['spec.selector', 'spec.template', 'spec.completionMode'],
  '/Service': ['spec.clusterIP', 'spec.clusterIPs'],
  '/PersistentVolumeClaim': [
    'spec.storageClassName',
    'spec.accessModes',
    'spec.volumeName',
    'spec.selector',
    'spec.volumeMode',
  ],
  '/PersistentVolume': ['spec.volumeMode'],
  'storage.k8s.io/StorageClass': ['provisioner', 'parameters', 'reclaimPolicy', 'volumeBindingMode'],
  'rbac.authorization.k8s.io/RoleBinding': ['roleRef'],
  'rbac.authorization.k8s.io/ClusterRoleBinding': ['roleRef'],
};

/** Kinds whose deletion takes more with it. */
const cascading: Record<string, string> = {
  'apiextensions.k8s.io/CustomResourceDefinition':
    'deleting a CustomResourceDefinition deletes every object of that type in the cluster',
  '/Namespace': 'deleting a Namespace deletes everything in it',
  '/PersistentVolumeClaim': 'deleting a PersistentVolumeClaim can delete its volume and data',
  '/PersistentVolume': 'deleting a PersistentVolume can delete its data',
  // https://fluxcd.io/flux/components/helm/helmreleases/ — the controller uninstalls the release of a deleted HelmRelease.
  'helm.toolkit.fluxcd.io/HelmRelease':
    'deleting a Flux HelmRelease uninstalls its Helm release and every object of it',
};

const ARGO_CASCADE_FINALIZER = /^resources-finalizer\.argocd\.argoproj\.io(\/(background|foreground))?$/;

/**
 * Why deleting this object takes more with it (data, every object in it or of its type, what a
 * GitOps agent applied), or nothing. Such an object keeps its CAUTION whatever it is paired with,
 * and is never paired as a rename (src/planners/diff/pairing.ts).
 */
export function deletionLoss(object: ManifestObject): string | undefined {
  const known = cascading[`${object.group}/${object.kind}`];
  if (known) return known;
  // https://fluxcd.io/flux/cmd/flux_delete_kustomization/ — deleting a Kustomization deletes what it applied when prune is enabled.
  if (object.group === 'kustomize.toolkit.fluxcd.io' && object.kind === 'Kustomization')
    return getPath(object.body, 'spec.prune') === true
      ? 'deleting a Flux Kustomization with prune enabled deletes every object it applied'
      : undefined;
  // https://argo-cd.readthedocs.io/en/stable/user-guide/app_deletion/ — the resources finalizer makes a deletion cascade.
  if (object.group === 'argoproj.io' && object.kind === 'Application') {
    const finalizers = getPath(object.body, 'metadata.finalizers');
    if (
      Array.isArray(finalizers) &&
      finalizers.some((item) => typeof item === 'string' && ARGO_CASCADE_FINALIZER.test(item))
    )
      return 'deleting an Argo CD Application with the resources finalizer deletes every object of the application';
  }
  return undefined;
}

/** Read a dotted path (`spec.selector`) from an object body. */
export function getPath(body: unknown, path: string): unknown {
  let value: unknown = body;
  for (const key of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function refOf(object: ManifestObject): ObjectRef {
  return { group: object.group, kind: object.kind, namespace: object.namespace, name: object.name };
}

/** Alerts for an object that is gone at head. */
export function removalAlerts(target: string, object: ManifestObject): Alert[] {
  const cascade = deletionLoss(object);
  return [
    {
      level: cascade ? 'caution' : 'warning',
      kind: 'deletion',
      target,
      object: refOf(object),
      detail: cascade ? `deleted: ${cascade}` : 'deleted from the cluster when this merges',
    },
  ];
}

/** Alerts for a pair: immutable fields that change, and renames that delete and recreate. */
export function changeAlerts(
  target: string,
  base: ManifestObject,
  head: ManifestObject,
  reason?: RenameReason,
): Alert[] {
  const alerts: Alert[] = [];
  // Pairing never renames such an object; should it be paired anyway, the old one is still deleted.
  const loss = reason && reason !== 'api-group' ? deletionLoss(base) : undefined;
  if (loss)
    alerts.push({
      level: 'caution',
      kind: 'deletion',
      target,
      object: refOf(base),
      detail: `deleted: ${loss}`,
    });
  if (reason === 'namespace' || reason === 'similarity') {
    const what =
      reason === 'namespace'
        ? `moved from namespace ${base.namespace || '(none)'} to ${head.namespace || '(none)'}`
        : `renamed from ${base.name}`;
    alerts.push({
      level: 'warning',
      kind: 'recreate',
      target,
      object: refOf(head),
      detail: `${what}: the old object is deleted and a new one created`,
    });
    return alerts;
  }
  if (reason === 'hash-suffix') return alerts;
  for (const field of immutableFields[`${head.group}/${head.kind}`] ?? []) {
    const before = getPath(base.body, field);
    const after = getPath(head.body, field);
    if (isDeepStrictEqual(before, after)) continue;
    // A Service without clusterIP at head keeps the one the cluster assigned: not a change.
    if (field.startsWith('spec.clusterIP') && (after === undefined || before === undefined)) continue;
    alerts.push({
      level: 'caution',
      kind: 'immutable-field',
      target,
      object: refOf(head),
      field,
      detail: 'is immutable: applying fails unless the object is deleted and recreated',
    });
  }
  if (
    (head.kind === 'ConfigMap' || head.kind === 'Secret') &&
    head.group === '' &&
    getPath(base.body, 'immutable') === true
  ) {
    const keys = ['data', 'binaryData', 'stringData'];
    if (keys.some((key) => !isDeepStrictEqual(getPath(base.body, key), getPath(head.body, key)))) {
      alerts.push({
        level: 'caution',
        kind: 'immutable-field',
        target,
        object: refOf(head),
        field: 'data',
        detail: 'changes the data of an object marked immutable: applying fails',
      });
    }
  }
  return alerts;
}
