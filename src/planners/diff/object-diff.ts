import { structuredPatch } from 'diff';
import type { NormalizedLine } from './normalize.js';

export interface HunkOptions {
  /** Unchanged lines around each change. @default 3 */
  context?: number;
}

/**
 * Unified diff hunks between two normalized objects. Each hunk starts with
 * `@@ -a,b +c,d @@ <path>` where `<path>` is the YAML path of the hunk's first changed line, the way
 * git names the enclosing function. Either side may be empty (object added or removed).
 */
export function diffLines(base: NormalizedLine[], head: NormalizedLine[], options: HunkOptions = {}): string[] {
  const baseText = base.map((line) => `${line.text}\n`).join('');
  const headText = head.map((line) => `${line.text}\n`).join('');
  if (baseText === headText) return [];
  const patch = structuredPatch('base', 'head', baseText, headText, undefined, undefined, { context: options.context ?? 3 });
  return patch.hunks.map((hunk) => {
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
    const range = (start: number, count: number): string => (count === 0 ? `${Math.max(0, start - 1)},0` : count === 1 ? `${start}` : `${start},${count}`);
    // A whole object added or removed has no "where".
    const whole = (hunk.oldLines === 0 && base.length === 0) || (hunk.newLines === 0 && head.length === 0);
    const header = `@@ -${range(hunk.oldStart, hunk.oldLines)} +${range(hunk.newStart, hunk.newLines)} @@${path && !whole ? ` ${path}` : ''}`;
    return [header, ...body].join('\n');
  });
}
