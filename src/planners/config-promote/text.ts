/**
 * Plain-text helpers of the configuration writer: lines, columns and re-indentation. Offsets are
 * UTF-16 indexes into the file's whole text (a BOM counts as one).
 */

/** 1-based lines of offsets, answered by binary search over the line starts (built once per text). */
export class LineIndex {
  private readonly starts: number[] = [0];

  constructor(readonly text: string) {
    for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) this.starts.push(at + 1);
  }

  /** 1-based line of `offset`. */
  lineAt(offset: number): number {
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((this.starts[mid] as number) <= offset) low = mid;
      else high = mid - 1;
    }
    return low + 1;
  }
}

/** Offset of the first character of the line holding `offset`. */
export function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

/** Column of `offset` (characters since the line's start). */
export function columnOf(text: string, offset: number): number {
  return offset - lineStart(text, offset);
}

/** Whether only spaces stand between the start of its line and `offset`. */
export function startsLine(text: string, offset: number): boolean {
  return /^ *$/.test(text.slice(lineStart(text, offset), offset));
}

/**
 * The offset just after the line break of the line where content ending at `end` ends (or the
 * end of the text). Content that already ends with its line break (a block scalar) ends there.
 */
export function afterLine(text: string, end: number): number {
  if (end > 0 && text.charAt(end - 1) === '\n') return end;
  const newline = text.indexOf('\n', end);
  return newline === -1 ? text.length : newline + 1;
}

/** The line break the file uses first (`\n` when it has none). */
export function eolOf(text: string): string {
  const newline = text.indexOf('\n');
  return newline > 0 && text.charAt(newline - 1) === '\r' ? '\r\n' : '\n';
}

/** The lines of `text` without their line breaks (`\r\n` or `\n`). */
export function splitLines(text: string): string[] {
  return text.split(/\r?\n/);
}

/**
 * Moves every line after the first by `delta` columns (negative: to the left). Blank lines stay
 * blank. Undefined when a line has fewer leading spaces than a move left needs: the text cannot
 * be moved without changing what it means. The proof after the edit checks the rest.
 */
export function shiftLines(lines: readonly string[], delta: number): string[] | undefined {
  const result: string[] = [];
  for (const [index, line] of lines.entries()) {
    if (index === 0 || delta === 0 || line === '') result.push(line);
    else if (delta > 0) result.push(' '.repeat(delta) + line);
    else {
      const spaces = /^ */.exec(line)?.[0].length ?? 0;
      // A line of spaces only is empty at any indentation; any other line must have room to move.
      if (spaces === line.length) result.push(line.slice(Math.min(spaces, -delta)));
      else if (spaces < -delta) return undefined;
      else result.push(line.slice(-delta));
    }
  }
  return result;
}
