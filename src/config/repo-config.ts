/**
 * Reads `.github/escalator.yml`: text in, a typed config or every problem out, each with the
 * line and column it comes from. Pure: the caller fetches the file (from the default branch, or
 * from a pull request's head to report problems as a failing check run).
 *
 * 1. parse the YAML, keeping node ranges (syntax errors and duplicate keys become problems)
 * 2. refuse what is not one mapping (empty file, several documents, a list or a scalar at the root)
 * 3. validate with the zod schema, collecting every issue
 * 4. map each issue's path back to the YAML node it concerns, and add a hint where one helps
 */
import { isAlias, isCollection, isMap, isPair, isScalar, isSeq, LineCounter, visit } from 'yaml';
import { parseYamlDocuments } from '../planners/yaml-parse.js';
import type { Document, Node, Pair } from 'yaml';
import { z } from 'zod';
import { checkYamlText, DEFAULT_YAML_LIMITS, resolveAliases, type YamlLimits } from '../planners/yaml-guard.js';
import { clipValue, closestMatch, quoteValue, RepoConfig, statusFix } from './repo-config.schema.js';

export { RepoConfig, REGISTRY_SOURCE, TAG_POLICIES, compileTagPattern, parseDuration } from './repo-config.schema.js';
// Environment and diff paths are path patterns of the one dialect (src/planners/path-pattern.ts).
export { matchPathPattern as matchEnvironmentPath } from '../planners/path-pattern.js';
export type { DiffConfig, EnvironmentConfig, ImageConfig, RepoConfigInput, TagPolicy } from './repo-config.schema.js';

/** One problem in a configuration file, positioned for a check-run annotation or an editor. */
export interface ConfigProblem {
  /** The file as the caller named it, usually `.github/escalator.yml`. */
  file: string;
  /** 1-based line. */
  line: number;
  /** 1-based column, in characters. */
  col: number;
  /** Where in the configuration, like `environments[1].from`; empty for the file as a whole. */
  path: string;
  /** What is wrong. */
  message: string;
  /** What to write instead, when we can tell. */
  hint?: string;
}

export type RepoConfigResult = { ok: true; config: RepoConfig } | { ok: false; problems: ConfigProblem[] };

/** Where a repository keeps its configuration, read from the default branch. */
export const configPath = '.github/escalator.yml';
const DEFAULT_FILE = configPath;

/** Expanding more aliases than this is refused: a small file must not become a huge value. */
const MAX_ALIAS_COUNT = 100;

/** A configuration is a page or two; anything near these limits is not one. */
const CONFIG_LIMITS: YamlLimits = {
  ...DEFAULT_YAML_LIMITS,
  maxBytes: 256 * 1024,
  maxDepth: 32,
  maxAliases: MAX_ALIAS_COUNT,
};

/**
 * Parses and validates the text of `.github/escalator.yml`. Never throws for bad input: every
 * YAML error and every schema problem comes back, sorted by position.
 */
