import { createHash } from 'node:crypto';
import { parse } from 'yaml';
import { normalizeValue } from './normalize.js';
import { diffLines } from './object-diff.js';
import { maskUrlCredentials, SECRET_KEY_NAME } from './mask.js';
import type { ImageChange, ObjectChange, SecretKeyChange } from './types.js';

/**
 * When Helm is not installed, a chart cannot be rendered; reviewers still get a structural diff of
 * the values files the target uses (normalized like objects, credentials-looking keys redacted).
 */

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

interface RedactedValues {
  value: unknown;
  secrets: Map<string, { bytes: number; digest: string }>;
}

function redact(value: unknown, path: string, underSecret: boolean, secrets: RedactedValues['secrets']): unknown {
  if (Array.isArray(value)) return value.map((item, index) => redact(item, `${path}[${index}]`, underSecret, secrets));
  if (isRecord(value)) {
    const result: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value))
      result[key] = redact(child, path ? `${path}.${key}` : key, underSecret || SECRET_KEY_NAME.test(key), secrets);
    return result;
  }
  if (typeof value === 'string' && !underSecret) return maskUrlCredentials(value, path, secrets);
  if (!underSecret || value === null || value === undefined || typeof value === 'boolean') return value;
  const text = String(value);
  secrets.set(path, {
    bytes: Buffer.byteLength(text, 'utf8'),
    digest: createHash('sha256').update(text).digest('hex'),
  });
  return '(redacted)';
}

