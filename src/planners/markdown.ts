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
