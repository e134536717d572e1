/**
 * The byte-preserving writer: the text of one set, insertion or removal in Y's file. Only the
 * changed span of Y's text is replaced; new keys and list items are X's own lines moved to Y's
 * indentation for that map or list (and Y's dash spacing and quoting for list items), with Y's
 * line breaks. What cannot be written byte for byte is refused with the reason.
 */
import {
  isCollection,
  isMap,
  isScalar,
  isSeq,
  type Node,
  type Pair,
  type Scalar,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import { renderScalar, type ScalarStyle } from '../image-edit/scalar.js';
import { formatPath, type Change } from './extract.js';
import { contentEnd, describeNode, rangeOf, type DocView, type Side } from './read.js';
import { afterLine, columnOf, lineStart, shiftLines, splitLines, startsLine } from './text.js';

/** One splice of Y's text and what a reviewer is shown as the new value. */
export interface Written {
  start: number;
  end: number;
  text: string;
  /** Offset in `text` of the line the edit is reported at. */
  lineAt: number;
  shown: string;
}

function styleOf(node: unknown): ScalarStyle | undefined {
  if (!isScalar(node)) return undefined;
  if (node.type === 'QUOTE_DOUBLE') return 'double';
  if (node.type === 'QUOTE_SINGLE') return 'single';
  if (node.type === 'PLAIN') return 'plain';
  return undefined;
}

/**
 * A scalar of X written for Y: a string in Y's style (`style`), quoted where plain would read as
 * another type under YAML 1.1 or 1.2 (`renderScalar`); a number, boolean or null as X wrote it.
 */
function renderValue(
  side: Side,
  view: DocView,
  node: Scalar,
  style: ScalarStyle,
): { text: string } | { reason: string } {
  if (typeof node.value === 'string') return { text: renderScalar(node.value, style) };
  const [start, end] = rangeOf(view, node);
  const source = side.text.slice(start, end);
  if (node.type === 'PLAIN' && node.tag === undefined && !/[\r\n]/.test(source) && source !== '')
    return { text: source };
  if (node.value === null && source === '') return { text: 'null' };
  return {
    reason: `its new value is written with a tag or over several lines in the source environment (${JSON.stringify(source.slice(0, 40))}); write it as a plain value there, or promote this change by hand`,
  };
}

/** A new scalar list item in the style of Y's items (`sample`), or X's own when Y has none. */
export function renderItemScalar(
  side: Side,
  view: DocView,
  node: unknown,
  sample: unknown,
): { text: string } | { reason: string } {
  if (!isScalar(node)) return { reason: 'the new item is not a single value' };
  return renderValue(side, view, node, styleOf(sample) ?? styleOf(node) ?? 'plain');
}

/** The lines to insert, each ending with Y's line break (or led by one where Y's text does not end with one). */
export function insertAt(side: Side, at: number, lines: readonly string[], shown: string): Written {
  const { text, eol } = side;
  if (at === text.length && text.length > 0 && !text.endsWith('\n'))
    return { start: at, end: at, text: `${eol}${lines.join(eol)}`, lineAt: eol.length, shown };
  return { start: at, end: at, text: `${lines.join(eol)}${eol}`, lineAt: 0, shown };
}

/**
 * X's new `key: value` as lines for Y: from X's key to the end of its value, the key at Y's
 * `column`, the lines under it moved by the same amount.
 */
export function pairLines(
  after: Side,
  change: Change,
  column: number,
): { lines: string[]; shown: string } | { reason: string } {
  const pair = change.afterPair;
  const view = change.after?.view;
  const keyStart = (pair?.key as Node | undefined)?.range?.[0];
  if (!pair || !view || keyStart === undefined)
    return { reason: `internal error: no source text for ${formatPath(change.doc, change.steps)}; please report this` };
  const start = view.offset + keyStart;
  const end = contentEnd(view, pair.value ?? pair.key) ?? start;
  const lines = splitLines(after.text.slice(start, end).replace(/\r?\n$/, ''));
  const moved = shiftLines(lines, column - columnOf(after.text, start));
  if (!moved)
    return {
      reason: `the new value of ${formatPath(change.doc, change.steps)} cannot be moved to the target environment's indentation; add it by hand`,
    };
  moved[0] = ' '.repeat(column) + (moved[0] as string);
  return { lines: moved, shown: describeNode(after, view, pair.value) };
}

/** A new list item as lines for Y: Y's dash column and spacing, X's item under it, moved to Y's content column. */
export function itemLines(
  after: Side,
  view: DocView,
  node: unknown,
  dashColumn: number,
  contentColumn: number,
  sample: unknown,
): { lines: string[]; shown: string } | { reason: string } {
  const prefix = `${' '.repeat(dashColumn)}-${' '.repeat(Math.max(1, contentColumn - dashColumn - 1))}`;
  if (
    isScalar(node) &&
    (node.type === 'PLAIN' || node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE' || !isScalar(sample))
  ) {
    const rendered = renderItemScalar(after, view, node, sample);
    if ('reason' in rendered) return rendered;
    return { lines: [prefix + rendered.text], shown: rendered.text };
  }
  if (!isCollection(node) && !isScalar(node)) return { reason: 'the new item is empty or an alias; add it by hand' };
  const [start] = rangeOf(view, node as Node);
  const dash = after.text.lastIndexOf('-', start - 1);
  if (dash === -1 || lineStart(after.text, dash) !== lineStart(after.text, start))
    return { reason: 'the new item does not start on its dash line in the source environment; add it by hand' };
  const end = contentEnd(view, node) ?? start;
  const lines = splitLines(after.text.slice(start, end).replace(/\r?\n$/, ''));
  const moved = shiftLines(lines, contentColumn - columnOf(after.text, start));
  if (!moved) return { reason: "the new item cannot be moved to the target environment's indentation; add it by hand" };
  moved[0] = prefix + (moved[0] as string);
  return { lines: moved, shown: describeNode(after, view, node) };
}

/**
 * The new value of a set: a one-line scalar is replaced in place (Y's quoting kept where the value
 * allows it); anything else under a key — a block scalar, a multi-line string, a value that
 * changes between a map, a list and text — replaces the text after Y's key with X's, moved to Y's
 * indentation. Y's key, and what precedes it on its line, stay as they are.
 */
export function replacementOfValue(
  y: Side,
  view: DocView,
  found: { node: unknown; pair?: Pair; parent?: YAMLMap | YAMLSeq },
  after: Side,
  change: Change,
  path: string,
): (Omit<Written, 'lineAt'> & { lineAt: number }) | { reason: string } {
  const xNode = change.after?.node;
  const xView = change.after?.view as DocView;
  const yNode = found.node;
  const yStyle = styleOf(yNode);
  if (isScalar(yNode) && yStyle !== undefined && isScalar(xNode)) {
    const [start, end] = rangeOf(view, yNode);
    const oneLine = !/[\r\n]/.test(y.text.slice(start, end));
    const multiLineString = typeof xNode.value === 'string' && /[\r\n]/.test(xNode.value);
    if (oneLine && !(multiLineString && found.pair && !isFlow(found.parent))) {
      const rendered = renderValue(after, xView, xNode, yStyle);
      if ('reason' in rendered) return { reason: `cannot set ${path}: ${rendered.reason}` };
      let text = rendered.text;
      if (start === end) {
        // An empty value (`key:`): the value goes after one space, before a comment on the line.
        const before = y.text.charAt(start - 1);
        text = `${before === ' ' || before === '\t' ? '' : ' '}${text}${y.text.charAt(start) === '#' ? ' ' : ''}`;
      }
      return { start, end, text, lineAt: 0, shown: rendered.text };
    }
  }
  if (!found.pair || !change.afterPair) {
    return {
      reason: `cannot set ${path} byte for byte: the list item is written over several lines or is not a single value; promote this change by hand`,
    };
  }
  if (isFlow(found.parent))
    return {
      reason: `cannot set ${path} byte for byte: it sits in a flow map ({ … }) in the target environment and its new value is not a one-line value; write the map in block style, or promote this change by hand`,
    };
  const under = underEmptyKey(y, view, found.pair, after, xView, change.afterPair);
  if (under)
    return { ...under, lineAt: under.start === y.text.length ? 0 : -1, shown: describeNode(after, xView, xNode) };
  const body = blockBody(y, view, found.node, after, xView, xNode);
  // Reported at the header's line: the line break just before the body ends it.
  if (body) return { ...body, lineAt: -1, shown: describeNode(after, xView, xNode) };
  const yKey = found.pair.key as Node;
  const xKey = change.afterPair.key as Node;
  const yStart = rangeOf(view, yKey)[1];
  let yEnd = contentEnd(view, found.pair.value ?? yKey) ?? yStart;
  const xStart = rangeOf(xView, xKey)[1];
  const xEnd = contentEnd(xView, change.afterPair.value ?? xKey) ?? xStart;
  let lines = splitLines(after.text.slice(xStart, xEnd));
  const xEndsLine = after.text.charAt(xEnd - 1) === '\n';
  const yEndsLine = y.text.charAt(yEnd - 1) === '\n';
  if (xEndsLine && !yEndsLine) {
    const lineEnd = afterLine(y.text, yEnd);
    if (!/^[ \t]*\r?\n?$/.test(y.text.slice(yEnd, lineEnd)))
      return {
        reason: `cannot set ${path} byte for byte: its new value is a block scalar and the target environment's line goes on after the old value (a comment); remove the comment, or promote this change by hand`,
      };
    yEnd = lineEnd;
  }
  if (!xEndsLine && yEndsLine) lines.push('');
  const moved = shiftLines(
    lines,
    blockShift(y, view, found.node, after, xView, xNode) ??
      columnOf(y.text, rangeOf(view, yKey)[0]) - columnOf(after.text, rangeOf(xView, xKey)[0]),
  );
  if (!moved)
    return {
      reason: `cannot set ${path}: its new value cannot be moved to the target environment's indentation; promote this change by hand`,
    };
  lines = moved;
  return { start: yStart, end: yEnd, text: lines.join(y.eol), lineAt: 0, shown: describeNode(after, xView, xNode) };
}

/** Column of a block scalar's content (its first line that is not empty), when its header has no indentation digit. */
function blockContentColumn(side: Side, view: DocView, node: unknown): number | undefined {
  if (!isScalar(node) || (node.type !== 'BLOCK_LITERAL' && node.type !== 'BLOCK_FOLDED')) return undefined;
  const [start, end] = rangeOf(view, node);
  const [header, ...rest] = splitLines(side.text.slice(start, end));
  if (header === undefined || /\d/.test(header.replace(/#.*$/, ''))) return undefined;
  const first = rest.find((line) => line.trim() !== '');
  return first === undefined ? undefined : (/^ */.exec(first)?.[0].length ?? 0);
}

/**
 * Y's key has no value (`labels:`, perhaps with a comment) and X's new value is a block map or
 * list on the lines under its key: Y's key line stays whole, X's lines go under it.
 */
function underEmptyKey(
  y: Side,
  view: DocView,
  yPair: Pair,
  after: Side,
  xView: DocView,
  xPair: Pair,
): { start: number; end: number; text: string } | undefined {
  const yValue = yPair.value;
  const xValue = xPair.value;
  if (!isScalar(yValue) || yValue.value !== null || yValue.source !== '' || yValue.tag !== undefined) return undefined;
  if (!isCollection(xValue) || xValue.flow || xValue.items.length === 0 || yValue.anchor) return undefined;
  const xKeyStart = rangeOf(xView, xPair.key as Node)[0];
  const xBody = afterLine(after.text, rangeOf(xView, xPair.key as Node)[1]);
  // The value must start on a later line than the key (it does in block style; `? key` forms do not).
  if (rangeOf(xView, xValue)[0] < xBody) return undefined;
  const xEnd = contentEnd(xView, xValue);
  if (xEnd === undefined) return undefined;
  const yKeyStart = rangeOf(view, yPair.key as Node)[0];
  const lines = splitLines(after.text.slice(xBody, xEnd).replace(/\r?\n$/, ''));
  const moved = shiftLines(['', ...lines], columnOf(y.text, yKeyStart) - columnOf(after.text, xKeyStart));
  if (!moved) return undefined;
  const at = afterLine(y.text, rangeOf(view, yPair.key as Node)[1]);
  const ending = at === y.text.length && !y.text.endsWith('\n');
  const body = moved.slice(1).join(y.eol);
  return { start: at, end: at, text: ending ? `${y.eol}${body}` : `${body}${y.eol}` };
}

/** A block scalar's header without its comment (`|-`, `>+2`), or undefined for another node. */
function blockHeader(side: Side, view: DocView, node: unknown): { indicators: string; bodyStart: number } | undefined {
  if (!isScalar(node) || (node.type !== 'BLOCK_LITERAL' && node.type !== 'BLOCK_FOLDED')) return undefined;
  const [start] = rangeOf(view, node);
  const bodyStart = afterLine(side.text, start);
  return { indicators: side.text.slice(start, bodyStart).replace(/#.*$/s, '').trim(), bodyStart };
}

/**
 * Both values block scalars with the same header: only the lines of the content change, so Y's
 * header line (and a comment on it) stays; X's lines move to Y's content column.
 */
function blockBody(
  y: Side,
  view: DocView,
  yNode: unknown,
  after: Side,
  xView: DocView,
  xNode: unknown,
): { start: number; end: number; text: string } | undefined {
  const yHeader = blockHeader(y, view, yNode);
  const xHeader = blockHeader(after, xView, xNode);
  const shift = blockShift(y, view, yNode, after, xView, xNode);
  if (!yHeader || !xHeader || yHeader.indicators !== xHeader.indicators || shift === undefined) return undefined;
  const yEnd = rangeOf(view, yNode as Node)[1];
  const xEnd = rangeOf(xView, xNode as Node)[1];
  if (y.text.charAt(yEnd - 1) !== '\n' || after.text.charAt(xEnd - 1) !== '\n') return undefined;
  // Every line of the body moves, the first included: shift a leading empty line in front of them.
  const moved = shiftLines(['', ...splitLines(after.text.slice(xHeader.bodyStart, xEnd))], shift);
  if (!moved) return undefined;
  return { start: yHeader.bodyStart, end: yEnd, text: moved.slice(1).join(y.eol) };
}

/** When both values are block scalars: move X's content to Y's content column, so the block keeps Y's indentation. */
function blockShift(
  y: Side,
  view: DocView,
  yNode: unknown,
  after: Side,
  xView: DocView,
  xNode: unknown,
): number | undefined {
  const yColumn = blockContentColumn(y, view, yNode);
  const xColumn = blockContentColumn(after, xView, xNode);
  return yColumn === undefined || xColumn === undefined ? undefined : yColumn - xColumn;
}

function isFlow(node: unknown): boolean {
  return (isMap(node) || isSeq(node)) && node.flow === true;
}

/** Removes a key and its value: its whole lines, or, for the first key on a list item's dash line, up to the next key. */
export function removalOfPair(
  y: Side,
  view: DocView,
  map: YAMLMap,
  pair: Pair,
  path: string,
): Omit<Written, 'lineAt' | 'shown'> | { reason: string } {
  if (map.flow)
    return {
      reason: `cannot remove ${path} byte for byte: it sits in a flow map ({ … }) in the target environment; write the map in block style, or remove the key by hand`,
    };
  const keyStart = rangeOf(view, pair.key as Node)[0];
  if (startsLine(y.text, keyStart)) {
    const end = contentEnd(view, pair.value ?? pair.key) ?? keyStart;
    return { start: lineStart(y.text, keyStart), end: afterLine(y.text, end), text: '' };
  }
  const index = map.items.indexOf(pair);
  const next = map.items[index + 1];
  const nextKey = (next?.key as Node | undefined)?.range?.[0];
  if (index !== 0 || nextKey === undefined)
    return {
      reason: `cannot remove ${path} byte for byte: it shares its line with other text in the target environment; remove it by hand`,
    };
  return { start: keyStart, end: view.offset + nextKey, text: '' };
}

/** Removes a list item: its whole lines in a block list, the item and one separator in a flow list. */
export function removalOfItem(
  y: Side,
  view: DocView,
  seq: YAMLSeq,
  index: number,
  path: string,
): Omit<Written, 'lineAt' | 'shown'> | { reason: string } {
  const items = seq.items as Node[];
  const item = items[index] as Node;
  const [start, end] = rangeOf(view, item);
  if (seq.flow) {
    const next = items[index + 1];
    if (next) return { start, end: rangeOf(view, next)[0], text: '' };
    const prev = items[index - 1];
    if (prev) return { start: rangeOf(view, prev)[1], end, text: '' };
    return { start, end, text: '' };
  }
  const dash = y.text.lastIndexOf('-', start - 1);
  if (dash === -1 || !startsLine(y.text, dash))
    return {
      reason: `cannot remove ${path} byte for byte: the item shares its line with another item or key in the target environment (- - …); remove it by hand`,
    };
  return { start: lineStart(y.text, dash), end: afterLine(y.text, contentEnd(view, item) ?? end), text: '' };
}
