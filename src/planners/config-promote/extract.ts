/**
 * X's change as a set of edits to YAML paths, read from X's file before and after: a value set,
 * a key added or removed, a list item added, changed or removed (items matched by
 * `list-identity.ts`), a document added or removed. Reordering alone is not a change (maps have
 * no order in meaning; list order follows Y's). What cannot be read as such edits is refused.
 */
import { isMap, isPair, isScalar, isSeq, type Node, type Pair, type YAMLMap, type YAMLSeq } from 'yaml';
import { documentIdentity, identifyAll, listRule, type Identity, type ListRule } from './list-identity.js';
import { dataOf, keyText, sameData, type DocView, type Side } from './read.js';
import type { ConfigRefusal } from './types.js';

/** One step of a path: a map key, or a list item by its identity under `rule`. */
export type Step = { key: string } | { item: Identity; rule: ListRule };

/** Which document a change is in: by identity in a multi-document file, else the only one. */
export interface DocRef {
  id?: Identity;
}

/** One edit of X's change. */
export interface Change {
  kind: 'set' | 'add' | 'remove';
  doc: DocRef;
  /** The path of the value set, added or removed (empty with `document`: the document itself). */
  steps: Step[];
  /** X's value before (set, remove) and after (set, add), as nodes of X's documents. */
  before?: { view: DocView; node: unknown };
  after?: { view: DocView; node: unknown };
  /** For a key: the pair in X after (set, add), whose text an insertion copies. */
  afterPair?: Pair;
  /** For an add: the step X put just before it (`null`: it is first). */
  prev?: Step | null;
  /** A whole document added or removed. */
  document?: boolean;
}

export interface Extracted {
  changes: Change[];
  refusals: ConfigRefusal[];
  /** Documents are paired by identity (several documents) or by position (one each). */
  byIdentity: boolean;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** `spec.template.spec.containers[name=app].env[name=LOG_LEVEL].value`, with `[Deployment/app]` first in multi-document files. */
export function formatPath(doc: DocRef, steps: readonly Step[]): string {
  let result = doc.id ? `[${doc.id.label}]` : '';
  for (const step of steps) {
    if ('item' in step) result += `[${step.item.label}]`;
    else if (IDENTIFIER.test(step.key)) result += result === '' ? step.key : `.${step.key}`;
    else result += `[${JSON.stringify(step.key)}]`;
  }
  return result === '' ? '(the document)' : result;
}

class Extractor {
  readonly changes: Change[] = [];
  readonly refusals: ConfigRefusal[] = [];

  constructor(
    private readonly before: Side,
    private readonly after: Side,
  ) {}

  private refuse(view: DocView, node: unknown, reason: string): void {
    const start = isPair(node) ? (node.key as Node | null)?.range?.[0] : (node as Node | null)?.range?.[0];
    this.refusals.push({ file: 'sourceAfter', line: this.after.lines.lineAt(view.offset + (start ?? 0)), reason });
  }

  node(
    doc: DocRef,
    steps: Step[],
    b: DocView,
    bNode: unknown,
    a: DocView,
    aNode: unknown,
    key: string | undefined,
  ): void {
    if (isMap(bNode) && isMap(aNode)) this.map(doc, steps, b, bNode, a, aNode);
    else if (isSeq(bNode) && isSeq(aNode)) this.seq(doc, steps, b, bNode, a, aNode, key);
    else if (!sameData(dataOf(b, bNode), dataOf(a, aNode)))
      this.changes.push({ kind: 'set', doc, steps, before: { view: b, node: bNode }, after: { view: a, node: aNode } });
  }

