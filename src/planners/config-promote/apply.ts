/**
 * Applying X's change to Y's file, edit by edit, by meaning: an edit applies only where Y holds
 * what X held before; where Y holds its own value, Y keeps it. The result is a list of splices of
 * Y's text (only the changed spans), the edits and kept values a reviewer reads, and the same
 * operations as data for the proof (`prove.ts`).
 *
 * 1. find the document the change is in (by identity, or Y's only one)
 * 2. walk the path in Y: keys by name, list items by identity; refuse aliases, merge keys and
 *    anchors whose aliases would change too
 * 3. compare Y's value with X's before and after, then set, add or remove (`write.ts`), or keep
 */
import { isAlias, isMap, isPair, isScalar, isSeq, type Node, type Pair, type YAMLMap, type YAMLSeq } from 'yaml';
import { splitDocuments } from '../image-edit/source.js';
import { formatPath, type Change, type Step } from './extract.js';
import { documentIdentity, type ListRule } from './list-identity.js';
import {
  anchorsAndAliases,
  contentEnd,
  dataOf,
  describeNode,
  keyText,
  sameData,
  type DocView,
  type Side,
} from './read.js';
import {
  insertAt,
  itemLines,
  pairLines,
  removalOfItem,
  removalOfPair,
  replacementOfValue,
  renderItemScalar,
  type Written,
} from './write.js';
import { afterLine, columnOf, lineStart, startsLine } from './text.js';
import type { ConfigEdit, ConfigRefusal, KeptValue } from './types.js';

/** A change of Y's text, with the edit it reports (its line is read from the new text). */
export interface PlannedSplice {
  start: number;
  end: number;
  text: string;
  /** Where the reported line is: an offset into `text` (new text), or `before`: at `start` in Y's text before. */
  lineAt: number | 'before';
  edit: Omit<ConfigEdit, 'line'>;
}

/** The same operations on data, for the proof. */
export type DataOp =
  | { kind: 'set' | 'add'; doc: number; steps: Step[]; value: unknown; prev?: Step | null }
  | { kind: 'remove'; doc: number; steps: Step[] }
  | { kind: 'add-document'; after: string | undefined; value: unknown }
  | { kind: 'remove-document'; doc: number };

export interface Applied {
  splices: PlannedSplice[];
  kept: KeptValue[];
  refusals: ConfigRefusal[];
  ops: DataOp[];
}

type Found =
  | { status: 'found'; node: unknown; pair?: Pair; parent?: YAMLMap | YAMLSeq; index?: number }
  | { status: 'absent'; node: unknown; depth: number }
  | { status: 'other'; node: unknown; depth: number }
  | { status: 'refused'; node: unknown; reason: string };

/** One insertion already planned in a map or list of Y, for the items X put after it. */
interface Inserted {
  at: number;
  /** In a flow list: whether the insertion went before the first item (`b, `) rather than after one (`, b`). */
  leading?: boolean;
}

function stepName(step: Step): string {
  return 'item' in step ? `i:${step.item.id}` : `k:${step.key}`;
}

export class Applier {
  readonly result: Applied = { splices: [], kept: [], refusals: [], ops: [] };
  private readonly inserted = new Map<unknown, Map<string, Inserted>>();
  private readonly removed = new Map<unknown, number>();
  private readonly identities = new Map<YAMLSeq, Map<ListRule, Map<string, number[]>>>();
  private readonly docs = new Map<string, DocView>();
  private readonly single: DocView | undefined;

  constructor(
    private readonly y: Side,
    private readonly before: Side,
    private readonly after: Side,
    byIdentity: boolean,
  ) {
    const views = y.docs.filter((view) => view.doc.contents !== null);
    if (byIdentity) {
      for (const view of views) {
        const id = documentIdentity(dataOf(view, view.doc.contents));
        if (!id) continue;
        // Two documents with one identity: neither can be chosen; a change that needs one is refused.
        this.docs.set(id.id, this.docs.has(id.id) ? (null as unknown as DocView) : view);
      }
    } else this.single = views.length === 1 ? views[0] : undefined;
  }

