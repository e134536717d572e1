/**
 * Markdown from repository text. File names, image names and values come from repositories and
 * registries; none of them may close a code span, open a link, mention a user or inject HTML.
 */
export function code(text: string): string {
  // A code span delimited by more backticks than the text's longest run holds any text literally.
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const padded = text.startsWith('`') || text.endsWith('`') ? ` ${text} ` : text;
  return `${fence}${padded.replace(/\r?\n/g, ' ')}${fence}`;
}

/** Plain text: escape every character markdown or HTML would interpret. */
export function escapeText(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>@~&]/g, (ch) => (ch === '<' ? '&lt;' : ch === '>' ? '&gt;' : ch === '&' ? '&amp;' : `\\${ch}`)).replace(/\r?\n/g, ' ');
}

/** A table cell: escaped, with pipes escaped even inside code spans. */
export function cell(markdown: string): string {
  return markdown.replace(/\|/g, '\\|');
}

/** A file the editor refused, with why. */
export interface Refusal {
  path: string;
  reason: string;
  line?: number;
}

/** The warning block Escalator's pull requests carry for files it would not edit (empty when none). */
export function refusalLines(refused: readonly Refusal[]): string[] {
  if (refused.length === 0) return [];
  return [
    '',
    '> [!WARNING]',
    '> Some files could not be updated safely and were left untouched:',
    ...refused.map((refusal) => `> - ${code(`${refusal.path}${refusal.line ? `:${refusal.line}` : ''}`)}: ${escapeText(refusal.reason)}`),
  ];
}