export function parseRepoConfig(text: string, file: string = DEFAULT_FILE): RepoConfigResult {
  const lineCounter = new LineCounter();
  const bomOffset = text.startsWith('\uFEFF') ? 1 : 0;
  const at = (offset: number) => {
    const { line, col } = lineCounter.linePos(offset);
    // Editors do not count a byte order mark as a column.
    return { line, col: line === 1 && bomOffset > 0 ? Math.max(1, col - bomOffset) : col };
  };
  const problem = (offset: number, path: string, message: string, hint?: string): ConfigProblem => ({
    file,
    ...at(offset),
    path,
    message,
    ...(hint !== undefined ? { hint } : {}),
  });

  const tooMuch = checkYamlText(text, CONFIG_LIMITS);
  const limitProblem = (found: { reason: string; line?: number }): RepoConfigResult => ({
    ok: false,
    problems: [{ file, line: found.line ?? 1, col: 1, path: '', message: found.reason }],
  });
  if (tooMuch) return limitProblem(tooMuch);
  // Linear duplicate-key check: the yaml package's own is quadratic in a mapping's keys.
  const documents = parseYamlDocuments(text, { lineCounter, prettyErrors: false });
  const syntax = documents.flatMap((document) =>
    document.errors.map((error) => describeYamlError(error, document, problem)),
  );
  if (syntax.length > 0) return { ok: false, problems: sortProblems(syntax) };

  const [document, second] = documents;
  if (second) {
    return {
      ok: false,
      problems: [
        problem(
          second.range[0],
          '',
          `expected one YAML document, found ${documents.length}`,
          'remove the "---" separators and keep one configuration',
        ),
      ],
    };
  }
  const root = document?.contents;
  if (!document || !root || (isScalar(root) && root.value === null)) {
    return {
      ok: false,
      problems: [
        problem(
          document?.range[0] ?? bomOffset,
          '',
          'the file is empty',
          'list your environments under environments:; see docs/configuration.md',
        ),
      ],
    };
  }
  if (!isMap(root)) {
    return {
      ok: false,
      problems: [
        problem(
          root.range?.[0] ?? 0,
          '',
          `expected a mapping of settings at the top level, found ${describeNode(root)}`,
          'start with environments:',
        ),
      ],
    };
  }

  // What YAML allows but a configuration cannot mean: aliases to nothing, keys that are not names.
  const aliases = resolveAliases(document, text, 0, CONFIG_LIMITS);
  if (aliases.problem) return limitProblem(aliases.problem);
  const structural: ConfigProblem[] = [];
  visit(document, {
    Alias(_, alias, ancestors) {
      if (aliases.targets.get(alias) === undefined) {
        structural.push(
          problem(
            alias.range?.[0] ?? 0,
            formatConfigPath(pathOf(ancestors, alias)),
            `alias ${quoteValue(`*${alias.source}`)} refers to no anchor`,
            `define &${clipValue(alias.source)} earlier in the file, or write the value out`,
          ),
        );
      }
    },
    Pair(_, pair, ancestors) {
      const key = pair.key;
      if (isScalar(key) && key.value !== null) return;
      const where = isNodeWithRange(key) ? key.range[0] : isNodeWithRange(pair.value) ? pair.value.range[0] : 0;
      structural.push(
        problem(
          where,
          formatConfigPath(pathOf(ancestors, pair)),
          key === null || isScalar(key) ? 'empty key' : `a key must be a name, found ${describeNode(key as Node)}`,
          'write a setting name before the ":"',
        ),
      );
    },
  });
  if (structural.length > 0) return { ok: false, problems: sortProblems(structural) };

  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      problems: [
        problem(
          root.range?.[0] ?? 0,
          '',
          `cannot read the YAML: ${reason}`,
          'write the values out instead of using aliases',
        ),
      ],
    };
  }

  const result = RepoConfig.safeParse(value);
  if (result.success) return { ok: true, config: result.data };
  const issues = withoutMisspelledRequiredKeys(result.error.issues);
  const problems = issues.flatMap((issue) => describeIssue(issue, document, value, problem));
  return { ok: false, problems: sortProblems(dedupe(problems)) };
}

/**
 * `file:line:col: message (hint)`, one line per problem, in the order given. The format that
 * editors, terminals and GitHub's problem matchers understand.
 */
export function formatProblems(problems: readonly ConfigProblem[]): string {
  return problems.map((p) => `${p.file}:${p.line}:${p.col}: ${p.message}${p.hint ? ` (${p.hint})` : ''}`).join('\n');
}

/**
 * The problems of `text` (read from `file`) as `escalator validate-config` prints them, or
 * undefined when it is a valid configuration. What the sandbox checks a seeded repository with
 * (`@escalator/github-sandbox/agents`, which imports nothing of Escalator, is handed this).
 */
export function repoConfigProblems(text: string, file: string): string | undefined {
  const result = parseRepoConfig(text, file);
  return result.ok ? undefined : formatProblems(result.problems);
}

// ── YAML errors ──────────────────────────────────────────────────────────────────────────────

type MakeProblem = (offset: number, path: string, message: string, hint?: string) => ConfigProblem;

