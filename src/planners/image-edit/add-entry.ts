/**
 * Adding an `images:` entry to a kustomization, as `kustomize edit set image` does when the
 * kustomization renders an image it has no entry for (kustomize's
 * `kustomize/commands/edit/set/setimage.go`). Escalator offers it only where an environment opts
 * in (`environments[].addImages`): by default a file that does not mention the image is left alone.
 *
 * The entry is written in the file's own style: appended to a block `images:` list with the
 * indentation and quoting of its entries, into a flow list as `{name: …, newTag: …}`, or, when
 * the file has no `images:`, as a new key at the end, its items indented like the file's other
 * top-level lists. The edit is proved like every other: the file re-parses to the same data with
 * exactly that entry added.
 *
 * 1. read the file (one Kustomization document, a block map at the top)
 * 2. choose where the entry goes and how it is written
 * 3. splice it in, re-parse and compare
 */
import { isMap, isScalar, isSeq, type Document, type Scalar, type YAMLMap, type YAMLSeq } from 'yaml';
import { isDigest, isValidTag, normalizeName } from '../image-ref.js';
import { parseYamlDocuments } from '../yaml-parse.js';
import { kindFromPath } from './detect.js';
import { loadFile } from './parse.js';
import { doubleQuote, isPlainSafe, singleQuote, type ScalarStyle } from './scalar.js';
import { pairOf } from './site.js';
import { firstEol, lineAt, lineStartOf } from '../text.js';
import type { EditChange, EditRefusal, ImageEvent } from './types.js';

/** What {@link addImageEntry} did. */
export interface AddEntryResult {
  /** The new text; byte-identical to the input when refused. */
  text: string;
  /** The values written (`images[n].name`, `images[n].newTag`, `images[n].digest`). */
  changed: EditChange[];
  /** Why no entry was added. */
  refused: EditRefusal[];
}

/** How to add the entry. */
export interface AddEntryOptions {
  /** The kustomization's path (one of kustomize's three file names). */
  path: string;
  /** The entry's `name`: the image as kustomize sees it there (see `missingImageEntries`). */
  name: string;
  /** Write the event's digest too. @default false */
  pinDigest?: boolean;
}

function render(value: string, style: ScalarStyle): string {
  if (style === 'double') return doubleQuote(value);
  if (style === 'single') return singleQuote(value);
  return isPlainSafe(value) ? value : doubleQuote(value);
}

function styleOf(node: unknown): ScalarStyle {
  if (!isScalar(node)) return 'plain';
  if (node.type === 'QUOTE_DOUBLE') return 'double';
  if (node.type === 'QUOTE_SINGLE') return 'single';
  return 'plain';
}

/** Column of a node's first character. */
function columnOf(text: string, offset: number): number {
  return offset - lineStartOf(text, offset);
}

/** Where the entry goes and how it is indented: the text to insert at `at`. */
interface Placement {
  at: number;
  text: string;
  /** Offset of the entry inside `text` (its `name` key), for the reported line. */
  keyOffset: number;
  index: number;
}

/**
 * Adds `- name: <name>` / `newTag: <tag>` (and `digest:`) to the kustomization `text`, or refuses
 * with the reason. The caller has checked that the file has no entry for the image.
 */
