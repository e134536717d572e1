/**
 * Scalar quoting. A value written without quotes must read back as the identical string under
 * both YAML 1.2 (core schema: Kustomize, Argo CD) and YAML 1.1 (Helm, through go-yaml v2), or
 * `1.10` becomes the float 1.1 and `on` becomes true. The check asks the `yaml` package itself
 * rather than keeping a list of patterns.
 */
import { parseDocument } from 'yaml';

/** How a scalar is written in the source. */
export type ScalarStyle = 'plain' | 'single' | 'double';

const plainCache = new Map<string, boolean>();

function readsBackAs(source: string, value: string, version: '1.1' | '1.2'): boolean {
  const doc = parseDocument(source, { version, prettyErrors: false, logLevel: 'error' });
  if (doc.errors.length > 0 || doc.warnings.length > 0) return false;
  const items: unknown = doc.toJS();
  return Array.isArray(items) && items.length === 1 && items[0] === value;
}

/**
 * Whether `value` can be written as a plain scalar in block and flow context and still be the
 * string `value` under YAML 1.1 and 1.2.
 */
export function isPlainSafe(value: string): boolean {
  const cached = plainCache.get(value);
  if (cached !== undefined) return cached;
  let safe =
    value !== '' &&
    !/[\s#,[\]{}"'`!&*|>%@]/.test(value.charAt(0)) &&
    !/[\r\n\t]/.test(value) &&
    // `<<` is the merge key and `=` the YAML 1.1 value key: they are strings only by accident.
    value !== '<<' &&
    value !== '=';
  if (safe) {
    for (const version of ['1.1', '1.2'] as const) {
      if (!readsBackAs(`- ${value}\n`, value, version) || !readsBackAs(`[${value}]`, value, version)) {
        safe = false;
        break;
      }
    }
  }
  if (plainCache.size > 10_000) plainCache.clear();
  plainCache.set(value, safe);
  return safe;
}

/**
 * Whether a plain scalar written `text` is a string to YAML 1.2 readers (kustomize, Argo CD):
 * `1234`, `1.10` and `true` are not, and kustomize v5 refuses a number or a boolean where it
 * wants a string.
 */
export function isPlainStringInYaml12(text: string): boolean {
  return text !== '' && readsBackAs(`- ${text}\n`, text, '1.2');
}

/** `"value"` with YAML double-quote escapes (JSON's escapes are a subset of YAML's). */
export function doubleQuote(value: string): string {
  return JSON.stringify(value);
}

/** `'value'` with `'` doubled. */
export function singleQuote(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/**
 * The source text for `value` in the given existing style: the style is kept when the value is
 * safe in it, and a plain value that would not read back as the same string is double-quoted.
 */
export function renderScalar(value: string, style: ScalarStyle): string {
  switch (style) {
    case 'double':
      return doubleQuote(value);
    case 'single':
      return /[\r\n]/.test(value) ? doubleQuote(value) : singleQuote(value);
    case 'plain':
      return isPlainSafe(value) ? value : doubleQuote(value);
  }
}