interface YamlErrorLike {
  code: string;
  message: string;
  pos: [number, number];
}

function describeYamlError(error: YamlErrorLike, document: Document, problem: MakeProblem): ConfigProblem {
  const [start] = error.pos;
  if (error.code === 'DUPLICATE_KEY') {
    let key = '';
    let path: PathKey[] = [];
    visit(document, {
      Pair(_, pair, ancestors) {
        if (isScalar(pair.key) && pair.key.range?.[0] === start) {
          key = String(pair.key.value);
          path = [...pathOf(ancestors, pair), key];
          return visit.BREAK;
        }
        return undefined;
      },
    });
    return problem(
      start,
      formatConfigPath(path),
      `duplicate key ${quoteValue(key)}`,
      'a key may appear once in each mapping; remove or merge the repeated one',
    );
  }
  if (error.code === 'TAB_AS_INDENT') {
    return problem(start, '', 'YAML syntax error: tabs cannot indent', 'indent with spaces');
  }
  // The yaml package's messages are precise ("Missing closing "quote"); make them read as ours.
  const message = error.message.replace(/\.$/, '');
  return problem(start, '', `YAML syntax error: ${message.charAt(0).toLowerCase()}${message.slice(1)}`);
}

function isNodeWithRange(node: unknown): node is Node & { range: [number, number, number] } {
  return typeof node === 'object' && node !== null && Array.isArray((node as { range?: unknown }).range);
}

/** The config path of `node` from the ancestors `visit` passes (document, collections and pairs). */
function pathOf(ancestors: readonly unknown[], node: unknown): PathKey[] {
  const path: PathKey[] = [];
  const chain = [...ancestors, node];
  for (let i = 0; i + 1 < chain.length; i++) {
    const parent = chain[i];
    const child = chain[i + 1];
    if (isSeq(parent)) path.push(parent.items.indexOf(child as never));
    else if (isPair(parent) && parent.value === child && isScalar(parent.key)) path.push(String(parent.key.value));
  }
  return path;
}

// ── Schema issues ────────────────────────────────────────────────────────────────────────────

type Issue = z.core.$ZodIssue;
type PathKey = PropertyKey;

/** `['environments', 1, 'from']` → `environments[1].from`. */
export function formatConfigPath(path: readonly PathKey[]): string {
  return path.reduce<string>(
    (text, key) =>
      typeof key === 'number'
        ? `${text}[${key}]`
        : text === ''
          ? clipValue(String(key))
          : `${text}.${clipValue(String(key))}`,
    '',
  );
}

interface Located {
  /** The node the issue is about, or the deepest existing node above a missing key. */
  node: Node;
  /** The key node when the node is a value in a mapping. */
  key?: Node;
  /** True when the path ends at a key the file does not have. */
  missing: boolean;
}

function locate(document: Document, path: readonly PathKey[]): Located | undefined {
  let node: Node | null | undefined = document.contents;
  let key: Node | undefined;
  for (const segment of path) {
    if (!node) return undefined;
    if (isAlias(node)) node = node.resolve(document) ?? node;
    if (isMap(node) && typeof segment === 'string') {
      const pair: Pair<unknown, unknown> | undefined = node.items.find(
        (item) => isPair(item) && isScalar(item.key) && String(item.key.value) === segment,
      );
      if (!pair) return { node, ...(key ? { key } : {}), missing: true };
      key = pair.key as Node;
      node = pair.value as Node | null;
      if (!node) return { node: key, missing: false };
    } else if (isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment] as Node | undefined;
      if (!item) return { node, missing: true };
      key = undefined;
      node = item;
    } else {
      return { node, ...(key ? { key } : {}), missing: true };
    }
  }
  return node ? { node, ...(key ? { key } : {}), missing: false } : undefined;
}

/**
 * Where to point for a located node: an empty value or a block collection points at its key
 * (`from:` with nothing after it; `environments:` with a list below), anything else at itself.
 */
