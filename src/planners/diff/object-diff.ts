import { structuredPatch } from 'diff';
import type { NormalizedLine } from './normalize.js';

/**
 * Edits (removed plus added lines) past which an object's diff is summarized instead of shown.
 * Myers' algorithm costs about (lines × edits) and the unbounded library call took 16 s for a
 * ConfigMap of 11,000 changed lines (bench/diff-bound.ts); at this bound it gives up after
 * about 0.1 s. More changed lines than this would not fit a comment anyway.
 */
export const MAX_EDIT_LINES = 1000;
/** Lines (both sides together) past which an object is summarized without running the diff at all. */
export const MAX_DIFF_LINES = 50_000;

export interface HunkOptions {
  /** Unchanged lines around each change. @default 3 */
  context?: number;
  /** Summarize instead of diffing past this many changed lines. @default MAX_EDIT_LINES */
  maxEditLines?: number;
  /** Summarize without diffing past this many lines on both sides together. @default MAX_DIFF_LINES */
  maxLines?: number;
}

/** Lines that differ, counted without their order: what a too-large object's summary says. */
export interface LineCounts {
  removed: number;
  added: number;
}

export interface LineDiff {
  /** Unified diff hunks; empty when the sides are equal or when `tooLarge` is set. */
  hunks: string[];
  /** Set when the change was too large to diff line by line. */
  tooLarge?: LineCounts;
}

/**
 * How many lines of `base` are not in `head` and the other way round, as multisets: linear time,
 * and never more than what a line diff would report.
 */
function countChangedLines(base: NormalizedLine[], head: NormalizedLine[]): LineCounts {
  const left = new Map<string, number>();
  for (const line of base) left.set(line.text, (left.get(line.text) ?? 0) + 1);
  let added = 0;
  for (const line of head) {
    const count = left.get(line.text) ?? 0;
    if (count > 0) left.set(line.text, count - 1);
    else added++;
  }
  let removed = 0;
  for (const count of left.values()) removed += count;
  return { removed, added };
}

/**
 * Unified diff hunks between two normalized objects. Each hunk starts with
 * `@@ -a,b +c,d @@ <path>` where `<path>` is the YAML path of the hunk's first changed line, the way
 * git names the enclosing function. Either side may be empty (object added or removed).
 *
 * Bounded: past `maxEditLines` changed lines, or `maxLines` lines in all, the answer is the count of
 * changed lines (`tooLarge`) and no hunks, in time linear in the lines. Deterministic: the bound
 * is a count, never a clock, so the same inputs always give the same comment.
 */
export function diffLines(base: NormalizedLine[], head: NormalizedLine[], options: HunkOptions = {}): LineDiff {
  const baseText = base.map((line) => `${line.text}\n`).join('');
  const headText = head.map((line) => `${line.text}\n`).join('');
  if (baseText === headText) return { hunks: [] };
  const maxEditLines = options.maxEditLines ?? MAX_EDIT_LINES;
  if (base.length + head.length > (options.maxLines ?? MAX_DIFF_LINES))
    return { hunks: [], tooLarge: countChangedLines(base, head) };
  // An added or removed object costs linear time whatever its size, so only two-sided diffs are bounded by edits.
  const oneSided = base.length === 0 || head.length === 0;
  const patch = structuredPatch('base', 'head', baseText, headText, undefined, undefined, {
    context: options.context ?? 3,
    ...(oneSided ? {} : { maxEditLength: maxEditLines }),
  });
  if (!patch) return { hunks: [], tooLarge: countChangedLines(base, head) };
  const hunks = patch.hunks.map((hunk) => {
    let oldLine = hunk.oldStart;
    let newLine = hunk.newStart;
    let path: string | undefined;
    const body: string[] = [];
    for (const line of hunk.lines) {
      const sign = line[0];
      if (sign === '\\') continue;
      if (sign === '-') {
        path ??= base[oldLine - 1]?.path;
        oldLine++;
      } else if (sign === '+') {
        path ??= head[newLine - 1]?.path;
        newLine++;
      } else {
        oldLine++;
        newLine++;
      }
      body.push(line);
    }
    // A side with no lines names the line before the change (`-0,0` for an empty side), as git does.
    const range = (start: number, count: number): string =>
      count === 0 ? `${Math.max(0, start - 1)},0` : count === 1 ? `${start}` : `${start},${count}`;
    // A whole object added or removed has no "where".
    const whole = (hunk.oldLines === 0 && base.length === 0) || (hunk.newLines === 0 && head.length === 0);
    const header = `@@ -${range(hunk.oldStart, hunk.oldLines)} +${range(hunk.newStart, hunk.newLines)} @@${path && !whole ? ` ${path}` : ''}`;
    return [header, ...body].join('\n');
  });
  return { hunks };
}
