/**
 * Reading one side of a promotion (X before, X after, Y) into documents with source ranges, and
 * reading nodes by meaning. Parsing, limits, duplicate keys, templates and aliases without an
 * anchor are the image editor's (`loadFile`): a file it would refuse is refused here too.
 */
import { isAlias, isCollection, isPair, isScalar, visit, type Document, type Node } from 'yaml';
import { loadFile } from '../image-edit/parse.js';
import { clipValue } from '../quote-value.js';
import { eolOf, LineIndex } from './text.js';
import type { ConfigRefusal } from './types.js';

export type SideName = ConfigRefusal['file'];

/** One YAML document of a side. Node ranges are relative to `offset`. */
export interface DocView {
  /** Index in the stream, as `parseAllDocuments` counts it. */
  index: number;
  doc: Document.Parsed;
  offset: number;
  /** Anchors that an alias of this document names: editing under one would change the alias too. */
  aliased: Set<string>;
}

/** A file's text and documents. */
export interface Side {
  name: SideName;
  text: string;
  lines: LineIndex;
  eol: string;
  docs: DocView[];
  refusals: ConfigRefusal[];
}

const WHAT: Record<SideName, string> = {
  sourceBefore: "the source environment's file before the change",
  sourceAfter: "the source environment's file after the change",
  target: "the target environment's file",
};

/** Parses `text`; problems are refusals naming the side. */
export function readSide(text: string, name: SideName): Side {
  const lines = new LineIndex(text);
  const side: Side = { name, text, lines, eol: eolOf(text), docs: [], refusals: [] };
  const loaded = loadFile(text);
  for (const problem of [...loaded.refusals, ...loaded.templates]) {
    side.refusals.push({
      file: name,
      line: problem.line ?? 1,
      reason: `${WHAT[name]} cannot be read: ${problem.reason}`,
    });
  }
  if (side.refusals.length > 0) return side;
  for (const segment of loaded.segments) {
    const aliased = new Set<string>();
    if (segment.aliases.size > 0) for (const alias of segment.aliases.keys()) aliased.add(alias.source);
    side.docs.push({ index: segment.index, doc: segment.doc, offset: segment.offset, aliased });
  }
  return side;
}

/** A node's value as data (aliases resolved; the guard has bounded what they expand to). */
export function dataOf(view: DocView, node: unknown): unknown {
  if (node === null || node === undefined) return null;
  return (node as Node).toJS(view.doc, { maxAliasCount: -1 });
}

/** Whether two values mean the same (maps compared without regard to key order). */
export function sameData(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => sameData(item, b[i]));
  }
  if (a instanceof Map || b instanceof Map || a instanceof Set || b instanceof Set) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  return keys.every((key) => Object.prototype.hasOwnProperty.call(right, key) && sameData(left[key], right[key]));
}

/** Absolute `[start, valueEnd]` of a node. */
export function rangeOf(view: DocView, node: Node): [number, number] {
  const range = node.range ?? [0, 0, 0];
  return [view.offset + range[0], view.offset + range[1]];
}

/**
 * Where a node's content ends: after its last scalar or closing bracket, before any comment or
 * blank line that follows it (block collections' own ranges run on over those).
 */
export function contentEnd(view: DocView, node: unknown): number | undefined {
  let current = node;
  for (;;) {
    if (isAlias(current) || isScalar(current)) return rangeOf(view, current)[1];
    if (isCollection(current)) {
      if (current.flow || current.items.length === 0) return rangeOf(view, current)[1];
      const last = current.items[current.items.length - 1];
      if (isPair(last)) {
        current = last.value ?? last.key;
        continue;
      }
      current = last;
      continue;
    }
    return undefined;
  }
}

/** The anchors and aliases inside a node (itself included), for refusing copies and edits that touch them. */
export function anchorsAndAliases(node: unknown): { anchors: string[]; aliases: string[] } {
  const anchors: string[] = [];
  const aliases: string[] = [];
  if (node === null || node === undefined) return { anchors, aliases };
  const visitor = {
    Alias: (_: unknown, alias: { source: string }) => {
      aliases.push(alias.source);
    },
    Node: (_: unknown, item: { anchor?: string }) => {
      if (item.anchor) anchors.push(item.anchor);
    },
  };
  if (isAlias(node)) aliases.push(node.source);
  else if (isScalar(node)) {
    if (node.anchor) anchors.push(node.anchor);
  } else if (isCollection(node)) {
    if (node.anchor) anchors.push(node.anchor);
    visit(node, visitor);
  }
  return { anchors, aliases };
}

/** A value as written, for a reviewer: the source of a one-line value, else its data clipped. */
export function describeNode(side: Side, view: DocView, node: unknown): string {
  if (node === null || node === undefined) return '';
  if (isScalar(node) || isAlias(node) || (isCollection(node) && node.flow)) {
    const [start, end] = rangeOf(view, node as Node);
    const source = side.text.slice(start, end);
    if (!source.includes('\n')) return clipValue(source);
  }
  return clipValue(JSON.stringify(dataOf(view, node)) ?? '');
}

/** The string a scalar map key reads as (`undefined` for a collection or alias key). */
export function keyText(key: unknown): string | undefined {
  if (!isScalar(key)) return undefined;
  return key.value === null ? '' : String(key.value as string | number | boolean);
}