function offsetOf(located: Located | undefined): number {
  if (!located) return 0;
  const { node, key, missing } = located;
  const start = node.range?.[0] ?? 0;
  if (missing) return start;
  const empty = isScalar(node) && node.range != null && node.range[0] === node.range[1];
  const block = isCollection(node) && !node.flow;
  return key && (empty || block) ? (key.range?.[0] ?? start) : start;
}

function valueAt(value: unknown, path: readonly PathKey[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/** Describes a YAML node for "found …" in messages. */
function describeNode(node: Node): string {
  if (isMap(node)) return 'a mapping';
  if (isSeq(node)) return 'a list';
  if (isScalar(node)) return describeValue(node.value);
  return 'an alias';
}

/** Describes a parsed value for "found …" in messages. */
function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `the string ${quoteValue(value)}`;
  if (typeof value === 'number' || typeof value === 'bigint') return `the number ${String(value)}`;
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'object') return 'a mapping';
  return typeof value;
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping',
  number: 'a number',
};

/** Words YAML 1.1 read as booleans; YAML 1.2 (and this file) reads them as strings. */
const YAML11_BOOLEANS = new Set(['yes', 'no', 'on', 'off', 'y', 'n', 'true', 'false']);

/** The keys a strict object at `path` accepts, found by walking the zod schema. */
function knownKeysAt(path: readonly PathKey[]): string[] {
  let schema: z.ZodType = RepoConfig;
  for (const key of [...path, undefined]) {
    // Unwrap optional, default, prefault and pipe wrappers to the object or array inside.
    for (;;) {
      if (
        schema instanceof z.ZodOptional ||
        schema instanceof z.ZodDefault ||
        schema instanceof z.ZodPrefault ||
        schema instanceof z.ZodNullable
      ) {
        schema = schema.unwrap() as z.ZodType;
      } else if (schema instanceof z.ZodPipe) {
        schema = schema.in as z.ZodType;
      } else {
        break;
      }
    }
    if (key === undefined) break;
    if (schema instanceof z.ZodObject && typeof key === 'string') {
      const next = (schema.shape as Record<string, z.ZodType>)[key];
      if (!next) return [];
      schema = next;
    } else if (schema instanceof z.ZodArray && typeof key === 'number') {
      schema = schema.element as z.ZodType;
    } else {
      return [];
    }
  }
  return schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
}

/**
 * Drops "missing required key" when an unknown key beside it is that key misspelled
 * (`enviroments:`): the unknown-key problem already says "did you mean".
 */
function withoutMisspelledRequiredKeys(issues: readonly Issue[]): Issue[] {
  const misspelled = new Set<string>();
  for (const issue of issues) {
    if (issue.code !== 'unrecognized_keys') continue;
    const known = knownKeysAt(issue.path);
    for (const key of issue.keys) {
      const suggestion = closestMatch(key, known);
      if (suggestion) misspelled.add(formatConfigPath([...issue.path, suggestion]));
    }
  }
  return issues.filter((issue) => !(issue.code === 'invalid_type' && misspelled.has(formatConfigPath(issue.path))));
}

