/**
 * Markdown from repository text. File names, image names and values come from repositories and
 * registries; none of them may close a code span, open a link, mention a user or inject HTML.
 */
export function code(text: string): string {
  if (text === '') return '` `';
  // A code span delimited by more backticks than the text's longest run holds any text literally.
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const padded = text.startsWith('`') || text.endsWith('`') ? ` ${text} ` : text;
  // Any line ending (CRLF, LF, or a lone CR) would end the span's paragraph.
  return `${fence}${padded.replace(/\r\n?|\n/g, ' ')}${fence}`;
}

/** Plain text: escape every character markdown or HTML would interpret. */
export function escapeText(text: string): string {
  return text
    .replace(/[\\`*_{}[\]()#+\-.!|<>@~&]/g, (ch) =>
      ch === '<' ? '&lt;' : ch === '>' ? '&gt;' : ch === '&' ? '&amp;' : `\\${ch}`,
    )
    .replace(/\r\n?|\n/g, ' ');
}

/**
 * A table cell: every `|` escaped, even inside code spans (GitHub splits rows before it reads
 * code spans). A pipe already behind an odd run of backslashes is escaped; one behind an even run
 * (`\\|`: an escaped backslash, then a live pipe) gets one more backslash.
 */
export function cell(markdown: string): string {
  return markdown.replace(/(\\*)\|/g, (_, slashes: string) =>
    slashes.length % 2 === 1 ? `${slashes}|` : `${slashes}\\|`,
  );
}

/** A file the editor refused, or one entry of a file it edited otherwise, with why. */
export interface Refusal {
  path: string;
  reason: string;
  line?: number;
  /** True when only this entry was left as it was and the rest of the file was updated. */
  left?: boolean;
}

/** One list item per refusal: its path (and line) as code, its reason as escaped text. */
export function refusalList(refused: readonly Refusal[]): string[] {
  return refused.map(
    (refusal) =>
      `- ${code(`${refusal.path}${refusal.line ? `:${refusal.line}` : ''}`)}: ${refusal.left ? 'left as it was (the rest of the file was updated): ' : ''}${escapeText(refusal.reason)}`,
  );
}

/** The warning block Escalator's pull requests carry for files and entries it would not edit (empty when none). */
export function refusalLines(refused: readonly Refusal[]): string[] {
  if (refused.length === 0) return [];
  const files = refused.some((refusal) => !refusal.left);
  const entries = refused.some((refusal) => refusal.left);
  const what =
    files && entries
      ? 'Some files, and some entries of files that were updated, could not be updated safely and were left as they were:'
      : entries
        ? 'Some entries could not be updated safely and were left as they were; the rest of their files was updated:'
        : 'Some files could not be updated safely and were left untouched:';
  return ['', '> [!WARNING]', `> ${what}`, ...refusalList(refused).map((line) => `> ${line}`)];
}
