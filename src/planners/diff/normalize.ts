import { createHash } from 'node:crypto';
import { maskObjectBody } from './mask.js';
import { stringify } from 'yaml';
import type { ManifestObject } from './manifest.js';

/**
 * Normalized, printable form of an object: YAML lines, each with the path of the value it shows,
 * so a hunk can say where it is (`spec.template.spec.containers[app].image`).
 *
 * - keys in a stable order: `apiVersion`, `kind`, `metadata` first; `name` first in every mapping;
 *   the rest by code point;
 * - lists Kubernetes merges by name (containers, env, ports, volumes, volumeMounts, …) are sorted by
 *   that name, so a reorder is no change and items are matched by name, not position;
 * - `kubectl.kubernetes.io/last-applied-configuration` is scrubbed (it can hold a whole Secret);
 * - Secrets: `stringData` is folded into `data` and every value is replaced; only key names and
 *   byte counts survive (in `secretKeys`), never the bytes themselves;
 * - long lines and `binaryData` are shortened, with a short hash so a change stays visible.
 */
export interface NormalizedObject {
  lines: NormalizedLine[];
  text: string;
  /** Secrets only: key → size and an internal digest used to tell changed from unchanged. Never printed. */
  secretKeys?: Map<string, { bytes: number; digest: string }>;
}

export interface NormalizedLine {
  text: string;
  path: string;
}

export interface NormalizeOptions {
  /** Lines longer than this are cut (with a hash of the whole line). @default 200 */
  maxLineLength?: number;
}

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** List fields whose items Kubernetes merges by a key, and that key. */
const mergeKeys: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  env: 'name',
  ports: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  imagePullSecrets: 'name',
  volumeClaimTemplates: 'name',
  hostAliases: 'ip',
  topologySpreadConstraints: 'topologyKey',
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shortHash(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex').slice(0, 8);
}

/** Is this the core `Secret` kind? */
export function isSecret(object: { group: string; kind: string }): boolean {
  return object.group === '' && object.kind === 'Secret';
}

function base64Bytes(value: unknown): Buffer {
  return typeof value === 'string'
    ? Buffer.from(value.replace(/\s+/g, ''), 'base64')
    : Buffer.from(String(value ?? ''), 'utf8');
}

/** Secret key → bytes, with `stringData` folded over `data` the way the API server does. */
export function secretBytes(body: Record<string, unknown>): Map<string, Buffer> {
  const result = new Map<string, Buffer>();
  if (isRecord(body.data)) for (const [key, value] of Object.entries(body.data)) result.set(key, base64Bytes(value));
  if (isRecord(body.stringData))
    for (const [key, value] of Object.entries(body.stringData))
      result.set(key, Buffer.from(typeof value === 'string' ? value : String(value ?? ''), 'utf8'));
  return result;
}