  /** The items of a Y list by identity, read once per list and rule (a long list is read once, not once per edit). */
  private indexesOf(view: DocView, seq: YAMLSeq, rule: ListRule): Map<string, number[]> {
    const byRule = this.identities.get(seq) ?? new Map<ListRule, Map<string, number[]>>();
    this.identities.set(seq, byRule);
    let index = byRule.get(rule);
    if (!index) {
      const built = new Map<string, number[]>();
      seq.items.forEach((item, i) => {
        const id = rule.identify(dataOf(view, item))?.id;
        if (id !== undefined) built.set(id, [...(built.get(id) ?? []), i]);
      });
      byRule.set(rule, built);
      index = built;
    }
    return index;
  }

  private lineOf(view: DocView, node: unknown): number {
    const target = isPair(node) ? node.key : node;
    const start = (target as Node | null)?.range?.[0];
    return this.y.lines.lineAt(view.offset + (start ?? 0));
  }

  private refuse(view: DocView | undefined, node: unknown, reason: string): void {
    this.result.refusals.push({ file: 'target', line: view ? this.lineOf(view, node) : 1, reason });
  }

  private keep(change: Change, view: DocView | undefined, node: unknown, absent: boolean): void {
    const kept: KeptValue = {
      path: formatPath(change.doc, change.steps),
      target: absent || !view ? '' : describeNode(this.y, view, node),
      line: view ? this.lineOf(view, node) : 1,
    };
    if (change.before) kept.sourceBefore = describeNode(this.before, change.before.view, change.before.node);
    if (change.after) kept.sourceAfter = describeNode(this.after, change.after.view, change.after.node);
    if (absent) kept.absent = true;
    this.result.kept.push(kept);
  }

  /** Walks `steps` from the root of `view`. */
  private find(view: DocView, steps: readonly Step[]): Found {
    let node: unknown = view.doc.contents;
    let pair: Pair | undefined;
    let parent: YAMLMap | YAMLSeq | undefined;
    let index: number | undefined;
    for (const [depth, step] of steps.entries()) {
      const where = formatPath({}, steps.slice(0, depth));
      if (isAlias(node))
        return {
          status: 'refused',
          node,
          reason: `${where} is the alias *${node.source} here, so an edit under it would change the anchored value it names too; write the value out, or promote this change by hand`,
        };
      if ('key' in step) {
        if (!isMap(node)) return { status: 'other', node, depth };
        const found = node.items.find((item) => keyText(item.key) === step.key);
        if (!found) {
          if (node.items.some((item) => keyText(item.key) === '<<'))
            return {
              status: 'refused',
              node,
              reason: `${where} merges other keys in with <<, so whether it holds ${step.key} depends on the merged map; write the key out, or promote this change by hand`,
            };
          return { status: 'absent', node, depth };
        }
        parent = node;
        pair = found;
        index = undefined;
        node = found.value;
      } else {
        if (!isSeq(node)) return { status: 'other', node, depth };
        const matches = this.indexesOf(view, node, step.rule).get(step.item.id) ?? [];
        if (matches.length === 0) return { status: 'absent', node, depth };
        if (matches.length > 1)
          return {
            status: 'refused',
            node: node.items[matches[1] as number],
            reason: `${where} holds two items with ${step.item.label}, so which one X's change is about is ambiguous; remove the duplicate first`,
          };
        parent = node;
        pair = undefined;
        index = matches[0] as number;
        node = node.items[index];
      }
      const anchor = (node as { anchor?: string } | null)?.anchor;
      if (anchor && view.aliased.has(anchor))
        return {
          status: 'refused',
          node: pair ?? node,
          reason: `${formatPath({}, steps.slice(0, depth + 1))} carries the anchor &${anchor}, which an alias repeats elsewhere, so editing it or under it would change that copy too; write the values out, or promote this change by hand`,
        };
    }
    const result: Found = { status: 'found', node };
    if (pair) result.pair = pair;
    if (parent) result.parent = parent;
    if (index !== undefined) result.index = index;
    return result;
  }

