/** Plain-text helpers: lines, line endings, document chunks and splices. Offsets are UTF-16 indexes. */

/** 1-based line of `offset` in `text` (lines end at `\n`; CRLF counts once). */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  let at = text.indexOf('\n');
  while (at !== -1 && at < offset) {
    line += 1;
    at = text.indexOf('\n', at + 1);
  }
  return line;
}

/** Offset of the first character of the line holding `offset`. */
export function lineStartOf(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

/** Where the line holding `offset` ends (before its line break) and the break itself. */
export function lineEndOf(text: string, offset: number): { end: number; eol: string } {
  const newline = text.indexOf('\n', offset);
  if (newline === -1) return { end: text.length, eol: '' };
  if (newline > 0 && text.charAt(newline - 1) === '\r' && newline - 1 >= offset)
    return { end: newline - 1, eol: '\r\n' };
  return { end: newline, eol: '\n' };
}

/** The line break the file uses first (`\n` when it has none). */
export function firstEol(text: string): string {
  const newline = text.indexOf('\n');
  if (newline === -1) return '\n';
  return newline > 0 && text.charAt(newline - 1) === '\r' ? '\r\n' : '\n';
}

/** One replacement of `[start, end)` by `text`; an insertion has `start === end`. */
export interface Splice {
  start: number;
  end: number;
  text: string;
}

/**
 * Applies non-overlapping splices (any order; insertions at one offset keep their given order).
 * Also returns where each splice's text starts in the result.
 */
export function applySplices(text: string, splices: readonly Splice[]): { text: string; starts: number[] } {
  const ordered = splices
    .map((splice, order) => ({ splice, order }))
    .sort((a, b) => a.splice.start - b.splice.start || a.order - b.order);
  const starts: number[] = new Array<number>(splices.length).fill(0);
  const parts: string[] = [];
  let length = 0;
  let cursor = 0;
  for (const { splice, order } of ordered) {
    const kept = text.slice(cursor, splice.start);
    parts.push(kept, splice.text);
    starts[order] = length + kept.length;
    length += kept.length + splice.text.length;
    cursor = splice.end;
  }
  parts.push(text.slice(cursor));
  return { text: parts.join(''), starts };
}

/** A slice of a YAML stream that holds exactly one document. */
export interface Chunk {
  /** The document's index in the stream, as `parseAllDocuments` counts it. */
  index: number;
  start: number;
  end: number;
}

const DOCUMENT_START = /^---(?=[ \t\r\n]|$)/gm;

/**
 * Cuts a stream into its documents without parsing it, or returns undefined when the stream
 * has directives (`%YAML`, `%TAG`) or document-end markers (`...`), whose effect crosses
 * document boundaries. A `---` at the start of a line always starts a document (YAML 1.2
 * §9.1.4, c-forbidden: it may not occur inside any scalar), so the cut is exact. Text before
 * the first `---` that holds only comments and blank lines belongs to the first document.
 */
export function splitDocuments(text: string): Chunk[] | undefined {
  if (/^(?:%|\.\.\.(?:[ \t\r\n]|$))/m.test(text)) return undefined;
  const starts: number[] = [];
  for (const match of text.matchAll(DOCUMENT_START)) starts.push(match.index);
  const chunks: Chunk[] = [];
  const first = starts[0];
  if (first === undefined) return [{ index: 0, start: 0, end: text.length }];
  const head = text.slice(0, first).replace(/^\uFEFF/, '');
  const headHasContent = head.split('\n').some((line) => !/^[ \t]*(?:#.*)?\r?$/.test(line));
  let from = 0;
  if (headHasContent) {
    chunks.push({ index: 0, start: 0, end: first });
    from = first;
  }
  starts.forEach((start, i) => {
    const end = starts[i + 1] ?? text.length;
    chunks.push({ index: chunks.length, start: i === 0 ? from : start, end });
  });
  return chunks;
}