/** A copy of the body with what must never be shown taken out, and lists ordered. */
function prepare(object: ManifestObject): {
  body: Record<string, unknown>;
  secretKeys?: Map<string, { bytes: number; digest: string }>;
} {
  const body = structuredClone(object.body);
  const metadata = body.metadata;
  if (isRecord(metadata) && isRecord(metadata.annotations) && LAST_APPLIED in metadata.annotations) {
    metadata.annotations[LAST_APPLIED] = '(scrubbed)';
  }
  if (!isSecret(object)) {
    const isConfigMap = object.group === '' && object.kind === 'ConfigMap';
    if (isConfigMap && isRecord(body.binaryData)) {
      for (const [key, value] of Object.entries(body.binaryData)) {
        const bytes = base64Bytes(value);
        body.binaryData[key] = `(binary, ${bytes.length} bytes, sha256:${shortHash(bytes)})`;
      }
    }
    // Credentials outside Secrets (URL passwords, env literals and ConfigMap keys named like secrets).
    const masked = maskObjectBody(body, isConfigMap);
    return masked.size > 0 ? { body, secretKeys: masked } : { body };
  }
  const secretKeys = new Map<string, { bytes: number; digest: string }>();
  const data: Record<string, string> = {};
  for (const [key, bytes] of [...secretBytes(body)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    secretKeys.set(key, { bytes: bytes.length, digest: createHash('sha256').update(bytes).digest('hex') });
    data[key] = '(redacted)';
  }
  delete body.stringData;
  if (body.data !== undefined || secretKeys.size > 0) body.data = data;
  return { body, secretKeys };
}

function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function orderKeys(map: Record<string, unknown>, depth: number, parentKey: string): string[] {
  const keys = Object.keys(map);
  const first =
    depth === 0
      ? ['apiVersion', 'kind', 'metadata']
      : parentKey === 'metadata'
        ? ['name', 'generateName', 'namespace', 'labels', 'annotations']
        : ['name'];
  const head = first.filter((key) => key in map);
  const rest = keys.filter((key) => !head.includes(key)).sort(compareKeys);
  return [...head, ...rest];
}

const plainKey = /^[A-Za-z_$][\w$-]*$/;

function keySegment(key: string): string {
  return plainKey.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function joinPath(path: string, segment: string): string {
  const joined = `${path}${segment}`;
  return joined.startsWith('.') ? joined.slice(1) : joined;
}

function scalarText(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  // YAML 1.1 readers (and people) take `yes`/`on` for booleans: quote them like every other ambiguous string.
  if (typeof value === 'string') {
    if (/^(y|yes|n|no|on|off)$/i.test(value)) return JSON.stringify(value);
    // Fast path: plain-safe text (names, image refs, paths) needs no quoting; the rest goes through yaml.
    if (/^[A-Za-z_/][\w./@+=,:-]*$/.test(value) && !value.endsWith(':') && !/^(true|false|null)$/i.test(value))
      return value;
    return stringify(value, { lineWidth: 0 }).replace(/\n$/, '');
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) return value.toISOString();
  return JSON.stringify(value) ?? 'null';
}

function keyText(key: string): string {
  return /^[A-Za-z0-9_./-]+$/.test(key) && !/^(true|false|null|yes|no|on|off|y|n|~|[-+.\d].*)$/i.test(key)
    ? key
    : JSON.stringify(key);
}

/** Multi-line strings print as literal blocks; odd ones (CR, a leading space, control characters) as JSON strings. */
function blockable(value: string): boolean {
  if (!value.includes('\n') || /^[ \t]/.test(value)) return false;
  for (const ch of value) {
    const point = ch.codePointAt(0) ?? 0;
    if ((point < 0x20 && ch !== '\n' && ch !== '\t') || point === 0x7f) return false;
  }
  return true;
}

function sortNamed(key: string, items: unknown[]): { items: unknown[]; by?: string } {
  const by = mergeKeys[key];
  if (!by) return { items };
  const names = items.map((item) => (isRecord(item) && typeof item[by] === 'string' ? item[by] : undefined));
  if (names.some((name) => name === undefined) || new Set(names).size !== names.length) return { items };
  const sorted = items
    .map((item, index) => ({ item, name: names[index] as string }))
    .sort((a, b) => compareKeys(a.name, b.name))
    .map(({ item }) => item);
  return { items: sorted, by };
}

function emitMap(
  out: NormalizedLine[],
  map: Record<string, unknown>,
  indent: string,
  path: string,
  depth: number,
  parentKey: string,
  firstPrefix?: string,
): void {
  orderKeys(map, depth, parentKey).forEach((key, index) => {
    const linePrefix = index === 0 && firstPrefix !== undefined ? firstPrefix : indent;
    emitEntry(out, `${linePrefix}${keyText(key)}:`, indent, map[key], joinPath(path, keySegment(key)), depth + 1, key);
  });
}

function emitBlock(out: NormalizedLine[], head: string, indent: string, value: string, path: string): void {
  const chomp = value.endsWith('\n') ? (value.endsWith('\n\n') ? '+' : '') : '-';
  out.push({ text: `${head}|${chomp}`, path });
  const body = value.endsWith('\n') ? value.slice(0, -1) : value;
  for (const line of body.split('\n')) out.push({ text: line === '' ? '' : `${indent}${line}`, path });
}

/** `head` is `indent + "key:"`; the value goes after it or on the lines below. */
function emitEntry(
  out: NormalizedLine[],
  head: string,
  indent: string,
  value: unknown,
  path: string,
  depth: number,
  key: string,
): void {
  if (isRecord(value)) {
    if (Object.keys(value).length === 0) out.push({ text: `${head} {}`, path });
    else {
      out.push({ text: head, path });
      emitMap(out, value, `${indent}  `, path, depth, key);
    }
  } else if (Array.isArray(value)) {
    if (value.length === 0) out.push({ text: `${head} []`, path });
    else {
      out.push({ text: head, path });
      emitList(out, value, `${indent}  `, path, depth, key);
    }
  } else if (typeof value === 'string' && blockable(value)) emitBlock(out, `${head} `, `${indent}  `, value, path);
  else out.push({ text: `${head} ${scalarText(value)}`, path });
}

function emitList(
  out: NormalizedLine[],
  list: unknown[],
  indent: string,
  path: string,
  depth: number,
  key: string,
): void {
  const { items, by } = sortNamed(key, list);
  items.forEach((item, index) => {
    const itemPath = `${path}${by && isRecord(item) ? `[${String(item[by])}]` : `[${index}]`}`;
    const dash = `${indent}- `;
    const inner = `${indent}  `;
    if (isRecord(item) && Object.keys(item).length > 0) emitMap(out, item, inner, itemPath, depth, '', dash);
    else if (Array.isArray(item) && item.length > 0) {
      out.push({ text: `${indent}-`, path: itemPath });
      emitList(out, item, inner, itemPath, depth, '');
    } else if (isRecord(item)) out.push({ text: `${dash}{}`, path: itemPath });
    else if (Array.isArray(item)) out.push({ text: `${dash}[]`, path: itemPath });
    else if (typeof item === 'string' && blockable(item)) emitBlock(out, dash, inner, item, itemPath);
    else out.push({ text: `${dash}${scalarText(item)}`, path: itemPath });
  });
}

function emitTop(out: NormalizedLine[], value: unknown, depth: number): void {
  if (isRecord(value)) emitMap(out, value, '', '', depth, '');
  else if (Array.isArray(value)) emitList(out, value, '', '', depth, '');
  else if (typeof value === 'string' && blockable(value)) emitBlock(out, '', '  ', value, '');
  else out.push({ text: scalarText(value), path: '' });
}

function shorten(line: NormalizedLine, max: number): NormalizedLine {
  if (line.text.length <= max) return line;
  const keep = Math.max(20, max - 40);
  return {
    path: line.path,
    text: `${line.text.slice(0, keep)}… [+${line.text.length - keep} chars, sha256:${shortHash(line.text)}]`,
  };
}

/** Normalize one object into printable lines. */
export function normalizeObject(object: ManifestObject, options: NormalizeOptions = {}): NormalizedObject {
  const { body, secretKeys } = prepare(object);
  const lines: NormalizedLine[] = [];
  emitTop(lines, body, 0);
  const max = options.maxLineLength ?? 200;
  const shortened = lines.map((line) => shorten(line, max));
  const result: NormalizedObject = { lines: shortened, text: shortened.map((line) => `${line.text}\n`).join('') };
  if (secretKeys) result.secretKeys = secretKeys;
  return result;
}

/** Normalize any YAML value (Helm values files) the same way, without Kubernetes rules. */
export function normalizeValue(value: unknown, options: NormalizeOptions = {}): NormalizedObject {
  const lines: NormalizedLine[] = [];
  emitTop(lines, value, 1);
  const max = options.maxLineLength ?? 200;
  const shortened = lines.map((line) => shorten(line, max));
  return { lines: shortened, text: shortened.map((line) => `${line.text}\n`).join('') };
}
