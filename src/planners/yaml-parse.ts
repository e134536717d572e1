/**
 * `parseAllDocuments` with the `yaml` package's duplicate-key check done in linear time.
 *
 * The package checks each key of a mapping against every key before it, so one mapping of n keys
 * costs n² comparisons: a ConfigMap of 20,000 keys took 4.2 s to parse and one of 200,000 would
 * take minutes, all on the event loop (bench/diff-bound.ts). Here the package parses without the
 * check and each mapping's scalar keys go through one hash set, which reports the same error
 * (`DUPLICATE_KEY`, "Map keys must be unique", at the repeated key) for the same keys: scalars with
 * the same value; keys that are collections are never equal to another node, as in the package.
 * Differences no caller meets: two `.nan` keys count as duplicates (the package compares with
 * `===`), a custom `uniqueKeys` function is not called, and the errors carry no `linePos`.
 *
 * Pure: text in, documents out.
 */
import {
  isScalar,
  parseAllDocuments,
  visit,
  YAMLParseError,
  type Document,
  type DocumentOptions,
  type ParseOptions,
  type SchemaOptions,
} from 'yaml';

export type YamlParseOptions = ParseOptions & DocumentOptions & SchemaOptions;

function markDuplicateKeys(doc: Document.Parsed, text: string): void {
  const found: YAMLParseError[] = [];
  visit(doc, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        const key = pair.key;
        if (!isScalar(key)) continue;
        if (seen.has(key.value)) {
          let at = key.range?.[0] ?? 0;
          // An empty key's node starts before the indentation; the package points past it.
          if (key.range && key.range[0] === key.range[1]) while (text[at] === ' ' || text[at] === '\t') at++;
          found.push(new YAMLParseError([at, at + 1], 'DUPLICATE_KEY', 'Map keys must be unique'));
        } else seen.add(key.value);
      }
    },
  });
  if (found.length === 0) return;
  doc.errors.push(...found);
  doc.errors.sort((a, b) => a.pos[0] - b.pos[0]);
}

/**
 * Every document of `text`, as `parseAllDocuments(text, options)` returns them, in linear time for
 * wide mappings. The `yaml` package's warnings are not printed (`logLevel: 'error'`): a Go or Helm
 * template (`name: {{ .Release.Name }}`) reads as a map keyed by a map, and each `toJS` of it
 * would put a process warning in the logs for a file Escalator only reads past.
 */
export function parseYamlDocuments(text: string, options: YamlParseOptions = {}): Document.Parsed[] {
  const documents = parseAllDocuments(text, { logLevel: 'error', ...options, uniqueKeys: false });
  if (options.uniqueKeys !== false) for (const doc of documents) markDuplicateKeys(doc, text);
  return documents;
}
