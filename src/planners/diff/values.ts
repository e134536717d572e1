import { createHash } from 'node:crypto';
import { parse } from 'yaml';
import { normalizeValue } from './normalize.js';
import { diffLines } from './object-diff.js';
import { maskUrlCredentials, SECRET_KEY_NAME } from './mask.js';
import type { ObjectChange, SecretKeyChange } from './types.js';

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
