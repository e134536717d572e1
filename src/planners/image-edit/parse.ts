/**
 * Parsing a file into documents with source ranges. Small files are parsed whole; large
 * multi-document streams are cut into documents first (see `splitDocuments`), and an edit parses
 * only the documents that can mention the image, so a 5 MB manifest costs one document's parse.
 */
import { isCollection, visit, type Document, type YAMLError } from 'yaml';
import { parseYamlDocuments } from '../yaml-parse.js';
import {
  checkYamlShape,
  checkYamlSize,
  DEFAULT_YAML_LIMITS,
  resolveAliases,
  type AliasTargets,
  type YamlLimits,
} from '../yaml-guard.js';
import { lineAt, splitDocuments, type Chunk } from '../text.js';
import type { EditRefusal } from './types.js';

/** One parsed document and where its text sits in the file. */
export interface Segment {
  /** Index of the document in the stream. */
  index: number;
  /** Offset of `text` in the file: node ranges are relative to it. */
  offset: number;
  /** The text that was parsed (the whole file, or this document's chunk). */
  text: string;
  doc: Document.Parsed;
  /** Each alias's anchored node, resolved once (see `resolveAliases`). */
  aliases: AliasTargets;
}

/** The documents of a file that were parsed. */
export interface LoadedFile {
  segments: Segment[];
  /** How many documents the stream has (parsed or not). */
  count: number;
  /** `whole`: every document was parsed from the whole text; `chunked`: only some, each from its own chunk. */
  mode: 'whole' | 'chunked';
  /** Parse errors, as refusals. */
  refusals: EditRefusal[];
  /**
   * Documents of a multi-document stream that are Go/Helm templates (`{{ … }}` that is not YAML
   * data) and may mention the image: skipped, one line each, while the other documents are read.
   */
  templates: EditRefusal[];
}

/** Files above this size are cut into documents before parsing. */
export const CHUNKED_PARSE_THRESHOLD = 512 * 1024;

const PARSE_OPTIONS = { prettyErrors: false, uniqueKeys: true } as const;