  private map(doc: DocRef, steps: Step[], b: DocView, bMap: YAMLMap, a: DocView, aMap: YAMLMap): void {
    const beforePairs = new Map<string, Pair>();
    for (const pair of bMap.items) {
      const key = keyText(pair.key);
      if (key === undefined) continue;
      beforePairs.set(key, pair);
    }
    const afterKeys = new Set<string>();
    let prev: Step | null = null;
    for (const pair of aMap.items) {
      const key = keyText(pair.key);
      if (key === undefined) {
        if (!sameData(dataOf(b, bMap), dataOf(a, aMap)))
          this.refuse(
            a,
            pair,
            `${formatPath(doc, steps)} has a key that is not a plain value (a map or list used as a key); Escalator cannot name it in a path, so promote this change by hand`,
          );
        return;
      }
      afterKeys.add(key);
      const here = [...steps, { key }];
      const old = beforePairs.get(key);
      if (!old)
        this.changes.push({
          kind: 'add',
          doc,
          steps: here,
          after: { view: a, node: pair.value },
          afterPair: pair,
          prev,
        });
      else {
        const count = this.changes.length;
        this.node(doc, here, b, old.value, a, pair.value, key);
        for (let i = count; i < this.changes.length; i += 1) {
          const change = this.changes[i] as Change;
          if (change.kind === 'set' && change.steps.length === here.length) change.afterPair = pair;
        }
      }
      prev = { key };
    }
    for (const [key, pair] of beforePairs) {
      if (!afterKeys.has(key))
        this.changes.push({ kind: 'remove', doc, steps: [...steps, { key }], before: { view: b, node: pair.value } });
    }
  }

