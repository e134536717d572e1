/**
 * The proof after every edit (as Renovate re-extracts after `auto-replace`): parse the new text
 * and check that its data equals the old data with exactly the intended values set. Anything
 * else — a shifted key, a value that now reads as a number, a broken document — fails the edit.
 */
import { type Document } from 'yaml';
import { parseYamlDocuments } from '../yaml-parse.js';
import type { LoadedFile } from './parse.js';
import type { Edit } from './plan.js';
import type { PathSegment } from './site.js';
import { applySplices, splitDocuments } from '../text.js';

const PARSE_OPTIONS = { prettyErrors: false, uniqueKeys: true } as const;

function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (a instanceof Date || b instanceof Date)
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  if (a instanceof Map || b instanceof Map) {
    return a instanceof Map && b instanceof Map && deepEqual([...a.entries()], [...b.entries()]);
  }
  if (a instanceof Set || b instanceof Set) {
    return a instanceof Set && b instanceof Set && deepEqual([...a], [...b]);
  }
  if (ArrayBuffer.isView(a) || ArrayBuffer.isView(b)) {
    if (!ArrayBuffer.isView(a) || !ArrayBuffer.isView(b)) return false;
    const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    return x.length === y.length && x.every((byte, i) => byte === y[i]);
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  return keys.every((key) => Object.prototype.hasOwnProperty.call(right, key) && deepEqual(left[key], right[key]));
}

function setPath(root: unknown, path: readonly PathSegment[], value: string): boolean {
  let node = root as Record<string | number, unknown> | undefined;
  for (let i = 0; i < path.length - 1; i += 1) {
    const next = node?.[path[i] as string | number];
    if (typeof next !== 'object' || next === null) return false;
    node = next as Record<string | number, unknown>;
  }
  const last = path[path.length - 1];
  if (node === undefined || last === undefined) return false;
  node[last] = value;
  return true;
}

function getPath(root: unknown, path: readonly PathSegment[]): unknown {
  let node = root;
  for (const segment of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string | number, unknown>)[segment];
  }
  return node;
}

function readString(text: string): unknown {
  const docs = parseYamlDocuments(text, PARSE_OPTIONS);
  const list = Array.isArray(docs) ? docs : [];
  const doc = list[0];
  if (list.length !== 1 || !doc || doc.errors.length > 0) return Symbol('unreadable string');
  return doc.toJS({ maxAliasCount: -1 });
}

/**
 * The old document's data with the edits applied. An edit inside a YAML string (`helm.values: |`)
 * is proved on the string's own parse: the new string must read as the old one with exactly those
 * values set; then the new string is what the outer document is expected to hold.
 */
function expected(doc: Document.Parsed, edits: readonly Edit[], actual: unknown): unknown {
  // toJS builds fresh objects on every call, so the old document's data can be edited directly.
  const data: unknown = doc.toJS({ maxAliasCount: -1 });
  const strings = new Map<string, { path: readonly PathSegment[]; edits: Edit[] }>();
  for (const edit of edits) {
    if (edit.embedded) {
      const key = JSON.stringify(edit.embedded.path);
      const group = strings.get(key) ?? { path: edit.embedded.path, edits: [] };
      group.edits.push(edit);
      strings.set(key, group);
    } else if (!setPath(data, edit.path, edit.to)) return Symbol('unreachable path');
  }
  for (const { path, edits: inside } of strings.values()) {
    const before = getPath(data, path);
    const after = getPath(actual, path);
    if (typeof before !== 'string' || typeof after !== 'string') return Symbol('not a string');
    const wanted = readString(before);
    for (const edit of inside)
      if (!setPath(wanted, edit.path.slice(path.length), edit.to)) return Symbol('unreachable path');
    if (!deepEqual(readString(after), wanted)) return Symbol('the string changed otherwise');
    setPath(data, path, after);
  }
  return data;
}

function byDocument(edits: readonly Edit[]): Map<number, Edit[]> {
  const map = new Map<number, Edit[]>();
  for (const edit of edits) {
    const list = map.get(edit.docIndex) ?? [];
    list.push(edit);
    map.set(edit.docIndex, list);
  }
  return map;
}

function compare(
  oldDoc: Document.Parsed,
  newDoc: Document.Parsed | undefined,
  edits: readonly Edit[],
): string | undefined {
  if (!newDoc) return 'a document disappeared';
  const error = newDoc.errors[0];
  if (error) return `the edited document no longer parses (${error.message.split('\n')[0] ?? error.code})`;
  const actual: unknown = newDoc.toJS({ maxAliasCount: -1 });
  if (!deepEqual(actual, expected(oldDoc, edits, actual))) return 'values other than the intended ones changed';
  return undefined;
}

/**
 * Checks `newText` against the old parse and the intended edits. Returns what went wrong, or
 * undefined when only the intended values changed.
 */
export function verifyEdits(loaded: LoadedFile, newText: string, edits: readonly Edit[]): string | undefined {
  try {
    return verify(loaded, newText, edits);
  } catch (error) {
    return `the edited text could not be read back (${(error as Error).message})`;
  }
}

function verify(loaded: LoadedFile, newText: string, edits: readonly Edit[]): string | undefined {
  const grouped = byDocument(edits);
  if (loaded.mode === 'whole') {
    const docs = parseYamlDocuments(newText, PARSE_OPTIONS);
    const list = Array.isArray(docs) ? docs : [];
    if (list.length !== loaded.segments.length)
      return `the number of documents changed (${loaded.segments.length} → ${list.length})`;
    for (const segment of loaded.segments) {
      const problem = compare(segment.doc, list[segment.index], grouped.get(segment.index) ?? []);
      if (problem) return `document ${segment.index + 1}: ${problem}`;
    }
    return undefined;
  }
  const chunks = splitDocuments(newText);
  if (!chunks || chunks.length !== loaded.count) return 'the document boundaries changed';
  for (const segment of loaded.segments) {
    const own = grouped.get(segment.index);
    if (!own) continue;
    const chunkText = applySplices(
      segment.text,
      own.map((edit) => ({
        start: edit.start - segment.offset,
        end: edit.end - segment.offset,
        text: edit.text,
      })),
    ).text;
    const docs = parseYamlDocuments(chunkText, PARSE_OPTIONS);
    const list = Array.isArray(docs) ? docs : [];
    if (list.length !== 1) return `document ${segment.index + 1}: the document boundaries changed`;
    const problem = compare(segment.doc, list[0], own);
    if (problem) return `document ${segment.index + 1}: ${problem}`;
  }
  return undefined;
}