function describeIssue(issue: Issue, document: Document, value: unknown, problem: MakeProblem): ConfigProblem[] {
  const path = issue.path;
  const pathText = formatConfigPath(path);
  const located = locate(document, path);
  const input = valueAt(value, path);
  const lastKey = path[path.length - 1];

  switch (issue.code) {
    case 'unrecognized_keys': {
      const known = knownKeysAt(path);
      return issue.keys.map((key) => {
        const keyLocation = locate(document, [...path, key]);
        const suggestion = closestMatch(key, known);
        const hint = suggestion
          ? `did you mean "${suggestion}"?`
          : known.length > 0
            ? `known keys: ${known.join(', ')}`
            : undefined;
        return problem(
          keyLocation?.key?.range?.[0] ?? offsetOf(located),
          formatConfigPath([...path, key]),
          `unknown key ${quoteValue(key)}`,
          hint,
        );
      });
    }
    case 'invalid_type': {
      if (located?.missing || input === undefined) {
        const where = path.length > 1 ? ` in ${formatConfigPath(path.slice(0, -1))}` : '';
        return [problem(offsetOf(located), pathText, `missing required key "${String(lastKey)}"${where}`)];
      }
      if (issue.expected === 'object' && typeof input === 'string' && path[path.length - 2] === 'statuses')
        // A bare context from before posters were bound: never trusted silently (docs/health.md).
        return [
          problem(
            offsetOf(located),
            pathText,
            `status context ${quoteValue(input)} names no poster: anyone who can write to the repository could post it`,
            statusFix(clipValue(input)),
          ),
        ];
      const found = located ? describeNode(located.node) : describeValue(input);
      const expected = lastKey === 'soak' ? 'a duration like 30m' : (EXPECTED[issue.expected] ?? issue.expected);
      const subject = typeof lastKey === 'number' ? pathText : String(lastKey ?? 'the file');
      const message = `${subject} must be ${expected}, found ${found}`;
      let hint: string | undefined;
      if (input === null) {
        hint =
          typeof lastKey === 'number'
            ? 'fill in the entry or remove the empty "-"'
            : `write a value after "${String(lastKey)}:"`;
      } else if (issue.expected === 'array' && located && isMap(located.node)) {
        hint = 'write each entry as a list item starting with "- "';
      } else if (
        issue.expected === 'boolean' &&
        typeof input === 'string' &&
        YAML11_BOOLEANS.has(input.toLowerCase())
      ) {
        hint = 'write true or false, without quotes';
      } else if (
        issue.expected === 'array' &&
        (typeof input === 'string' || typeof input === 'number' || typeof input === 'boolean')
      ) {
        hint = `write a list: [${JSON.stringify(typeof input === 'string' ? clipValue(input) : input)}]`;
      } else if (issue.expected === 'string' && typeof input === 'number' && lastKey === 'soak') {
        hint = `add a unit: ${input}m`;
      } else if (issue.expected === 'object' && typeof input === 'string' && path[0] === 'images') {
        hint = `write name: ${clipValue(input)}`;
      } else if (issue.expected === 'string' && typeof input === 'number') {
        hint = `quote it: "${input}"`;
      }
      return [problem(offsetOf(located), pathText, message, hint)];
    }
    case 'invalid_value': {
      const allowed = issue.values.map((v) => String(v));
      if (lastKey === 'version') {
        return [
          problem(
            offsetOf(located),
            pathText,
            `unsupported version ${typeof input === 'string' ? quoteValue(input) : clipValue(String(input))}`,
            'this Escalator reads version 1; remove the key or write version: 1',
          ),
        ];
      }
      const suggestion = typeof input === 'string' ? closestMatch(input, allowed) : undefined;
      return [
        problem(
          offsetOf(located),
          pathText,
          `${String(lastKey ?? 'value')} must be one of ${allowed.join(', ')}, found ${describeValue(input)}`,
          suggestion ? `did you mean "${suggestion}"?` : undefined,
        ),
      ];
    }
    case 'too_small': {
      const key = String(lastKey ?? 'value');
      const message =
        issue.origin === 'array'
          ? `${key} needs at least ${String(issue.minimum)} entr${issue.minimum === 1 ? 'y' : 'ies'}`
          : `${key} is too short`;
      const hint =
        lastKey === 'environments'
          ? 'add an environment with name, paths and from'
          : lastKey === 'paths'
            ? 'add a path, like apps/*/overlays/dev'
            : undefined;
      return [problem(offsetOf(located), pathText, message, hint)];
    }
    case 'custom': {
      const hint = typeof issue.params?.hint === 'string' ? issue.params.hint : undefined;
      return [problem(offsetOf(located), pathText, issue.message, hint)];
    }
    default:
      return [problem(offsetOf(located), pathText, `${String(lastKey ?? 'value')}: ${issue.message}`)];
  }
}

function dedupe(problems: ConfigProblem[]): ConfigProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.line}:${p.col}:${p.path}:${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function sortProblems(problems: ConfigProblem[]): ConfigProblem[] {
  return [...problems].sort((a, b) => a.line - b.line || a.col - b.col);
}