  private seq(
    doc: DocRef,
    steps: Step[],
    b: DocView,
    bSeq: YAMLSeq,
    a: DocView,
    aSeq: YAMLSeq,
    key: string | undefined,
  ): void {
    const bData = bSeq.items.map((item) => dataOf(b, item));
    const aData = aSeq.items.map((item) => dataOf(a, item));
    if (sameData(bData, aData)) return;
    const where = formatPath(doc, steps);
    const rule = listRule(key, [...bData, ...aData]);
    if (!rule) {
      this.refuse(
        a,
        aSeq,
        `the list ${where} changed, but its items have no identity Escalator can match them by (it matches containers, env and volumes by name, ports by containerPort, volumeMounts by mountPath, kustomization file lists by value); promote this change by hand`,
      );
      return;
    }
    const bIds = identifyAll(rule, bData);
    const aIds = identifyAll(rule, aData);
    for (const [ids, side, seq] of [
      [aIds, a, aSeq],
      [bIds, b, bSeq],
    ] as const) {
      if ('ids' in ids) continue;
      const item = seq.items[ids.index];
      const which = side === a ? '' : ' (before the change)';
      const reason =
        ids.problem === 'duplicate'
          ? `the list ${where}${which} has two items with ${ids.label ?? 'the same identity'}, so which one changed is ambiguous; give each item its own ${rule.describe}, or promote this change by hand`
          : `item ${ids.index + 1} of the list ${where}${which} has no ${rule.describe} to match it by; add one, or promote this change by hand`;
      if (side === a) this.refuse(a, item, reason);
      else
        this.refusals.push({
          file: 'sourceBefore',
          line: this.before.lines.lineAt(b.offset + ((item as Node | null)?.range?.[0] ?? 0)),
          reason,
        });
      return;
    }
    if (!('ids' in bIds) || !('ids' in aIds)) return;
    const beforeIndex = new Map(bIds.ids.map((id, index) => [id.id, index]));
    const afterIds = new Set(aIds.ids.map((id) => id.id));
    let prev: Step | null = null;
    for (const [index, id] of aIds.ids.entries()) {
      const step: Step = { item: id, rule };
      const here = [...steps, step];
      const old = beforeIndex.get(id.id);
      const aNode = aSeq.items[index];
      if (old === undefined)
        this.changes.push({ kind: 'add', doc, steps: here, after: { view: a, node: aNode }, prev });
      else {
        const bNode = bSeq.items[old];
        if (isMap(bNode) && isMap(aNode)) this.map(doc, here, b, bNode, a, aNode);
        else if (!sameData(bData[old], aData[index])) {
          if (isScalar(bNode) && isScalar(aNode))
            this.changes.push({
              kind: 'set',
              doc,
              steps: here,
              before: { view: b, node: bNode },
              after: { view: a, node: aNode },
            });
          else
            this.refuse(
              a,
              aNode,
              `the item ${formatPath(doc, here)} changed from one kind of value to another (a map, list or text); promote this change by hand`,
            );
        }
      }
      prev = step;
    }
    for (const [index, id] of bIds.ids.entries()) {
      if (!afterIds.has(id.id))
        this.changes.push({
          kind: 'remove',
          doc,
          steps: [...steps, { item: id, rule }],
          before: { view: b, node: bSeq.items[index] },
        });
    }
  }
}

function nonEmpty(side: Side): DocView[] {
  return side.docs.filter((view) => view.doc.contents !== null);
}

/** X's change, read from its file before and after; `target` decides only how documents pair. */
export function extractChanges(before: Side, after: Side, target: Side | undefined): Extracted {
  const extractor = new Extractor(before, after);
  const b = nonEmpty(before);
  const a = nonEmpty(after);
  const y = target ? nonEmpty(target) : [];
  if (b.length <= 1 && a.length <= 1 && y.length <= 1) {
    const bView = b[0];
    const aView = a[0];
    if (bView && aView) extractor.node({}, [], bView, bView.doc.contents, aView, aView.doc.contents, undefined);
    else if (bView || aView) {
      extractor.refusals.push({
        file: aView ? 'sourceAfter' : 'sourceBefore',
        line: 1,
        reason: `the source environment's file went from ${bView ? 'a document' : 'no document'} to ${aView ? 'a document' : 'none'}; Escalator promotes changes inside a document, so promote this change by hand`,
      });
    }
    return { changes: extractor.changes, refusals: extractor.refusals, byIdentity: false };
  }
  const nameless = new Map<Side, DocView[]>();
  const index = (side: Side, views: DocView[]): Map<string, DocView> | undefined => {
    const map = new Map<string, DocView>();
    const without: DocView[] = [];
    nameless.set(side, without);
    for (const view of views) {
      const id = documentIdentity(dataOf(view, view.doc.contents));
      if (!id) {
        without.push(view);
        continue;
      }
      if (map.has(id.id)) {
        extractor.refusals.push({
          file: side.name,
          line: side.lines.lineAt(view.offset + (view.doc.contents?.range?.[0] ?? 0)),
          reason: `the file has two documents for ${id.label}, so which one changed is ambiguous; remove the duplicate first`,
        });
        return undefined;
      }
      map.set(id.id, view);
    }
    return map;
  };
  const bMap = index(before, b);
  const aMap = index(after, a);
  if (!bMap || !aMap) return { changes: [], refusals: extractor.refusals, byIdentity: true };
  // Documents without kind and metadata.name cannot be matched: X may not change them.
  const bWithout = nameless.get(before) ?? [];
  const aWithout = nameless.get(after) ?? [];
  const changed = aWithout.findIndex(
    (view, i) =>
      !bWithout[i] || !sameData(dataOf(view, view.doc.contents), dataOf(bWithout[i], bWithout[i].doc.contents)),
  );
  if (changed !== -1 || aWithout.length !== bWithout.length) {
    const view = aWithout[changed === -1 ? aWithout.length : changed] ?? bWithout[aWithout.length];
    const side = aWithout.includes(view as DocView) ? after : before;
    extractor.refusals.push({
      file: side.name,
      line: side.lines.lineAt((view?.offset ?? 0) + (view?.doc.contents?.range?.[0] ?? 0)),
      reason: `document ${(view?.index ?? 0) + 1} of a file with several documents changed, but it has no kind and metadata.name to match it with the other environment's documents by; give it both, or promote this change by hand`,
    });
    return { changes: [], refusals: extractor.refusals, byIdentity: true };
  }
  let prev: Step | null = null;
  for (const [id, aView] of aMap) {
    const identity = documentIdentity(dataOf(aView, aView.doc.contents)) as Identity;
    const bView = bMap.get(id);
    const doc: DocRef = { id: identity };
    if (!bView)
      extractor.changes.push({
        kind: 'add',
        doc,
        steps: [],
        after: { view: aView, node: aView.doc.contents },
        prev,
        document: true,
      });
    else extractor.node(doc, [], bView, bView.doc.contents, aView, aView.doc.contents, undefined);
    prev = { key: id };
  }
  for (const [id, bView] of bMap) {
    if (aMap.has(id)) continue;
    const identity = documentIdentity(dataOf(bView, bView.doc.contents)) as Identity;
    extractor.changes.push({
      kind: 'remove',
      doc: { id: identity },
      steps: [],
      before: { view: bView, node: bView.doc.contents },
      document: true,
    });
  }
  return { changes: extractor.changes, refusals: extractor.refusals, byIdentity: true };
}