  /** Refuses a Y node whose anchors are aliased elsewhere: changing or removing it would change those too. */
  private aliasedInside(view: DocView, node: unknown, path: string): string | undefined {
    const { anchors } = anchorsAndAliases(node);
    const used = anchors.find((anchor) => view.aliased.has(anchor));
    if (used === undefined) return undefined;
    return `${path} in the target environment holds the anchor &${used}, which an alias repeats elsewhere, so changing it would change that copy too; write the values out, or promote this change by hand`;
  }

  /** Refuses an X value that uses anchors or aliases: its text cannot be copied into Y on its own. */
  private copyProblem(change: Change, path: string): string | undefined {
    const node = change.after?.node;
    const { anchors, aliases } = anchorsAndAliases(node);
    if (anchors.length === 0 && aliases.length === 0) return undefined;
    return `the new value of ${path} uses ${aliases.length > 0 ? `the alias *${aliases[0] ?? ''}` : `the anchor &${anchors[0] ?? ''}`}, which cannot be copied into another file on its own; write the value out in the source environment, or promote this change by hand`;
  }

  private docOf(change: Change): DocView | undefined | null {
    if (!change.doc.id) return this.single;
    return this.docs.get(change.doc.id.id);
  }

  apply(change: Change): void {
    const path = formatPath(change.doc, change.steps);
    if (change.document) {
      this.applyDocument(change, path);
      return;
    }
    const view = this.docOf(change);
    if (view === null) {
      this.refuse(
        undefined,
        undefined,
        `the target environment's file has two documents for ${change.doc.id?.label ?? ''}, so which one to edit is ambiguous; remove the duplicate first`,
      );
      return;
    }
    if (!view) {
      if (change.kind !== 'remove') this.keep(change, undefined, undefined, true);
      return;
    }
    const target = change.kind === 'add' ? change.steps.slice(0, -1) : change.steps;
    const found = this.find(view, target);
    if (found.status === 'refused') {
      this.refuse(view, found.node, found.reason);
      return;
    }
    if (found.status !== 'found') {
      if (change.kind !== 'remove') this.keep(change, view, found.node, found.status === 'absent');
      return;
    }
    if (change.kind === 'set') this.set(change, view, found, path);
    else if (change.kind === 'remove') this.remove(change, view, found, path);
    else this.add(change, view, found.node, path);
  }

  private set(change: Change, view: DocView, found: Found & { status: 'found' }, path: string): void {
    const now = dataOf(view, found.node);
    const after = change.after as { view: DocView; node: unknown };
    if (sameData(now, dataOf(after.view, after.node))) return;
    if (!sameData(now, dataOf((change.before as { view: DocView }).view, change.before?.node))) {
      this.keep(change, view, found.node, false);
      return;
    }
    const problem = this.aliasedInside(view, found.node, path) ?? this.copyProblem(change, path);
    if (problem) {
      this.refuse(view, found.pair ?? found.node, problem);
      return;
    }
    const written = replacementOfValue(this.y, view, found, this.after, change, path);
    if ('reason' in written) {
      this.refuse(view, found.pair ?? found.node, written.reason);
      return;
    }
    this.result.splices.push({
      ...written,
      edit: { path, kind: 'set', from: describeNode(this.y, view, found.node), to: written.shown },
    });
    this.result.ops.push({ kind: 'set', doc: view.index, steps: change.steps, value: dataOf(after.view, after.node) });
  }

  private remove(change: Change, view: DocView, found: Found & { status: 'found' }, path: string): void {
    const before = change.before as { view: DocView; node: unknown };
    if (!sameData(dataOf(view, found.node), dataOf(before.view, before.node))) {
      this.keep(change, view, found.node, false);
      return;
    }
    const problem = this.aliasedInside(view, found.node, path);
    if (problem) {
      this.refuse(view, found.pair ?? found.node, problem);
      return;
    }
    const parent = found.parent as YAMLMap | YAMLSeq;
    const count = (this.removed.get(parent) ?? 0) + 1;
    this.removed.set(parent, count);
    if (count >= parent.items.length + (this.inserted.get(parent)?.size ?? 0) && !(isSeq(parent) && parent.flow)) {
      this.refuse(
        view,
        found.pair ?? found.node,
        `removing ${path} would leave ${formatPath(change.doc, change.steps.slice(0, -1))} empty in the target environment, and an empty block ${isSeq(parent) ? 'list' : 'map'} reads as null, not as empty; remove or empty it by hand`,
      );
      return;
    }
    const written = found.pair
      ? removalOfPair(this.y, view, parent as YAMLMap, found.pair, path)
      : removalOfItem(this.y, view, parent as YAMLSeq, found.index as number, path);
    if ('reason' in written) {
      this.refuse(view, found.pair ?? found.node, written.reason);
      return;
    }
    this.result.splices.push({
      ...written,
      lineAt: 'before',
      edit: { path, kind: 'remove', from: describeNode(this.y, view, found.node) },
    });
    this.result.ops.push({ kind: 'remove', doc: view.index, steps: change.steps });
  }