function describeError(error: YAMLError, text: string, offset: number): EditRefusal {
  const line = lineAt(text, offset + (error.pos[0] ?? 0));
  const message = error.message.split('\n')[0] ?? error.message;
  if (error.code === 'DUPLICATE_KEY') {
    return {
      reason: `the file has a duplicate key at line ${line} (${message}); tools disagree on which value wins, so remove the duplicate first`,
      line,
    };
  }
  const template = /\{\{|\$\{|\$\(/.test(text)
    ? ' The file looks like a template ({{ }}, ${…}); Escalator edits only plain YAML.'
    : '';
  return {
    reason: `the file is not valid YAML (parse error at line ${line}: ${message}); fix the syntax first.${template}`,
    line,
  };
}

/**
 * Problems that parse without errors: aliases with no anchor before them (they cannot be read),
 * and unquoted `{{ … }}` template actions, which YAML reads as nested flow maps used as keys —
 * such a file is a Go/Helm template, not data.
 */
function structuralProblems(doc: Document.Parsed, aliases: AliasTargets, text: string, offset: number): EditRefusal[] {
  const refusals: EditRefusal[] = [];
  visit(doc, {
    Alias: (_key, node) => {
      if (aliases.get(node) !== undefined) return;
      const line = lineAt(text, offset + (node.range?.[0] ?? 0));
      refusals.push({
        reason: `the alias *${node.source} at line ${line} has no anchor &${node.source} before it; the file is not valid YAML, fix the alias first`,
        line,
      });
    },
    Pair: (_key, pair) => {
      const start = isCollection(pair.key) ? pair.key.range?.[0] : undefined;
      // `{{ x }}` is a flow map whose key is the flow map `{ x }`: the key starts at either brace.
      if (start === undefined || !(text.startsWith('{{', offset + start) || text.startsWith('{{', offset + start - 1)))
        return undefined;
      const line = lineAt(text, offset + start);
      refusals.push({
        reason: `the file is a template: line ${line} holds an unquoted {{ … }} placeholder; edit the values the template reads instead`,
        line,
      });
      return visit.BREAK;
    },
  });
  return refusals;
}

/**
 * Cheap pre-check for {@link structuralProblems}, once per parsed text (the whole file, or one
 * document's chunk): no `*` means no alias to resolve, and no `{{` as well means nothing to find.
 */
interface MayHave {
  aliases: boolean;
  problems: boolean;
}

function mayHave(text: string): MayHave {
  const aliases = text.includes('*');
  return { aliases, problems: aliases || text.includes('{{') };
}

const NO_ALIASES: AliasTargets = new Map();

/** Resolves the aliases of a document that parsed, and adds what is wrong with them to `refusals`. */
function checkDocument(
  doc: Document.Parsed,
  text: string,
  offset: number,
  hints: MayHave,
  limits: YamlLimits,
  refusals: EditRefusal[],
): AliasTargets {
  if (doc.errors.length > 0) {
    // One refusal per document: the parser's later errors usually follow from the first (a tab
    // used as indentation is reported three times), and the fix is to correct the first.
    const [first, ...rest] = doc.errors;
    if (first) {
      const refusal = describeError(first, text, offset);
      if (rest.length > 0)
        refusal.reason = `${refusal.reason} (${rest.length} more parse error${rest.length === 1 ? '' : 's'} after it, usually caused by this one)`;
      refusals.push(refusal);
    }
    return NO_ALIASES;
  }
  if (!hints.problems) return NO_ALIASES;
  const { targets, problem } = hints.aliases
    ? resolveAliases(doc, text, offset, limits)
    : { targets: NO_ALIASES, problem: undefined };
  if (problem) refusals.push(problem);
  else refusals.push(...structuralProblems(doc, targets, text, offset));
  return targets;
}

function parseWhole(text: string, limits: YamlLimits): LoadedFile {
  const tooMuch = checkYamlShape(text, limits);
  if (tooMuch) return { segments: [], count: 0, mode: 'whole', refusals: [tooMuch], templates: [] };
  const docs = parseYamlDocuments(text, PARSE_OPTIONS);
  const list = Array.isArray(docs) ? docs : [];
  const refusals: EditRefusal[] = [];
  const hints = mayHave(text);
  const segments = list.map((doc, index): Segment => ({
    index,
    offset: 0,
    text,
    doc,
    aliases: checkDocument(doc, text, 0, hints, limits, refusals),
  }));
  return { segments, count: list.length, mode: 'whole', refusals, templates: [] };
}

/**
 * Parses `text`. A large file is parsed document by document (each within the shape limits);
 * when `needle` is given, only the documents whose text contains it. Text over the limits
 * (`yaml-guard.ts`) is refused before parsing.
 */
export function loadFile(text: string, needle?: string, limits: YamlLimits = DEFAULT_YAML_LIMITS): LoadedFile {
  const tooLarge = checkYamlSize(text, limits);
  if (tooLarge) return { segments: [], count: 0, mode: 'whole', refusals: [tooLarge], templates: [] };
  if (text.length <= CHUNKED_PARSE_THRESHOLD) {
    const whole = parseWhole(text, limits);
    if (whole.refusals.length === 0 || !text.includes('{{')) return whole;
    // A stream with template documents: read it document by document and skip the templates.
    const chunks = splitDocuments(text);
    if (!chunks || chunks.length < 2) return whole;
    return parseChunks(text, chunks, needle, limits, true) ?? whole;
  }
  const chunks = splitDocuments(text);
  if (!chunks) return parseWhole(text, limits);
  return parseChunks(text, chunks, needle, limits, text.includes('{{')) ?? parseWhole(text, limits);
}

/**
 * Parses the chunks that can mention `needle` (all without one), each on its own. With
 * `skipTemplates`, a chunk that is not plain YAML and holds `{{` is a Go/Helm template document:
 * it is listed in `templates` and left out. Undefined when a chunk does not parse as exactly one
 * document (the cut was not exact: parse the whole text instead).
 */
function parseChunks(
  text: string,
  chunks: readonly Chunk[],
  needle: string | undefined,
  limits: YamlLimits,
  skipTemplates: boolean,
): LoadedFile | undefined {
  const segments: Segment[] = [];
  const refusals: EditRefusal[] = [];
  const templates: EditRefusal[] = [];
  for (const chunk of chunks) {
    const chunkText = text.slice(chunk.start, chunk.end);
    if (needle !== undefined && !chunkText.includes(needle)) continue;
    const tooMuch = checkYamlShape(chunkText, limits, text, chunk.start);
    if (tooMuch) return { segments: [], count: chunks.length, mode: 'chunked', refusals: [tooMuch], templates: [] };
    const docs = parseYamlDocuments(chunkText, PARSE_OPTIONS);
    const template = skipTemplates ? chunkText.indexOf('{{') : -1;
    if (!Array.isArray(docs) || docs.length !== 1) {
      if (template === -1) return undefined;
      templates.push(templateDocument(text, chunk, template));
      continue;
    }
    const doc = docs[0] as Document.Parsed;
    const problems: EditRefusal[] = [];
    const aliases = checkDocument(doc, text, chunk.start, mayHave(chunkText), limits, problems);
    if (problems.length > 0 && template !== -1) {
      templates.push(templateDocument(text, chunk, template));
      continue;
    }
    for (const problem of problems) refusals.push(problem);
    segments.push({ index: chunk.index, offset: chunk.start, text: chunkText, doc, aliases });
  }
  return { segments, count: chunks.length, mode: 'chunked', refusals, templates };
}

function templateDocument(text: string, chunk: Chunk, template: number): EditRefusal {
  const line = lineAt(text, chunk.start + template);
  return {
    reason: `document ${chunk.index + 1} is a Go/Helm template ({{ … }} at line ${line}), not YAML data, so it was skipped and the other documents were read; edit the values the template reads`,
    line,
  };
}