export function addImageEntry(text: string, event: ImageEvent, options: AddEntryOptions): AddEntryResult {
  const refuse = (reason: string, line?: number): AddEntryResult => ({
    text,
    changed: [],
    refused: [line === undefined ? { reason } : { reason, line }],
  });
  if (kindFromPath(options.path) !== 'kustomize')
    return refuse(`${options.path} is not a kustomization; only kustomizations get a new images: entry`);
  if (!isValidTag(event.tag)) return refuse(`the tag "${event.tag}" is not a valid Docker tag`);
  if (normalizeName(options.name) === undefined)
    return refuse(`"${options.name}" is not an image name, so no images: entry can match it`);
  const digest = options.pinDigest === true && event.digest !== undefined ? event.digest : undefined;
  if (digest !== undefined && !isDigest(digest)) return refuse(`the digest "${digest}" is not a valid digest`);
  const loaded = loadFile(text);
  if (loaded.refusals.length > 0) return { text, changed: [], refused: loaded.refusals };
  if (loaded.count !== 1 || loaded.mode !== 'whole')
    return refuse(
      `${options.path} holds ${loaded.count} YAML documents; add the images: entry by hand once (kustomize reads only one)`,
    );
  const doc = loaded.segments[0]?.doc as Document.Parsed;
  const root = doc.contents;
  if (!isMap(root) || root.flow)
    return refuse(
      `${options.path} is not written as a block map of keys; add the images: entry by hand once, then Escalator keeps it current`,
    );
  const placement = place(text, root, options.name, event.tag, digest);
  if ('reason' in placement) return refuse(placement.reason, placement.line);

  const newText = text.slice(0, placement.at) + placement.text + text.slice(placement.at);
  const problem = proveAdded(doc, newText, options.name, event.tag, digest);
  if (problem)
    return refuse(
      `internal error: the new images: entry did not verify (${problem}); the file was left untouched, please report this`,
    );
  const line = lineAt(newText, placement.at + placement.keyOffset);
  const where = `images[${placement.index}]`;
  const changed: EditChange[] = [
    { path: `${where}.name`, line, from: '', to: options.name },
    { path: `${where}.newTag`, line: placement.text.includes('\n') ? line + 1 : line, from: '', to: event.tag },
  ];
  if (digest !== undefined)
    changed.push({
      path: `${where}.digest`,
      line: placement.text.includes('\n') ? line + 2 : line,
      from: '',
      to: digest,
    });
  return { text: newText, changed, refused: [] };
}

function place(
  text: string,
  root: YAMLMap,
  name: string,
  tag: string,
  digest: string | undefined,
): Placement | { reason: string; line?: number } {
  const eol = firstEol(text);
  const pair = pairOf(root, 'images');
  const list = pair?.value;
  if (pair && !isSeq(list)) {
    const at = (pair.key as Scalar | undefined)?.range?.[0] ?? 0;
    return {
      reason:
        'images: is there but is not a list; write it as a list (images: []) or remove it, then Escalator adds the entry',
      line: lineAt(text, at),
    };
  }
  if (isSeq(list) && list.flow) return placeFlow(text, list, name, tag, digest);
  if (isSeq(list)) return placeBlock(text, list, name, tag, digest, eol);
  return placeNewKey(text, root, name, tag, digest, eol);
}

/** Keys of a new entry, rendered with the styles of `sample` (an existing entry) or plain. */
function entryKeys(
  sample: YAMLMap | undefined,
  name: string,
  tag: string,
  digest: string | undefined,
): Array<[string, string]> {
  const nameStyle = sample ? styleOf(sample.get('name', true)) : 'plain';
  const tagStyle = sample && sample.has('newTag') ? styleOf(sample.get('newTag', true)) : 'plain';
  const keys: Array<[string, string]> = [
    ['name', render(name, nameStyle)],
    ['newTag', render(tag, tagStyle)],
  ];
  if (digest !== undefined) keys.push(['digest', render(digest, tagStyle)]);
  return keys;
}

function placeFlow(
  text: string,
  list: YAMLSeq,
  name: string,
  tag: string,
  digest: string | undefined,
): Placement | { reason: string; line?: number } {
  const end = list.range?.[1];
  const close = end === undefined ? -1 : text.lastIndexOf(']', end);
  if (close === -1) return { reason: 'the flow images: list has no closing ]; add the entry by hand once' };
  const sample = list.items.find((item): item is YAMLMap => isMap(item));
  const body = entryKeys(sample, name, tag, digest)
    .map(([key, value]) => `${key}: ${value}`)
    .join(', ');
  const last = list.items[list.items.length - 1] as { range?: [number, number, number] } | undefined;
  const after = last?.range?.[1];
  if (after === undefined) return { at: close, text: `{${body}}`, keyOffset: 1, index: 0 };
  const separator = text.slice(after, close).includes(',') ? ' ' : ', ';
  return { at: after, text: `${separator}{${body}}`, keyOffset: separator.length + 1, index: list.items.length };
}