  private add(change: Change, view: DocView, parent: unknown, path: string): void {
    const step = change.steps[change.steps.length - 1] as Step;
    const after = change.after as { view: DocView; node: unknown };
    const wanted = dataOf(after.view, after.node);
    const existing = this.find(view, change.steps);
    if (existing.status === 'refused') {
      this.refuse(view, existing.node, existing.reason);
      return;
    }
    if (existing.status === 'found') {
      if (!sameData(dataOf(view, existing.node), wanted)) this.keep(change, view, existing.node, false);
      return;
    }
    if (existing.status === 'other') {
      this.keep(change, view, existing.node, false);
      return;
    }
    const problem = this.copyProblem(change, path);
    if (problem) {
      this.refuse(view, parent, problem);
      return;
    }
    const container = parent as YAMLMap | YAMLSeq;
    const planned = this.inserted.get(container) ?? new Map<string, Inserted>();
    this.inserted.set(container, planned);
    const written =
      'key' in step
        ? this.addKey(change, view, container as YAMLMap, planned, path)
        : this.addItem(change, view, container as YAMLSeq, planned, path);
    if ('reason' in written) {
      this.refuse(view, container, written.reason);
      return;
    }
    planned.set(stepName(step), written.inserted);
    this.result.splices.push({ ...written, edit: { path, kind: 'add', to: written.shown } });
    this.result.ops.push({
      kind: 'add',
      doc: view.index,
      steps: change.steps,
      value: wanted,
      prev: change.prev ?? null,
    });
  }

  /** Where an insertion goes: after X's preceding sibling if Y has it (or it was just inserted), else `fallback`. */
  private placeAfter(
    planned: Map<string, Inserted>,
    prev: Step | null | undefined,
    inY: (step: Step) => number | undefined,
  ): Inserted | undefined {
    if (!prev) return undefined;
    const pending = planned.get(stepName(prev));
    if (pending) return pending;
    const at = inY(prev);
    return at === undefined ? undefined : { at };
  }

  private addKey(
    change: Change,
    view: DocView,
    map: YAMLMap,
    planned: Map<string, Inserted>,
    path: string,
  ): (Written & { inserted: Inserted }) | { reason: string } {
    if (map.flow)
      return {
        reason: `${formatPath(change.doc, change.steps.slice(0, -1))} is written as a flow map ({ … }) in the target environment, where a new key cannot be added without rewriting it; write it in block style, or add ${path} by hand`,
      };
    const first = map.items[0];
    const firstKey = (first?.key as Node | undefined)?.range?.[0];
    if (firstKey === undefined)
      return {
        reason: `${formatPath(change.doc, change.steps.slice(0, -1))} is empty in the target environment; add ${path} by hand`,
      };
    const text = this.y.text;
    const column = columnOf(text, view.offset + firstKey);
    const lines = pairLines(this.after, change, column);
    if ('reason' in lines) return lines;
    const firstAt = view.offset + firstKey;
    // X put it first: before Y's first key, unless that key shares the line of a list item's dash.
    const leading = change.prev === null && startsLine(text, firstAt) ? { at: lineStart(text, firstAt) } : undefined;
    const place = leading ??
      this.placeAfter(planned, change.prev, (prev) => {
        if (!('key' in prev)) return undefined;
        const pair = map.items.find((item) => keyText(item.key) === prev.key);
        return pair ? this.afterContent(view, pair) : undefined;
      }) ?? { at: this.afterContent(view, map.items[map.items.length - 1] as Pair) };
    const written = insertAt(this.y, place.at, lines.lines, lines.shown);
    return { ...written, inserted: { at: place.at } };
  }

