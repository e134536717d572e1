/**
 * YAML inside a YAML string: an Argo CD Application's `helm.values: |` (Argo CD's
 * `ApplicationSourceHelm.Values`, a string of Helm values), a ConfigMap's `values.yaml: |` that a
 * Flux HelmRelease reads through `valuesFrom` (Flux's `valuesKey` defaults to `values.yaml`),
 * a kustomize inline `patches[].patch: |`. What runs is set inside the string, so the string is
 * read as the YAML it holds, by the reader of its format, and edited in place.
 *
 * Byte for byte: a literal block scalar (`|`, `|-`, `|+`) keeps its content verbatim apart from
 * the indentation, so a scalar on one line of the content sits at a known offset of the file:
 * the edit splices there, and nothing else of the string moves. Any other string (folded `>`,
 * quoted with escapes, an explicit indentation indicator, a value spanning lines) cannot be
 * mapped that way: its image sites are refused with the line of the string and the fix.
 */
import { isScalar, type Scalar } from 'yaml';
import { loadFile } from './parse.js';
import { DocumentReader, type EmbeddedIn, type Field, type Site, type WalkState } from './site.js';
import type { FileKind } from './types.js';

/** How the content of a literal block scalar maps to the file, line by line. */
interface LineMap {
  /** File offset of the first content character of each content line. */
  starts: number[];
  /** Length of each content line. */
  lengths: number[];
}

/**
 * The line map of a literal block scalar, or why there is none. `source` is the scalar's source
 * text (header included) at `base` in the file; `value` is what the YAML parser read.
 */
function literalLines(source: string, base: number, value: string): LineMap | string {
  const header = /^\|([-+]?)([ \t]*(?:#[^\n]*)?)?\r?\n/.exec(source);
  if (!header)
    return /^\|/.test(source)
      ? 'its block header carries an indentation indicator (|2)'
      : 'it is not a literal block (|)';
  const body = source.slice(header[0].length);
  const rows = body.split('\n');
  const first = rows.find((row) => row.replace(/\r$/, '').trim() !== '') ?? '';
  const indent = /^ */.exec(first)?.[0].length ?? 0;
  const starts: number[] = [];
  const lengths: number[] = [];
  const content: string[] = [];
  let at = base + header[0].length;
  for (const row of rows) {
    const line = row.replace(/\r$/, '');
    const text = line.length > indent ? line.slice(indent) : '';
    starts.push(at + Math.min(indent, line.length));
    lengths.push(text.length);
    content.push(text);
    at += row.length + 1;
  }
  const trim = (text: string) => text.replace(/\n+$/, '');
  if (trim(content.join('\n')) !== trim(value)) return 'its text could not be matched line by line';
  return { starts, lengths };
}

/** Content offset → file offset, or undefined when the offset is past a line's end. */
function toFile(map: LineMap, value: string, offset: number): { at: number; line: number } | undefined {
  let line = 0;
  let from = 0;
  for (;;) {
    const newline = value.indexOf('\n', from);
    if (newline === -1 || newline >= offset) break;
    from = newline + 1;
    line += 1;
  }
  const start = map.starts[line];
  const length = map.lengths[line];
  if (start === undefined || length === undefined || offset - from > length) return undefined;
  return { at: start + (offset - from), line };
}

/**
 * The image sites of the YAML held by the string at `node` (read with `read`, as a document of
 * `kind`), with their offsets moved into the file. Undefined when the node is not a string
 * holding YAML data.
 */
export function readEmbedded(
  reader: DocumentReader,
  node: unknown,
  state: WalkState,
  kind: FileKind,
  read: (inner: DocumentReader, root: unknown, state: WalkState) => Site[],
): Site[] {
  const scalar = reader.resolve(node);
  if (!isScalar(scalar) || typeof scalar.value !== 'string' || !scalar.range) return [];
  const value = scalar.value;
  // Only a string that can hold YAML with an image: more than one line, or a flow map.
  if (!value.includes('\n') && !value.trimStart().startsWith('{')) return [];
  const loaded = loadFile(value);
  if (loaded.refusals.length > 0 || loaded.segments.length !== 1) return [];
  const segment = loaded.segments[0];
  if (!segment) return [];
  const base = reader.segment.offset + (scalar.range[0] ?? 0);
  const source = reader.segment.text.slice(scalar.range[0], scalar.range[1]);
  const type = (scalar as Scalar).type;
  const map =
    type === 'BLOCK_LITERAL'
      ? literalLines(source, base, value)
      : 'it is not a literal block (|) but a folded or quoted string';
  const inner = new DocumentReader({ ...segment, index: reader.segment.index }, value, kind);
  const sites = read(inner, segment.doc.contents, { path: [...state.path] });
  const where = state.path.join('.');
  const embedded: EmbeddedIn = { path: [...state.path] };
  if (state.blocked) embedded.blocked = state.blocked;
  else if (typeof map === 'string')
    embedded.blocked = `${where} holds YAML in a string that Escalator cannot edit byte for byte (${map}); write it as a literal block (${where}: |) with the values on their own lines`;
  const spans = `the value spans lines inside the string ${where}; write it on one line`;
  for (const site of sites) {
    site.embedded = embedded;
    if (embedded.blocked !== undefined && site.blocked === undefined) site.blocked = embedded.blocked;
    const fields: Field[] =
      site.form === 'string' ? [site.field] : [site.tag, site.digest, site.nameField].filter((f) => f !== undefined);
    for (const field of fields) {
      delete field.marker; // Flux's setters read comments of the file, not of text inside a string.
      const start = typeof map === 'string' ? undefined : toFile(map, value, field.start);
      const end = typeof map === 'string' ? undefined : toFile(map, value, field.end);
      if (!start || !end) {
        field.start = base;
        field.end = base;
        field.blocked ??= embedded.blocked ?? spans;
        continue;
      }
      if (start.line !== end.line) field.blocked ??= spans;
      field.start = start.at;
      field.end = end.at;
    }
    if (site.form === 'split') {
      const mapStart = site.entry.map.range?.[0] ?? 0;
      const placed = typeof map === 'string' ? undefined : toFile(map, value, mapStart);
      site.entry = { ...site.entry, offset: (placed?.at ?? base) - mapStart };
    }
  }
  return sites;
}
