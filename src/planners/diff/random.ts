import { describeRef, identityKey, type ManifestObject } from './manifest.js';
import type { RandomObject } from './types.js';

/**
 * Objects whose names or values come from template randomness (`randAlphaNum`, `uuidv4`,
 * `genCA`, `htpasswd`…; issue 36): helm renders them differently every time, so comparing them
 * between base and head would show a change — or a deletion and a recreation — on every pull
 * request, and two runs on the same commits would differ.
 *
 * The adapter renders such a chart twice with the same inputs; what differs between the two
 * renders is random:
 * - an object whose identity differs (its name is random) is left out of the comparison and
 *   named once by its kind and the template it comes from (helm's `# Source:` line), never by its
 *   name, which would differ on the next run;
 * - a Helm test hook (`helm.sh/hook: test`, `test-success`, `test-failure`) that differs in any
 *   way is left out whole: `helm test` runs it (Flux with `spec.test.enable`), an install or an
 *   upgrade does not, and Argo CD never does (argo-cd docs/user-guide/helm.md, "Helm Hooks":
 *   `test-success`/`test-failure` "Not supported. No equivalent in Argo CD"); its randomness is
 *   usually its name (podinfo's test Pods);
 * - in any other object, the fields that differ are replaced by {@link RANDOM_VALUE} on this side,
 *   so the rest of the object is still compared and a field that turns random shows as such.
 */
export const RANDOM_VALUE = '(random on every render)';

const TEST_HOOKS = new Set(['test', 'test-success', 'test-failure']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Is this object a Helm test hook (`helm.sh/hook` lists `test`, or the Helm 2 `test-success`/`test-failure`)? */
export function isTestHook(object: ManifestObject): boolean {
  const metadata = isRecord(object.body.metadata) ? object.body.metadata : {};
  const annotations = isRecord(metadata.annotations) ? metadata.annotations : {};
  const hook = annotations['helm.sh/hook'];
  return typeof hook === 'string' && hook.split(',').some((entry) => TEST_HOOKS.has(entry.trim()));
}

function escapePathKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
}

/** The paths (`data.password`, `spec.containers[0].env[1].value`) where two values differ, and nothing below them. */
function differingPaths(a: unknown, b: unknown, path: string, into: string[]): void {
  if (isRecord(a) && isRecord(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const key of keys) {
      const child = path === '' ? escapePathKey(key) : `${path}.${escapePathKey(key)}`;
      if (!(key in a) || !(key in b)) into.push(child);
      else differingPaths(a[key], b[key], child, into);
    }
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    a.forEach((item, index) => differingPaths(item, b[index], `${path}[${index}]`, into));
    return;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) into.push(path);
}

/** A copy of `body` with the value at each path replaced by {@link RANDOM_VALUE}. */
function maskPaths(body: Record<string, unknown>, other: Record<string, unknown>): Record<string, unknown> {
  const mask = (a: unknown, b: unknown): unknown => {
    if (isRecord(a) && isRecord(b)) {
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(a)) out[key] = key in b ? mask(a[key], b[key]) : RANDOM_VALUE;
      return out;
    }
    if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) return a.map((item, i) => mask(item, b[i]));
    return JSON.stringify(a) === JSON.stringify(b) ? a : RANDOM_VALUE;
  };
  return mask(body, other) as Record<string, unknown>;
}

function where(object: ManifestObject): string {
  return object.source ?? 'the chart';
}

function compareRandom(a: RandomObject, b: RandomObject): number {
  const left = `${a.source}\u0000${a.kind}\u0000${a.name ?? ''}`;
  const right = `${b.source}\u0000${b.kind}\u0000${b.name ?? ''}`;
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * Compare two renders of the same inputs: the objects of the first with what is random taken out
 * (objects left out, fields masked), and what was found random. Deterministic: it depends only on
 * which objects and fields differ, never on the random values themselves.
 */
export function settleRandomness(
  first: ManifestObject[],
  second: ManifestObject[],
): { objects: ManifestObject[]; random: RandomObject[] } {
  const again = new Map(second.map((object) => [identityKey(object), object]));
  const objects: ManifestObject[] = [];
  const named = new Map<string, RandomObject>();
  const random: RandomObject[] = [];
  for (const object of first) {
    const twin = again.get(identityKey(object));
    if (twin && JSON.stringify(twin.body) === JSON.stringify(object.body)) {
      objects.push(object);
      continue;
    }
    const hook = isTestHook(object);
    if (!twin || hook) {
      // Left out whole. Named by kind and template: a random name would differ on the next run.
      const key = `${object.group}/${object.kind}/${object.namespace}\u0000${where(object)}\u0000${twin ? object.name : ''}`;
      const known = named.get(key);
      if (known) known.count++;
      else
        named.set(key, {
          group: object.group,
          kind: object.kind,
          namespace: object.namespace,
          source: where(object),
          ...(twin ? { name: object.name } : {}),
          count: 1,
          what: twin ? 'values' : 'name',
          testHook: hook,
        });
      continue;
    }
    const paths: string[] = [];
    differingPaths(object.body, twin.body, '', paths);
    objects.push({ ...object, body: maskPaths(object.body, twin.body) });
    random.push({
      group: object.group,
      kind: object.kind,
      namespace: object.namespace,
      source: where(object),
      name: object.name,
      count: 1,
      what: 'values',
      testHook: false,
      fields: paths,
    });
  }
  return { objects, random: [...named.values(), ...random].sort(compareRandom) };
}

/** One sentence per random object, for the target's notes. */
export function describeRandom(entry: RandomObject): string {
  const kind = entry.count > 1 ? `${entry.count} ${entry.kind} objects` : entry.kind;
  const hook = entry.testHook ? ' (a Helm test hook: `helm test` runs it, installs and upgrades do not)' : '';
  const from = `from ${entry.source}`;
  if (entry.what === 'name')
    return `${kind}${hook} ${from}${entry.namespace ? ` in ${entry.namespace}` : ''}: a new name on every render, left out of the comparison.`;
  const ref = describeRef({ ...entry, name: entry.name ?? '' });
  if (entry.fields === undefined)
    return `${ref}${hook} ${from}: different on every render, left out of the comparison.`;
  const fields = entry.fields.slice(0, 5).join(', ');
  const more = entry.fields.length > 5 ? ` and ${entry.fields.length - 5} more` : '';
  return `${ref} ${from}: ${fields}${more} ${entry.fields.length === 1 ? 'is' : 'are'} random on every render, compared as "${RANDOM_VALUE}".`;
}