  private afterContent(view: DocView, node: unknown): number {
    const end = contentEndOf(view, node);
    return afterLine(this.y.text, end);
  }

  private addItem(
    change: Change,
    view: DocView,
    seq: YAMLSeq,
    planned: Map<string, Inserted>,
    path: string,
  ): (Written & { inserted: Inserted }) | { reason: string } {
    const after = change.after as { view: DocView; node: unknown };
    const text = this.y.text;
    const identify = (prev: Step): number | undefined => {
      if (!('item' in prev)) return undefined;
      return this.indexesOf(view, seq, prev.rule).get(prev.item.id)?.[0];
    };
    if (seq.flow) {
      if (!isScalar(after.node))
        return {
          reason: `${formatPath(change.doc, change.steps.slice(0, -1))} is written as a flow list ([ … ]) in the target environment, where a new map item cannot be added byte for byte; write it in block style, or add ${path} by hand`,
        };
      const sample = seq.items.find((item) => isScalar(item));
      const rendered = renderItemScalar(this.after, after.view, after.node, sample);
      if ('reason' in rendered) return { reason: `${path}: ${rendered.reason}` };
      const pending = change.prev ? planned.get(stepName(change.prev)) : undefined;
      if (pending) {
        const text2 = pending.leading ? `${rendered.text}, ` : `, ${rendered.text}`;
        return {
          start: pending.at,
          end: pending.at,
          text: text2,
          lineAt: pending.leading ? 0 : 2,
          shown: rendered.text,
          inserted: pending,
        };
      }
      const prevIndex = change.prev ? identify(change.prev) : undefined;
      const items = seq.items as Node[];
      if (items.length === 0) {
        const open = view.offset + (seq.range?.[0] ?? 0) + 1;
        return {
          start: open,
          end: open,
          text: rendered.text,
          lineAt: 0,
          shown: rendered.text,
          inserted: { at: open, leading: true },
        };
      }
      if (change.prev === null) {
        const at = view.offset + ((items[0] as Node).range?.[0] ?? 0);
        return {
          start: at,
          end: at,
          text: `${rendered.text}, `,
          lineAt: 0,
          shown: rendered.text,
          inserted: { at, leading: true },
        };
      }
      const anchorItem = items[prevIndex ?? items.length - 1] as Node;
      const at = view.offset + (anchorItem.range?.[1] ?? 0);
      return { start: at, end: at, text: `, ${rendered.text}`, lineAt: 2, shown: rendered.text, inserted: { at } };
    }
    const firstItem = seq.items[0] as Node | undefined;
    const firstStart = firstItem?.range?.[0];
    if (firstStart === undefined)
      return {
        reason: `${formatPath(change.doc, change.steps.slice(0, -1))} is empty in the target environment; add ${path} by hand`,
      };
    const dash = text.lastIndexOf('-', view.offset + firstStart - 1);
    if (dash === -1 || !startsLine(text, dash))
      return {
        reason: `the list ${formatPath(change.doc, change.steps.slice(0, -1))} starts on the line of another item or key in the target environment (- - …); write each item on its own line, or add ${path} by hand`,
      };
    const dashColumn = columnOf(text, dash);
    const contentColumn =
      lineStart(text, dash) === lineStart(text, view.offset + firstStart)
        ? columnOf(text, view.offset + firstStart)
        : dashColumn + 2;
    const lines = itemLines(
      this.after,
      after.view,
      after.node,
      dashColumn,
      contentColumn,
      seq.items.find((item) => isScalar(item)),
    );
    if ('reason' in lines) return { reason: `${path}: ${lines.reason}` };
    let place: Inserted | undefined;
    if (change.prev === null) place = { at: lineStart(text, dash) };
    else
      place = this.placeAfter(planned, change.prev, (prev) => {
        const i = identify(prev);
        return i === undefined ? undefined : this.afterContent(view, seq.items[i]);
      });
    place ??= { at: this.afterContent(view, seq.items[seq.items.length - 1]) };
    const written = insertAt(this.y, place.at, lines.lines, lines.shown);
    return { ...written, inserted: { at: place.at } };
  }

