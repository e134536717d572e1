import { isDeepStrictEqual } from 'node:util';
import type { ManifestObject } from './manifest.js';
import { getPath } from './risk.js';
import type { ImageChange } from './types.js';
import { objectValuesImages } from './values.js';

/** Where the pod template sits in each workload kind. */
function templatePath(object: ManifestObject): string | undefined {
  if (object.group === '' && object.kind === 'Pod') return '';
  if (object.kind === 'CronJob') return 'spec.jobTemplate.spec.template';
  return getPath(object.body, 'spec.template.spec') !== undefined ? 'spec.template' : undefined;
}

function podSpec(object: ManifestObject): Record<string, unknown> | undefined {
  const path = templatePath(object);
  if (path === undefined) return undefined;
  const spec = getPath(object.body, path === '' ? 'spec' : `${path}.spec`);
  return typeof spec === 'object' && spec !== null && !Array.isArray(spec)
    ? (spec as Record<string, unknown>)
    : undefined;
}

/** `container name → image` for containers and init containers (init ones prefixed `init:`). */
export function containerImages(object: ManifestObject): Map<string, string> {
  const result = new Map<string, string>();
  const spec = podSpec(object);
  if (!spec) return result;
  for (const [field, prefix] of [
    ['initContainers', 'init:'],
    ['containers', ''],
  ] as const) {
    const list = spec[field];
    if (!Array.isArray(list)) continue;
    for (const container of list) {
      if (typeof container !== 'object' || container === null) continue;
      const { name, image } = container as Record<string, unknown>;
      if (typeof name === 'string' && typeof image === 'string') result.set(`${prefix}${name}`, image);
    }
  }
  return result;
}

/** Images that differ between two versions of one workload, by container. */
export function imageChanges(target: string, base: ManifestObject, head: ManifestObject): ImageChange[] {
  // Containers of a workload; for a HelmRelease or an Application, the images its Helm values set, by values path.
  const before = new Map([...containerImages(base), ...objectValuesImages(base)]);
  const after = new Map([...containerImages(head), ...objectValuesImages(head)]);
  const names = [...new Set([...before.keys(), ...after.keys()])].sort();
  const object = { group: head.group, kind: head.kind, namespace: head.namespace, name: head.name };
  const changes: ImageChange[] = [];
  for (const container of names) {
    const from = before.get(container);
    const to = after.get(container);
    if (from === to) continue;
    changes.push({
      target,
      object,
      container,
      ...(from !== undefined ? { from } : {}),
      ...(to !== undefined ? { to } : {}),
    });
  }
  return changes;
}

/** Does applying head start a rollout (the pod template of a workload changed)? */
export function rollsOut(base: ManifestObject, head: ManifestObject): boolean {
  const path = templatePath(head);
  if (path === undefined || path === '' || templatePath(base) !== path) return false;
  return !isDeepStrictEqual(getPath(base.body, path), getPath(head.body, path));
}
