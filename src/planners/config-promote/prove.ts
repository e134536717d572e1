/**
 * The proof after the splices (as the image editor's `verify.ts`, and Renovate's re-extraction
 * after `auto-replace`): Y's new text must parse to Y's old data with exactly the planned
 * operations applied — computed here on data, by a second walk that shares nothing with the
 * writer but the identity rules. Anything else (a shifted key, a value that now reads as a
 * number, a broken document, a list item in another place) refuses the file.
 */
import type { DataOp } from './apply.js';
import type { Step } from './extract.js';
import { documentIdentity } from './list-identity.js';
import { dataOf, readSide, sameData, type Side } from './read.js';

interface ExpectedDoc {
  index?: number;
  data: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Each list's items by identity, read once per list and rule while the list keeps its items (an
 * insertion or removal forgets it): a long list read once, not once per edit.
 */
const identities = new WeakMap<unknown[], Map<unknown, Map<string, unknown>>>();

function itemById(list: unknown[], step: Extract<Step, { rule: unknown }>): unknown {
  const byRule = identities.get(list) ?? new Map<unknown, Map<string, unknown>>();
  identities.set(list, byRule);
  let index = byRule.get(step.rule);
  if (!index) {
    index = new Map<string, unknown>();
    for (const item of list) {
      const id = step.rule.identify(item)?.id;
      if (id !== undefined && !index.has(id)) index.set(id, item);
    }
    byRule.set(step.rule, index);
  }
  return index.has(step.item.id) ? index.get(step.item.id) : NOT_FOUND;
}

const NOT_FOUND = Symbol('not found');

function child(node: unknown, step: Step): { container: unknown; at: string | number } | undefined {
  if ('key' in step) return isRecord(node) ? { container: node, at: step.key } : undefined;
  if (!Array.isArray(node)) return undefined;
  const item = itemById(node, step);
  return { container: node, at: item === NOT_FOUND ? -1 : node.indexOf(item) };
}

type PathOp = Extract<DataOp, { steps: Step[] }>;

/** Applies one operation to a document's data; undefined when the path is not there. */
function applyOp(data: unknown, op: PathOp): { data: unknown } | undefined {
  const value = op.kind === 'remove' ? undefined : structuredClone(op.value);
  if (op.steps.length === 0) return op.kind === 'set' ? { data: value } : undefined;
  let node = data;
  for (const step of op.steps.slice(0, -1)) {
    const next = child(node, step);
    if (!next || next.at === -1) return undefined;
    node = (next.container as Record<string | number, unknown>)[next.at];
  }
  const last = op.steps[op.steps.length - 1] as Step;
  const place = child(node, last);
  if (!place) return undefined;
  if ('key' in last) {
    const map = place.container as Record<string, unknown>;
    if (op.kind === 'remove') delete map[last.key];
    else map[last.key] = value;
    return { data };
  }
  const list = place.container as unknown[];
  if (op.kind === 'set' || op.kind === 'remove') {
    if (place.at === -1) return undefined;
    if (op.kind === 'set') {
      list[place.at as number] = value;
      // The same item, new value: its identity is the step's (the extractor matched it by it).
      identities.get(list)?.get(last.rule)?.set(last.item.id, value);
    } else {
      list.splice(place.at as number, 1);
      identities.delete(list);
    }
    return { data };
  }
  const prev = op.kind === 'add' ? op.prev : undefined;
  if (prev === null) list.splice(0, 0, value);
  else {
    const after = prev ? child(list, prev) : undefined;
    if (after && after.at !== -1) list.splice((after.at as number) + 1, 0, value);
    else list.push(value);
  }
  identities.delete(list);
  return { data };
}

/** What is wrong with `newText`, or undefined when it holds exactly Y's data with `ops` applied. */
export function proveApplied(y: Side, ops: readonly DataOp[], newText: string): string | undefined {
  const expected: ExpectedDoc[] = y.docs
    .filter((view) => view.doc.contents !== null)
    .map((view) => ({ index: view.index, data: dataOf(view, view.doc.contents) }));
  for (const op of ops) {
    if (op.kind === 'add-document') {
      const at = op.after === undefined ? -1 : expected.findIndex((doc) => documentIdentity(doc.data)?.id === op.after);
      if (at === -1) expected.push({ data: structuredClone(op.value) });
      else expected.splice(at + 1, 0, { data: structuredClone(op.value) });
      continue;
    }
    const at = expected.findIndex((doc) => doc.index === op.doc);
    const doc = expected[at];
    if (!doc) return 'a planned edit is in a document that is not there';
    if (op.kind === 'remove-document') {
      expected.splice(at, 1);
      continue;
    }
    const result = applyOp(doc.data, op);
    if (!result) return 'a planned edit did not find its path in the data';
    doc.data = result.data;
  }
  const reread: Side = readSide(newText, 'target');
  const problem = reread.refusals[0];
  if (problem) return `the new text does not read back (${problem.reason})`;
  const actual = reread.docs.filter((view) => view.doc.contents !== null);
  if (actual.length !== expected.length)
    return `the new text has ${actual.length} documents instead of ${expected.length}`;
  for (const [i, view] of actual.entries()) {
    if (!sameData(dataOf(view, view.doc.contents), (expected[i] as ExpectedDoc).data))
      return `document ${i + 1} does not hold the expected values (something other than the planned edits changed)`;
  }
  return undefined;
}
