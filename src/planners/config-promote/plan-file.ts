/**
 * One file of a configuration promotion, three-way: X's file before and after the change, Y's
 * file now.
 *
 * 1. a file X created or deleted: create it in Y, delete it from Y, or refuse (see the outcomes)
 * 2. read the three texts; refuse what cannot be read
 * 3. read X's change as edits to YAML paths (`extract.ts`)
 * 4. apply each edit to Y where Y holds what X held before, keep Y's own values (`apply.ts`)
 * 5. splice Y's text, re-read it and prove that only the planned values changed (`prove.ts`)
 */
import { applySplices } from '../text.js';
import { Applier, type PlannedSplice } from './apply.js';
import { extractChanges } from './extract.js';
import { proveApplied } from './prove.js';
import { dataOf, readSide, sameData, type Side } from './read.js';
import { LineIndex } from './text.js';
import type { ConfigEdit, ConfigFileInput, ConfigFilePlan, ConfigRefusal } from './types.js';

function refused(path: string, refusals: ConfigRefusal[]): ConfigFilePlan {
  return { path, outcome: 'refused', edits: [], kept: [], refusals };
}

/** A file refused as a whole for one reason about Y (a missing folder, a planner fault), nothing written. */
export function refusedFile(path: string, reason: string): ConfigFilePlan {
  return refused(path, [{ file: 'target', line: 1, reason }]);
}

function plain(path: string, outcome: ConfigFilePlan['outcome'], text?: string): ConfigFilePlan {
  const plan: ConfigFilePlan = { path, outcome, edits: [], kept: [], refusals: [] };
  if (text !== undefined) plan.text = text;
  return plan;
}

/** The data of every document that is not empty, in order. */
function documentsData(side: Side): unknown[] {
  return side.docs.filter((view) => view.doc.contents !== null).map((view) => dataOf(view, view.doc.contents));
}

/** Reads each given text; the refusals of all of them, or the sides. */
function readAll(texts: Array<[string, ConfigRefusal['file']]>): Side[] | ConfigRefusal[] {
  const sides = texts.map(([text, name]) => readSide(text, name));
  const problems = sides.flatMap((side) => side.refusals);
  return problems.length > 0 ? problems : sides;
}

function isRefusals(value: Side[] | ConfigRefusal[]): value is ConfigRefusal[] {
  return value.length > 0 && 'reason' in (value[0] as object);
}

/** Insertions before replacements at one offset, each kind in plan order; undefined when two overlap. */
function ordered(splices: readonly PlannedSplice[]): Array<{ splice: PlannedSplice; order: number }> | undefined {
  const list = splices
    .map((splice, order) => ({ splice, order }))
    .sort(
      (a, b) =>
        a.splice.start - b.splice.start ||
        Number(a.splice.end > a.splice.start) - Number(b.splice.end > b.splice.start) ||
        a.order - b.order,
    );
  for (let i = 1; i < list.length; i += 1) {
    const prev = (list[i - 1] as { splice: PlannedSplice }).splice;
    if ((list[i] as { splice: PlannedSplice }).splice.start < prev.end) return undefined;
  }
  return list;
}

function internal(path: string, what: string): ConfigFilePlan {
  return refused(path, [
    {
      file: 'target',
      line: 1,
      reason: `internal error: ${what}; the file was left untouched, please report this (promote this file by hand meanwhile)`,
    },
  ]);
}

/** Plans one file (see the module comment). */
export function planConfigFile(file: ConfigFileInput): ConfigFilePlan {
  const { path, sourceBefore, sourceAfter, target } = file;
  if (sourceBefore === undefined && sourceAfter === undefined) return plain(path, 'unchanged');
  if (sourceBefore === undefined) {
    const sides = readAll(
      target === undefined
        ? [[sourceAfter as string, 'sourceAfter']]
        : [
            [sourceAfter as string, 'sourceAfter'],
            [target, 'target'],
          ],
    );
    if (isRefusals(sides)) return refused(path, sides);
    if (target === undefined) return plain(path, 'created', sourceAfter);
    if (sameData(documentsData(sides[0] as Side), documentsData(sides[1] as Side))) return plain(path, 'unchanged');
    return refused(path, [
      {
        file: 'target',
        line: 1,
        reason: `the source environment created ${path}, and the target environment already has its own ${path} with other values; there is no common version to compare them with, so make them agree by hand`,
      },
    ]);
  }
  if (sourceAfter === undefined) {
    if (target === undefined) return plain(path, 'unchanged');
    const sides = readAll([
      [sourceBefore, 'sourceBefore'],
      [target, 'target'],
    ]);
    if (isRefusals(sides)) return refused(path, sides);
    if (sameData(documentsData(sides[0] as Side), documentsData(sides[1] as Side))) return plain(path, 'deleted');
    return refused(path, [
      {
        file: 'target',
        line: 1,
        reason: `the source environment deleted ${path}, but the target environment's ${path} holds its own values (it differs from the source's file before the deletion); delete it by hand if those values are no longer needed`,
      },
    ]);
  }
  if (target === undefined) {
    return refused(path, [
      {
        file: 'target',
        line: 1,
        reason: `the source environment changed ${path}, which the target environment does not have; add the file to the target environment by hand (copy it from the source) if it should have it`,
      },
    ]);
  }
  const sides = readAll([
    [sourceBefore, 'sourceBefore'],
    [sourceAfter, 'sourceAfter'],
    [target, 'target'],
  ]);
  if (isRefusals(sides)) return refused(path, sides);
  const [before, after, y] = sides as [Side, Side, Side];
  const extracted = extractChanges(before, after, y);
  if (extracted.refusals.length > 0) return refused(path, extracted.refusals);
  if (extracted.changes.length === 0) return plain(path, 'unchanged');
  const applier = new Applier(y, before, after, extracted.byIdentity);
  for (const change of extracted.changes) applier.apply(change);
  const { splices, kept, refusals, ops } = applier.result;
  if (refusals.length > 0) return refused(path, refusals);
  if (splices.length === 0)
    return { path, outcome: kept.length > 0 ? 'kept' : 'unchanged', edits: [], kept, refusals: [] };
  const order = ordered(splices);
  if (!order) return internal(path, "two planned edits overlap in the target environment's text");
  const spliced = applySplices(
    target,
    order.map(({ splice }) => splice),
  );
  const problem = proveApplied(y, ops, spliced.text);
  if (problem) return internal(path, `the edited text did not verify (${problem})`);
  const lines = new LineIndex(spliced.text);
  const edits: ConfigEdit[] = new Array<ConfigEdit>(splices.length);
  order.forEach(({ splice, order: index }, position) => {
    const line =
      splice.lineAt === 'before'
        ? y.lines.lineAt(splice.start)
        : lines.lineAt((spliced.starts[position] as number) + splice.lineAt);
    edits[index] = { ...splice.edit, line };
  });
  return { path, outcome: 'edited', text: spliced.text, edits, kept, refusals: [] };
}