  private applyDocument(change: Change, path: string): void {
    const id = change.doc.id;
    if (!id) return;
    const view = this.docs.get(id.id);
    if (view === null) {
      this.refuse(
        undefined,
        undefined,
        `the target environment's file has two documents for ${id.label}, so which one X's change is about is ambiguous; remove the duplicate first`,
      );
      return;
    }
    const chunks = splitDocuments(this.y.text);
    if (change.kind === 'remove') {
      if (!view) return;
      const before = change.before as { view: DocView; node: unknown };
      if (!sameData(dataOf(view, view.doc.contents), dataOf(before.view, before.node))) {
        this.keep(change, view, view.doc.contents, false);
        return;
      }
      const chunk = chunks?.find((one) => one.index === view.index);
      if (!chunks || !chunk) {
        this.refuse(
          view,
          view.doc.contents,
          `the target environment's file uses YAML directives (%…) or document end markers (...), so the document ${id.label} cannot be cut out byte for byte; remove it by hand`,
        );
        return;
      }
      if (
        this.y.docs.filter((one) => one.doc.contents !== null).length -
          this.result.ops.filter((op) => op.kind === 'remove-document').length <=
        1
      ) {
        this.refuse(
          view,
          view.doc.contents,
          `removing ${id.label} would leave the target environment's file without documents; delete the file by hand if that is intended`,
        );
        return;
      }
      this.result.splices.push({
        start: chunk.start,
        end: chunk.end,
        text: '',
        lineAt: 'before',
        edit: { path, kind: 'remove', from: id.label },
      });
      this.result.ops.push({ kind: 'remove-document', doc: view.index });
      return;
    }
    const after = change.after as { view: DocView; node: unknown };
    if (view) {
      if (!sameData(dataOf(view, view.doc.contents), dataOf(after.view, after.node)))
        this.keep(change, view, view.doc.contents, false);
      return;
    }
    const source = splitDocuments(this.after.text)?.find((one) => one.index === after.view.index);
    if (!chunks || !source) {
      this.refuse(
        undefined,
        undefined,
        `the target environment's file or the source environment's file uses YAML directives (%…) or document end markers (...), so the document ${id.label} cannot be added byte for byte; add it by hand`,
      );
      return;
    }
    let body = this.after.text.slice(source.start, source.end).replace(/^\uFEFF/, '');
    const marker = /^---[ \t]*(?:#[^\n]*)?\r?\n/.exec(body);
    if (marker) body = body.slice(marker[0].length);
    else if (body.startsWith('---')) {
      this.refuse(
        undefined,
        undefined,
        `the new document ${id.label} starts on its --- line in the source environment's file; put it on the next line, or add it by hand`,
      );
      return;
    }
    const lines = body.split(/\r?\n/);
    if (lines[lines.length - 1] === '') lines.pop();
    const planned = this.inserted.get(this) ?? new Map<string, Inserted>();
    this.inserted.set(this, planned);
    const prevView = change.prev && 'key' in change.prev ? this.docs.get(change.prev.key) : undefined;
    const pending = change.prev ? planned.get(stepName(change.prev)) : undefined;
    const prevChunk = prevView ? chunks.find((one) => one.index === prevView.index) : undefined;
    const at = pending?.at ?? prevChunk?.end ?? this.y.text.length;
    const written = insertAt(this.y, at, ['---', ...lines], id.label);
    planned.set(stepName({ key: id.id }), { at });
    this.result.splices.push({
      ...written,
      lineAt: written.lineAt + 3 + this.y.eol.length,
      edit: { path, kind: 'add', to: id.label },
    });
    this.result.ops.push({
      kind: 'add-document',
      after: change.prev && 'key' in change.prev ? change.prev.key : undefined,
      value: dataOf(after.view, after.node),
    });
  }
}

function contentEndOf(view: DocView, node: unknown): number {
  if (isPair(node)) return contentEndOf(view, node.value ?? node.key);
  return contentEndNode(view, node);
}

function contentEndNode(view: DocView, node: unknown): number {
  return contentEnd(view, node) ?? view.offset;
}
