/**
 * A differential check that repository text stays inert in rendered markdown. The same body is
 * rendered twice, once with hostile values and once with plain ones in the same places (same
 * code paths); the hostile one must have the same structure as the plain one:
 * - the same number of lines (CommonMark ends a line at LF, CRLF and a lone CR), each starting
 *   the same way (table row, quote, list item, paragraph);
 * - in each table row, the same number of cell delimiters (GFM splits cells on every `|` not
 *   escaped by a backslash, inside code spans too);
 * - outside code spans, after backslash escapes and entities are taken out, the same markdown
 *   and HTML characters (`[ ] ( ) < > * _ ! # @ ~ & \``) in the same order: hostile text added no
 *   link, image, tag, emphasis, heading, mention or unclosed code span.
 * The checker is deliberately stricter than GitHub's renderer in places; it is not a renderer.
 */

/** CommonMark line endings: LF, CRLF, and CR not followed by LF. */
export function splitLines(markdown: string): string[] {
  return markdown.split(/\r\n|\n|\r/);
}

/** Table cell delimiters GFM sees: every `|` not consumed by a backslash escape. */
export function cellDelimiters(line: string): number {
  let count = 0;
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '\\') i++;
    else if (line[i] === '|') count++;
  }
  return count;
}

const active = new Set(['[', ']', '(', ')', '<', '>', '*', '_', '!', '#', '@', '~', '&', '`']);
const punctuation = /[!-/:-@[-`{-~]/;

/** The markdown-active characters of a line outside code spans, escapes and entities removed. */
export function activeCharacters(line: string): string {
  let out = '';
  let i = 0;
  while (i < line.length) {
    const ch = line[i] as string;
    if (ch === '\\' && i + 1 < line.length && punctuation.test(line[i + 1] as string)) {
      i += 2;
      continue;
    }
    if (ch === '`') {
      let n = 0;
      while (line[i + n] === '`') n++;
      // A code span closes at the next run of exactly n backticks.
      let j = i + n;
      let close = -1;
      while (j < line.length) {
        if (line[j] === '`') {
          let m = 0;
          while (line[j + m] === '`') m++;
          if (m === n) {
            close = j;
            break;
          }
          j += m;
        } else j++;
      }
      if (close >= 0) {
        out += '«code»';
        i = close + n;
        continue;
      }
      out += '`'.repeat(n);
      i += n;
      continue;
    }
    if (ch === '&') {
      const entity = /^&(?:[A-Za-z][A-Za-z0-9]{1,31}|#\d{1,7}|#[xX][0-9A-Fa-f]{1,6});/.exec(line.slice(i));
      if (entity) {
        i += entity[0].length;
        continue;
      }
    }
    if (active.has(ch)) out += ch;
    i++;
  }
  return out;
}

/** How a line starts, as far as block structure goes. */
function blockStart(line: string): string {
  return /^(?:\s*(?:\||>\s?(?:-\s)?|-\s|\d+\.\s|#{1,6}\s|<!--|<sub>|\*\*))?/.exec(line)?.[0] ?? '';
}

/** Differences between the hostile rendering and the plain one (empty: the hostile text stayed inert). */
export function structuralDifferences(hostile: string, plain: string): string[] {
  const a = splitLines(hostile);
  const b = splitLines(plain);
  if (a.length !== b.length) return [`${a.length} lines instead of ${b.length}: hostile text broke a line`];
  const problems: string[] = [];
  a.forEach((line, i) => {
    const other = b[i] as string;
    if (blockStart(line) !== blockStart(other))
      problems.push(
        `line ${i + 1} starts as ${JSON.stringify(blockStart(line))}, not ${JSON.stringify(blockStart(other))}`,
      );
    if (other.startsWith('|') && cellDelimiters(line) !== cellDelimiters(other))
      problems.push(
        `line ${i + 1} has ${cellDelimiters(line)} cell delimiters instead of ${cellDelimiters(other)}: ${JSON.stringify(line.slice(0, 200))}`,
      );
    if (activeCharacters(line) !== activeCharacters(other)) {
      problems.push(
        `line ${i + 1} has markdown ${JSON.stringify(activeCharacters(line).slice(0, 120))} instead of ${JSON.stringify(activeCharacters(other).slice(0, 120))}: ${JSON.stringify(line.slice(0, 200))}`,
      );
    }
  });
  return problems;
}
