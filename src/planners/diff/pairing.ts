import { identityKey, type ManifestObject } from './manifest.js';
import type { RenameReason } from './types.js';

/** Kustomize's name hash: `-` and ten characters of its alphabet (no vowels, no 0/1/3). */
export const HASH_SUFFIX = /-[2456789bcdfghkmt]{10}$/;

export interface Paired<T extends ManifestObject> {
  base: T;
  head: T;
  /** Absent when the identities are equal. */
  reason?: RenameReason;
}

export interface Pairing<T extends ManifestObject> {
  pairs: Paired<T>[];
  added: T[];
  removed: T[];
}

export interface PairOptions {
  /** Lowest line similarity (Dice coefficient, 0–1) for pairing two objects of one kind by content. @default 0.6 */
  minSimilarity?: number;
  /** Skip similarity pairing for a kind when leftovers would need more comparisons than this. @default 2500 */
  maxComparisons?: number;
  /**
   * Base objects never paired as a rename (hash suffix, namespace move, similar content): deleting
   * them loses data or cascades (a Namespace, a PersistentVolumeClaim), so they stay "removed".
   */
  neverRename?: (object: ManifestObject) => boolean;
}

/**
 * Lines that say something about this object: not keys alone, not the boilerplate every object of
 * a kind shares (`apiVersion`, `kind`), not the name that is being compared across.
 */
function telling(text: string): string[] {
  return text
    .split('\n')
    .filter(
      (line) =>
        line.trim() !== '' &&
        !line.trimEnd().endsWith(':') &&
        !/^(apiVersion|kind): |^ {2}(name|namespace): /.test(line),
    );
}

/** Dice coefficient of the two normalized texts' telling-line multisets (0 when neither says anything). */
export function similarity(a: string, b: string): number {
  const count = new Map<string, number>();
  const linesA = telling(a);
  const linesB = telling(b);
  if (linesA.length + linesB.length === 0) return 0;
  for (const line of linesA) count.set(line, (count.get(line) ?? 0) + 1);
  let common = 0;
  for (const line of linesB) {
    const left = count.get(line) ?? 0;
    if (left > 0) {
      common++;
      count.set(line, left - 1);
    }
  }
  return (2 * common) / (linesA.length + linesB.length);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Pair base and head objects: equal identities first, then leftovers as renames — kustomize
 * hash-suffix renames, namespace moves, group moves of one kind (an apiVersion change across
 * groups), and finally content similarity within a kind. Every step is deterministic: candidates
 * are taken in identity order and ties go to the first.
 */
export function pairObjects<T extends ManifestObject>(
  base: T[],
  head: T[],
  textOf: (object: T) => string,
  options: PairOptions = {},
): Pairing<T> {
  const headByKey = new Map(head.map((object) => [identityKey(object), object]));
  const pairs: Paired<T>[] = [];
  let removed: T[] = [];
  for (const object of base) {
    const match = headByKey.get(identityKey(object));
    if (match) {
      pairs.push({ base: object, head: match });
      headByKey.delete(identityKey(object));
    } else removed.push(object);
  }
  let added = [...headByKey.values()];
  const byKey = (a: T, b: T): number => compare(identityKey(a), identityKey(b));
  removed.sort(byKey);
  added.sort(byKey);

  const renamable = (object: T): boolean => !options.neverRename?.(object);
  const pairBy = (reason: RenameReason, matches: (a: T, b: T) => boolean): void => {
    const stillRemoved: T[] = [];
    for (const old of removed) {
      if (reason !== 'api-group' && !renamable(old)) {
        stillRemoved.push(old);
        continue;
      }
      const index = added.findIndex((candidate) => matches(old, candidate));
      if (index < 0) {
        stillRemoved.push(old);
        continue;
      }
      pairs.push({ base: old, head: added[index] as T, reason });
      added = added.filter((_, i) => i !== index);
    }
    removed = stillRemoved;
  };
  const stem = (name: string): string | undefined =>
    HASH_SUFFIX.test(name) ? name.replace(HASH_SUFFIX, '') : undefined;
  pairBy(
    'hash-suffix',
    (a, b) =>
      a.group === b.group &&
      a.kind === b.kind &&
      a.namespace === b.namespace &&
      stem(a.name) !== undefined &&
      stem(a.name) === stem(b.name),
  );
  pairBy('namespace', (a, b) => a.group === b.group && a.kind === b.kind && a.name === b.name);
  pairBy('api-group', (a, b) => a.kind === b.kind && a.namespace === b.namespace && a.name === b.name);

  const minimum = options.minSimilarity ?? 0.6;
  const maxComparisons = options.maxComparisons ?? 2500;
  const kinds = [...new Set(removed.map((object) => `${object.group}/${object.kind}`))].sort(compare);
  for (const kind of kinds) {
    const olds = removed.filter((object) => `${object.group}/${object.kind}` === kind && renamable(object));
    const news = added.filter((object) => `${object.group}/${object.kind}` === kind);
    if (news.length === 0 || olds.length * news.length > maxComparisons) continue;
    const scored: Array<{ old: T; next: T; score: number; order: number }> = [];
    let order = 0;
    for (const old of olds)
      for (const next of news) scored.push({ old, next, score: similarity(textOf(old), textOf(next)), order: order++ });
    scored.sort((a, b) => b.score - a.score || a.order - b.order);
    const usedOld = new Set<T>();
    const usedNew = new Set<T>();
    for (const { old, next, score } of scored) {
      if (score < minimum) break;
      if (usedOld.has(old) || usedNew.has(next)) continue;
      usedOld.add(old);
      usedNew.add(next);
      pairs.push({ base: old, head: next, reason: 'similarity' });
    }
    removed = removed.filter((object) => !usedOld.has(object));
    added = added.filter((object) => !usedNew.has(object));
  }
  pairs.sort((a, b) => byKey(a.head, b.head));
  return { pairs, added, removed };
}