function placeBlock(
  text: string,
  list: YAMLSeq,
  name: string,
  tag: string,
  digest: string | undefined,
  eol: string,
): Placement | { reason: string; line?: number } {
  const first = list.items[0] as { range?: [number, number, number] } | undefined;
  const firstStart = first?.range?.[0];
  const listStart = list.range?.[0];
  if (firstStart === undefined || listStart === undefined)
    return { reason: 'the images: list is empty in block style; write it as images: [] or add the entry by hand once' };
  const dash = text.lastIndexOf('-', firstStart - 1);
  const dashColumn = columnOf(text, dash);
  const keyColumn = columnOf(text, firstStart);
  const sample = list.items.find((item): item is YAMLMap => isMap(item));
  if (!sample || sample.flow)
    return { reason: 'the images: entries are not written as block maps; add the entry by hand once in their style' };
  const keys = entryKeys(sample, name, tag, digest);
  const lines = keys.map(
    ([key, value], i) =>
      `${i === 0 ? `${' '.repeat(dashColumn)}-${' '.repeat(keyColumn - dashColumn - 1)}` : ' '.repeat(keyColumn)}${key}: ${value}`,
  );
  // After the line where the list's last item ends.
  const lastContent = lastContentEnd(text, list);
  const lineEnd = text.indexOf('\n', lastContent);
  const at = lineEnd === -1 ? text.length : lineEnd + 1;
  const prefix = lineEnd === -1 ? eol : '';
  return {
    at,
    text: `${prefix}${lines.join(eol)}${eol}`,
    keyOffset: prefix.length + dashColumn,
    index: list.items.length,
  };
}

/** Offset just before the end of the list's last item's content (its last scalar or collection). */
function lastContentEnd(text: string, list: YAMLSeq): number {
  const last = list.items[list.items.length - 1] as { range?: [number, number, number] } | undefined;
  const end = last?.range?.[1] ?? list.range?.[1] ?? text.length;
  // Ranges of block nodes end after their trailing line break; step back onto the content.
  let at = end;
  while (at > 0 && /[\r\n \t]/.test(text.charAt(at - 1))) at -= 1;
  return Math.max(at - 1, 0);
}

function placeNewKey(
  text: string,
  root: YAMLMap,
  name: string,
  tag: string,
  digest: string | undefined,
  eol: string,
): Placement | { reason: string; line?: number } {
  // Items of the file's other top-level block lists set the indentation of `-` (kustomize writes 0).
  let dashColumn = 0;
  for (const item of root.items) {
    const value = item.value;
    if (!isSeq(value) || value.flow) continue;
    const firstStart = (value.items[0] as { range?: [number, number, number] } | undefined)?.range?.[0];
    if (firstStart === undefined) continue;
    dashColumn = columnOf(text, text.lastIndexOf('-', firstStart - 1));
    break;
  }
  const keyColumn = dashColumn + 2;
  const lines = [
    'images:',
    ...entryKeys(undefined, name, tag, digest).map(
      ([key, value], i) => `${' '.repeat(i === 0 ? dashColumn : keyColumn)}${i === 0 ? '- ' : ''}${key}: ${value}`,
    ),
  ];
  const needsBreak = text.length > 0 && !text.endsWith('\n');
  const prefix = needsBreak ? eol : '';
  return {
    at: text.length,
    text: `${prefix}${lines.join(eol)}${eol}`,
    keyOffset: prefix.length + 'images:'.length + eol.length + dashColumn,
    index: 0,
  };
}

/** The proof: the new text parses to the old data with exactly the entry added. */
function proveAdded(
  doc: Document.Parsed,
  newText: string,
  name: string,
  tag: string,
  digest: string | undefined,
): string | undefined {
  const docs = parseYamlDocuments(newText, { prettyErrors: false, uniqueKeys: true });
  const list = Array.isArray(docs) ? docs : [];
  if (list.length !== 1) return `the file now holds ${list.length} documents`;
  const parsed = list[0] as Document.Parsed;
  if (parsed.errors.length > 0)
    return `the new text does not parse (${parsed.errors[0]?.message.split('\n')[0] ?? ''})`;
  const expected = doc.toJS({ maxAliasCount: -1 }) as Record<string, unknown>;
  const entry: Record<string, string> = { name, newTag: tag };
  if (digest !== undefined) entry.digest = digest;
  const images = Array.isArray(expected.images) ? (expected.images as unknown[]) : [];
  expected.images = [...images, entry];
  const actual = parsed.toJS({ maxAliasCount: -1 }) as unknown;
  return JSON.stringify(sortKeys(actual)) === JSON.stringify(sortKeys(expected))
    ? undefined
    : 'values other than the new entry changed';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, item]) => [key, sortKeys(item)]),
  );
}
