/**
 * Quoting repository and operator text inside problem messages: a 1 MB value must not make a
 * 1 MB message. Shared by the configuration parsers and the pure checkers they call.
 */

/** Longest part of a value a problem quotes. */
export const QUOTE_LIMIT = 80;

/** `text` cut to {@link QUOTE_LIMIT} characters with "…" when longer (never inside a surrogate pair). */
export function clipValue(text: string): string {
  if (text.length <= QUOTE_LIMIT) return text;
  const end = /[\uD800-\uDBFF]/.test(text.charAt(QUOTE_LIMIT - 1)) ? QUOTE_LIMIT - 1 : QUOTE_LIMIT;
  return `${text.slice(0, end)}…`;
}

/** A value in double quotes for a problem message: `"dev"`, or `"aaaa…" (20,000 characters)` when cut. */
export function quoteValue(text: string): string {
  return text.length <= QUOTE_LIMIT
    ? `"${text}"`
    : `"${clipValue(text)}" (${text.length.toLocaleString('en-US')} characters)`;
}
