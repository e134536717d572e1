/**
 * Which item of a list is which, as kustomize and Kubernetes tell them apart: strategic merge
 * patch's merge keys (`name` for containers, env, volumes; `containerPort` for container ports,
 * `mountPath` for volume mounts, `ip` for host aliases — see the `patchMergeKey` tags of
 * k8s.io/api core/v1 types.go), `key` for tolerations and ConfigMap/Secret items, kustomize's
 * `patches:` by their `path` or `target`, generators' `literals`/`files` by the key they define,
 * and the file lists of a kustomization (`resources:`, `components:`, …) by value. A list the
 * rules do not cover, or whose items lack the key, has no identity: a change to it is refused.
 *
 * Identities are read from data (a list item's value), so X's and Y's lists are matched by what
 * they mean, not how they are written.
 */

/** One item's identity: `id` compares, `label` is how a path shows it (`name=app`). */
export interface Identity {
  id: string;
  label: string;
}

/** How the items of one list are told apart. */
export interface ListRule {
  /** What a refusal says the list is identified by. */
  describe: string;
  identify(item: unknown): Identity | undefined;
}

/** Lists of file names and plain strings whose items are their own identity (kustomization fields). */
const BY_VALUE = new Set([
  'resources',
  'components',
  'bases',
  'crds',
  'configurations',
  'patchesStrategicMerge',
  'generators',
  'transformers',
  'validators',
  'envs',
  'finalizers',
]);

/** A field (or `a.b` path) that must be present, or, with `?`, is read with a default. */
interface Field {
  path: string[];
  optional?: string;
}

function field(spec: string): Field {
  const [name, fallback] = spec.split('?');
  const result: Field = { path: (name as string).split('.') };
  if (fallback !== undefined) result.optional = fallback;
  return result;
}

/** Per list key, the field sets that identify an item, tried in order for each item. */
const BY_FIELDS: Record<string, Field[][]> = {
  // A container's ports merge on containerPort (+ protocol, TCP by default); a Service's on port.
  ports: [[field('containerPort'), field('protocol?TCP')], [field('port'), field('protocol?TCP')], [field('name')]],
  volumeMounts: [[field('mountPath')]],
  volumeDevices: [[field('devicePath')]],
  tolerations: [[field('key')]],
  hostAliases: [[field('ip')]],
  items: [[field('key')]],
  patches: [[field('path')], [field('target')]],
  patchesJson6902: [[field('path')], [field('target')]],
  envFrom: [[field('configMapRef.name')], [field('secretRef.name')]],
};

const DEFAULT_FIELDS: Field[][] = [[field('name')]];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A stable text of any value: keys sorted, so `target:` maps written in another order match. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function read(item: Record<string, unknown>, path: readonly string[]): unknown {
  let current: unknown = item;
  for (const part of path) {
    if (!isRecord(current) || !Object.prototype.hasOwnProperty.call(current, part)) return undefined;
    current = current[part];
  }
  return current;
}

function labelOf(value: unknown): string {
  return typeof value === 'string' ? value : canonical(value);
}

function byFields(sets: Field[][]): ListRule {
  const names = sets.map((set) => set.map((one) => one.path.join('.')).join(' + ')).join(' or ');
  return {
    describe: names,
    identify(item) {
      if (!isRecord(item)) return undefined;
      for (const set of sets) {
        const ids: string[] = [];
        const labels: string[] = [];
        let complete = true;
        for (const one of set) {
          const name = one.path.join('.');
          const value = read(item, one.path);
          if (value === undefined || value === null) {
            if (one.optional === undefined) {
              complete = false;
              break;
            }
            ids.push(`${name}=${one.optional}`);
            continue;
          }
          ids.push(`${name}=${canonical(value)}`);
          labels.push(`${name}=${labelOf(value)}`);
        }
        if (complete) return { id: ids.join(','), label: labels.join(',') };
      }
      return undefined;
    },
  };
}

const VALUE_RULE: ListRule = {
  describe: 'value',
  identify(item) {
    if (isRecord(item) || Array.isArray(item)) return undefined;
    return { id: canonical(item), label: labelOf(item) };
  },
};

/** `KEY=value` literals and `[key=]path` files of a generator: the key they define (kustomize's own rule). */
function definedKey(kind: 'literals' | 'files'): ListRule {
  return {
    describe: kind === 'literals' ? 'the key before =' : 'the key before = (or the file name)',
    identify(item) {
      if (typeof item !== 'string') return undefined;
      const equals = item.indexOf('=');
      if (equals > 0) return { id: item.slice(0, equals), label: item.slice(0, equals) };
      if (kind === 'literals') return undefined;
      const name = item.slice(item.lastIndexOf('/') + 1);
      return name === '' ? undefined : { id: name, label: name };
    },
  };
}

/** The rule for the list under `key` (undefined: the list is not under a map key). */
export function listRule(key: string | undefined, items: readonly unknown[]): ListRule | undefined {
  if (key === 'literals' || key === 'files') return definedKey(key);
  const scalars = items.every((item) => !isRecord(item) && !Array.isArray(item));
  if (scalars && items.length > 0) return key !== undefined && BY_VALUE.has(key) ? VALUE_RULE : undefined;
  if (items.length === 0 && key !== undefined && BY_VALUE.has(key)) return VALUE_RULE;
  return byFields((key !== undefined ? BY_FIELDS[key] : undefined) ?? DEFAULT_FIELDS);
}

/** Each item's identity, or the first item that has none or shares one (by index). */
export function identifyAll(
  rule: ListRule,
  items: readonly unknown[],
): { ids: Identity[] } | { problem: 'missing' | 'duplicate'; index: number; label?: string } {
  const ids: Identity[] = [];
  const seen = new Set<string>();
  for (const [index, item] of items.entries()) {
    const identity = rule.identify(item);
    if (!identity) return { problem: 'missing', index };
    if (seen.has(identity.id)) return { problem: 'duplicate', index, label: identity.label };
    seen.add(identity.id);
    ids.push(identity);
  }
  return { ids };
}

/** A document's identity in a multi-document file: apiVersion, kind, namespace, name. */
export function documentIdentity(data: unknown): Identity | undefined {
  if (!isRecord(data)) return undefined;
  const kind = data.kind;
  const metadata = data.metadata;
  const name = isRecord(metadata) ? metadata.name : undefined;
  if (typeof kind !== 'string' || typeof name !== 'string') return undefined;
  const namespace = isRecord(metadata) && typeof metadata.namespace === 'string' ? metadata.namespace : '';
  const apiVersion = typeof data.apiVersion === 'string' ? data.apiVersion : '';
  return {
    id: `${apiVersion}|${kind}|${namespace}|${name}`,
    label: `${kind}/${namespace === '' ? '' : `${namespace}/`}${name}`,
  };
}