function parseValues(text: string): { ok: true; value: RedactedValues } | { ok: false; message: string } {
  try {
    const secrets = new Map<string, { bytes: number; digest: string }>();
    const value = redact(parse(text, { maxAliasCount: 100, prettyErrors: false }) ?? {}, '', false, secrets);
    return { ok: true, value: { value, secrets } };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}

/** Per-key changes between two secret maps. */
export function compareSecretKeys(
  base: Map<string, { bytes: number; digest: string }> | undefined,
  head: Map<string, { bytes: number; digest: string }> | undefined,
): SecretKeyChange[] {
  const keys = [...new Set([...(base?.keys() ?? []), ...(head?.keys() ?? [])])].sort();
  const changes: SecretKeyChange[] = [];
  for (const key of keys) {
    const before = base?.get(key);
    const after = head?.get(key);
    if (before && after) {
      if (before.digest !== after.digest)
        changes.push({ key, change: 'changed', fromBytes: before.bytes, toBytes: after.bytes });
    } else if (after) changes.push({ key, change: 'added', toBytes: after.bytes });
    else if (before) changes.push({ key, change: 'removed', fromBytes: before.bytes });
  }
  return changes;
}

/**
 * One pseudo-object per values file (kind `ValuesFile`, name = path) that differs between base and
 * head. Files that fail to parse are reported as a change with a note in the hunk.
 */
export function diffValuesFiles(
  base: Array<{ path: string; text: string }>,
  head: Array<{ path: string; text: string }>,
): ObjectChange[] {
  const paths = [...new Set([...base.map((file) => file.path), ...head.map((file) => file.path)])].sort();
  const changes: ObjectChange[] = [];
  for (const path of paths) {
    const before = base.find((file) => file.path === path);
    const after = head.find((file) => file.path === path);
    const parsedBefore = before ? parseValues(before.text) : undefined;
    const parsedAfter = after ? parseValues(after.text) : undefined;
    const lines = (parsed: typeof parsedBefore): ReturnType<typeof normalizeValue>['lines'] => {
      if (!parsed) return [];
      if (!parsed.ok) return [{ text: `# does not parse as YAML: ${parsed.message.split('\n')[0] ?? ''}`, path: '' }];
      return normalizeValue(parsed.value.value).lines;
    };
    const diff = diffLines(lines(parsedBefore), lines(parsedAfter));
    const secretKeys = compareSecretKeys(
      parsedBefore?.ok ? parsedBefore.value.secrets : undefined,
      parsedAfter?.ok ? parsedAfter.value.secrets : undefined,
    );
    if (diff.hunks.length === 0 && !diff.tooLarge && secretKeys.length === 0) continue;
    changes.push({
      group: '',
      kind: 'ValuesFile',
      namespace: '',
      name: path,
      apiVersion: '',
      change: !before ? 'added' : !after ? 'removed' : 'changed',
      ...diff,
      ...(secretKeys.length > 0 ? { secretKeys } : {}),
    });
  }
  return changes;
}

function parseLoose(text: string): unknown {
  try {
    return parse(text, { maxAliasCount: 100, prettyErrors: false });
  } catch {
    return undefined;
  }
}

/** Helm's coalescing of values files: mappings merge key by key, anything else is replaced. */
function mergeValues(into: unknown, over: unknown): unknown {
  if (!isRecord(into) || !isRecord(over)) return over === undefined ? into : over;
  const merged: Record<string, unknown> = { ...into };
  for (const [key, value] of Object.entries(over)) merged[key] = mergeValues(into[key], value);
  return merged;
}

/** Images values set the Helm way: a mapping with `repository` and `tag` or `digest` (and maybe `registry`), by key path. */
export function valuesImages(value: unknown): Map<string, string> {
  const images = new Map<string, string>();
  const scalar = (item: unknown): string | undefined =>
    typeof item === 'string' || typeof item === 'number' ? String(item) : undefined;
  const walk = (node: unknown, path: string): void => {
    if (Array.isArray(node)) node.forEach((item, index) => walk(item, `${path}[${index}]`));
    if (!isRecord(node)) return;
    const repository = scalar(node.repository);
    const tag = scalar(node.tag);
    const digest = scalar(node.digest);
    if (repository && (tag || digest)) {
      const registry = scalar(node.registry);
      images.set(
        path || '(top)',
        `${registry ? `${registry}/` : ''}${repository}${tag ? `:${tag}` : ''}${digest ? `@${digest}` : ''}`,
      );
    }
    for (const [key, child] of Object.entries(node)) walk(child, path ? `${path}.${key}` : key);
  };
  walk(value, '');
  return images;
}

/**
 * Images a chart's values files change (the chart was not rendered): a row of the image table each.
 * As helm applies them: the chart's `values.yaml` first, a variant's file over it.
 */
export function valuesImageChanges(
  target: string,
  base: Array<{ path: string; text: string }>,
  head: Array<{ path: string; text: string }>,
  options: { inOrder?: boolean } = {},
): ImageChange[] {
  const isDefaults = (path: string): boolean => /(^|\/)values\.ya?ml$/.test(path);
  /**
   * The values helm would use (the chart's values.yaml first, a variant's file over it; or, with
   * `inOrder`, the files as given: a release's values in the order its agent passes them), and
   * the last file of each image.
   */
  const effective = (files: Array<{ path: string; text: string }>): Map<string, { ref: string; path: string }> => {
    const ordered = options.inOrder
      ? files
      : [...files].sort((a, b) => Number(!isDefaults(a.path)) - Number(!isDefaults(b.path)));
    let merged: unknown = {};
    const images = new Map<string, { ref: string; path: string }>();
    for (const file of ordered) {
      merged = mergeValues(merged, parseLoose(file.text) ?? {});
      for (const [key, ref] of valuesImages(merged))
        if (images.get(key)?.ref !== ref) images.set(key, { ref, path: file.path });
    }
    return images;
  };
  const before = effective(base);
  const after = effective(head);
  const changes: ImageChange[] = [];
  for (const key of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const from = before.get(key);
    const to = after.get(key);
    if (from?.ref === to?.ref) continue;
    changes.push({
      target,
      object: { group: '', kind: 'ValuesFile', namespace: '', name: (to ?? from)?.path ?? '' },
      container: key,
      ...(from ? { from: from.ref } : {}),
      ...(to ? { to: to.ref } : {}),
    });
  }
  return changes;
}

/**
 * Images the Helm values held in a GitOps object set, by where they are (`spec.values.redis`):
 * a Flux HelmRelease's `spec.values` (helm-controller api/v2), an Argo CD Application's
 * `helm.valuesObject` and `helm.values` of `spec.source` and each `spec.sources[]`
 * (argo-cd pkg/apis/application/v1alpha1 ApplicationSourceHelm). Where the chart is not rendered
 * (or the object is a kustomize patch's result), this is the only place a bump in them shows.
 */
export function objectValuesImages(object: { group: string; kind: string; body: unknown }): Map<string, string> {
  const images = new Map<string, string>();
  const body = isRecord(object.body) ? object.body : {};
  const spec = isRecord(body.spec) ? body.spec : {};
  const add = (prefix: string, values: unknown): void => {
    for (const [path, ref] of valuesImages(values)) images.set(path === '(top)' ? prefix : `${prefix}.${path}`, ref);
  };
  if (object.group === 'helm.toolkit.fluxcd.io' && object.kind === 'HelmRelease') add('spec.values', spec.values);
  if (object.group === 'argoproj.io' && object.kind === 'Application') {
    const sources: Array<[string, unknown]> = [['spec.source', spec.source]];
    if (Array.isArray(spec.sources))
      spec.sources.forEach((source, index) => sources.push([`spec.sources[${index}]`, source]));
    for (const [at, source] of sources) {
      const helm = isRecord(source) && isRecord(source.helm) ? source.helm : undefined;
      if (!helm) continue;
      if (isRecord(helm.valuesObject)) add(`${at}.helm.valuesObject`, helm.valuesObject);
      else if (typeof helm.values === 'string') add(`${at}.helm.values`, parseLoose(helm.values));
    }
  }
  return images;
}
