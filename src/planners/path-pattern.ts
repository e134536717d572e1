import { quoteValue } from './quote-value.js';

/**
 * Path patterns: the one dialect of every `paths` Escalator reads — `environments[].paths` and
 * `diff.paths` in `.github/escalator.yml`, and the `paths` and `repos` of relay targets
 * (docs/configuration.md, "Paths"). One parser both checks a pattern, for the problems the
 * configuration reports with their lines, and compiles it: what is accepted is what matches.
 *
 * - Segments are separated by `/`, relative to the repository root; a trailing `/` is allowed.
 *   No empty, `.` or `..` segment and no `\`: GitHub writes repository paths without them.
 * - `**`, as a whole segment, matches any number of segments, none included.
 * - In any other segment: `*` matches one or more characters, at most once a segment (the first
 *   `*` of an environment path names the app); `?` matches one character; `[abc]`, `[a-z]` one
 *   character of the class and `[!abc]` (or `[^abc]`) one not in it; `{web,api}` one of the
 *   listed names. Everything else is literal.
 * - A pattern matches a path, and every path below a directory it matches.
 *
 * Matching costs time in the product of the pattern's and the path's segment counts, whatever
 * the pattern: a segment has at most one `*`, and `**` tries each split once (failures are
 * remembered), so a repository's configuration cannot make a worker backtrack.
 */

/** Why a pattern cannot be used, and what to write instead. */
export interface PathPatternProblem {
  message: string;
  hint?: string;
}

type Segment =
  | { kind: 'globstar' }
  | { kind: 'literal'; text: string }
  /** `source` is a regular expression for one segment; `star` when it captures what `*` matched. */
  | { kind: 'wild'; source: string; star: boolean };

type Parsed = { ok: true; segments: Segment[] } | { ok: false; problem: PathPatternProblem };

/** Characters a class or a list may not hold (besides `/`, which separates segments). */
const NOT_INSIDE = new Set(['\\', '[', ']', '*', '?', '{', '}']);

const CLASS_HINT = 'a class is one character of a set, like [abc], [0-9] or [!abc]';
const LIST_HINT = 'a list is names separated by ",", like {web,api}; a name has no wildcard, "{" or "}"';

function escapeLiteral(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function escapeInClass(char: string): string {
  return char === '^' || char === '-' ? `\\${char}` : char;
}

/** One segment other than `**`, or why it cannot be matched. */
function parseSegment(segment: string, text: string): Segment | PathPatternProblem {
  const chars = [...segment];
  let source = '';
  let star = false;
  let wild = false;
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i] as string;
    if (char === '*') {
      source += '([^/]+)';
      star = wild = true;
    } else if (char === '?') {
      source += '[^/]';
      wild = true;
    } else if (char === '[') {
      const end = chars.indexOf(']', i + 1);
      if (end < 0) return { message: `path ${quoteValue(text)} opens a "[" that is never closed`, hint: CLASS_HINT };
      let body = chars.slice(i + 1, end);
      const shown = `[${body.join('')}]`;
      if (body.length === 0)
        return { message: `in path ${quoteValue(text)}, "[]" is an empty class`, hint: CLASS_HINT };
      const bad = body.find((c) => NOT_INSIDE.has(c));
      if (bad !== undefined)
        return {
          message: `in path ${quoteValue(text)}, the class ${quoteValue(shown)} holds ${quoteValue(bad)}`,
          hint: CLASS_HINT,
        };
      // A lone `!` or `^` is the character itself, as in the editors' pattern.
      const negate = (body[0] === '!' || body[0] === '^') && body.length > 1;
      if (negate) body = body.slice(1);
      let members = '';
      for (let k = 0; k < body.length; k++) {
        const from = body[k] as string;
        const to = body[k + 2];
        if (body[k + 1] === '-' && to !== undefined) {
          if ((from.codePointAt(0) ?? 0) > (to.codePointAt(0) ?? 0)) {
            return {
              message: `in path ${quoteValue(text)}, the range "${from}-${to}" of ${quoteValue(shown)} is backwards`,
              hint: `write the lower end first: "${to}-${from}"`,
            };
          }
          members += `${escapeInClass(from)}-${escapeInClass(to)}`;
          k += 2;
        } else members += escapeInClass(from);
      }
      source += `[${negate ? '^/' : ''}${members}]`;
      wild = true;
      i = end;
    } else if (char === ']') {
      return { message: `path ${quoteValue(text)} has a "]" outside a class`, hint: CLASS_HINT };
    } else if (char === '{') {
      const end = chars.indexOf('}', i + 1);
      if (end < 0) return { message: `path ${quoteValue(text)} opens a "{" that is never closed`, hint: LIST_HINT };
      const inner = chars.slice(i + 1, end).join('');
      const shown = `{${inner}}`;
      const names = inner.split(',');
      for (const name of names) {
        const bad = [...name].find((c) => NOT_INSIDE.has(c));
        if (bad !== undefined)
          return {
            message: `in path ${quoteValue(text)}, the list ${quoteValue(shown)} holds ${quoteValue(bad)}`,
            hint: LIST_HINT,
          };
        if (name === '')
          return {
            message: `in path ${quoteValue(text)}, the list ${quoteValue(shown)} has an empty name`,
            hint: LIST_HINT,
          };
        if (name === '.' || name === '..')
          return {
            message: `in path ${quoteValue(text)}, the list ${quoteValue(shown)} names ${quoteValue(name)}`,
            hint: 'repository paths have no "." or ".." segments; list directory or file names',
          };
      }
      source += `(?:${names.map(escapeLiteral).join('|')})`;
      wild = true;
      i = end;
    } else if (char === '}') {
      return { message: `path ${quoteValue(text)} closes a "}" that was never opened`, hint: LIST_HINT };
    } else {
      source += escapeLiteral(char);
    }
  }
  return wild ? { kind: 'wild', source, star } : { kind: 'literal', text: segment };
}

function parsePathPattern(text: string): Parsed {
  const fail = (message: string, hint?: string): Parsed => ({
    ok: false,
    problem: hint === undefined ? { message } : { message, hint },
  });
  if (text === '')
    return fail('path is empty', 'write a directory or file relative to the repository root, like apps/*/overlays/dev');
  if (text.includes('\\')) return fail(`path ${quoteValue(text)} contains "\\"`, 'separate path segments with "/"');
  if (text.startsWith('/'))
    return fail(
      `path ${quoteValue(text)} is absolute`,
      `write it relative to the repository root: ${quoteValue(text.replace(/^\/+/, ''))}`,
    );
  const raw = text.endsWith('/') ? text.slice(0, -1).split('/') : text.split('/');
  const segments: Segment[] = [];
  for (const segment of raw) {
    if (segment === '') return fail(`path ${quoteValue(text)} has an empty segment ("//")`, 'remove the extra "/"');
    if (segment === '..')
      return fail(
        `path ${quoteValue(text)} leaves the repository with ".."`,
        'write the path from the repository root',
      );
    if (segment === '.')
      return fail(
        `path ${quoteValue(text)} has a "." segment`,
        `remove the "./": ${quoteValue(raw.filter((s) => s !== '.').join('/'))}`,
      );
    if (segment === '**') {
      segments.push({ kind: 'globstar' });
      continue;
    }
    if (segment.includes('**'))
      return fail(
        `"**" in path ${quoteValue(text)} must be a whole segment`,
        'write it between slashes, like apps/**/kustomization.yaml',
      );
    if ((segment.match(/\*/g) ?? []).length > 1) {
      return fail(
        `path segment ${quoteValue(segment)} has more than one "*"`,
        'use one "*" per segment; "*" matches a whole name or part of one, like app-*',
      );
    }
    const parsed = parseSegment(segment, text);
    if ('message' in parsed) return { ok: false, problem: parsed };
    segments.push(parsed);
  }
  return { ok: true, segments };
}

/**
 * Why `text` is not a path pattern this dialect can match, or undefined when it is one. The
 * configuration turns the problem into `file:line:col: message (hint)`.
 */
export function checkPathPattern(text: string): PathPatternProblem | undefined {
  const parsed = parsePathPattern(text);
  return parsed.ok ? undefined : parsed.problem;
}

const LITERAL = String.raw`[^/*?\\[\]{}]`;
const CLASS = String.raw`\[[!^]?[^/\\[\]*?{}]+\]`;
const NAME = String.raw`(?!\.\.?[,}])[^/\\[\]{}*?,]+`;
const LIST = String.raw`\{${NAME}(?:,${NAME})*\}`;
const ATOM = String.raw`(?:${LITERAL}|\?|${CLASS}|${LIST})`;
const PATH_SEGMENT = String.raw`(?!\.\.?(?:/|$))(?:\*\*|${ATOM}+|${ATOM}*\*${ATOM}*)`;
/**
 * The editors' version of {@link checkPathPattern}, for the JSON Schema `pattern`: the same
 * language except that it cannot tell a backwards range (`[z-a]`) from a forward one.
 */
export const PATH_PATTERN = new RegExp(String.raw`^${PATH_SEGMENT}(?:/${PATH_SEGMENT})*/?$`);

/** A compiled pattern. */
export interface CompiledPathPattern {
  /** The pattern as written. */
  readonly pattern: string;
  /** Whether the pattern matches the whole of `path`. */
  test(path: string): boolean;
  /**
   * The match of `path` or of a directory above it (a pattern naming a directory owns what is
   * below it), with what the first `*` matched as `app`; `null` when neither matches.
   */
  match(path: string): { app?: string } | null;
}

type SegmentMatcher = { kind: 'globstar' } | { kind: 'one'; match: (name: string) => { capture?: string } | null };

function splitPath(path: string): string[] {
  return path.split('/').filter((segment) => segment !== '');
}

function matcherOf(segment: Segment, ignoreCase: boolean): SegmentMatcher {
  if (segment.kind === 'globstar') return segment;
  if (segment.kind === 'literal') {
    const text = ignoreCase ? segment.text.toLowerCase() : segment.text;
    return { kind: 'one', match: (name) => ((ignoreCase ? name.toLowerCase() : name) === text ? {} : null) };
  }
  const regex = new RegExp(`^${segment.source}$`, ignoreCase ? 'iu' : 'u');
  return {
    kind: 'one',
    match: (name) => {
      const found = regex.exec(name);
      if (!found) return null;
      return segment.star && found[1] !== undefined ? { capture: found[1] } : {};
    },
  };
}

/**
 * Whether `segments` match `names` from the start (all of them, or a leading part when `below`):
 * the captures of the `*`s in pattern order, or `null`. `**` takes as few segments as it can.
 */
function run(segments: readonly SegmentMatcher[], names: readonly string[], below: boolean): string[] | null {
  const width = names.length + 1;
  const failed = new Uint8Array((segments.length + 1) * width);
  const step = (p: number, f: number): string[] | null => {
    if (failed[p * width + f]) return null;
    let result: string[] | null = null;
    const segment = segments[p];
    if (segment === undefined) {
      result = below || f === names.length ? [] : null;
    } else if (segment.kind === 'globstar') {
      for (let next = f; next <= names.length && result === null; next++) result = step(p + 1, next);
    } else {
      const name = names[f];
      const found = name === undefined ? null : segment.match(name);
      const rest = found ? step(p + 1, f + 1) : null;
      result = rest === null || !found ? null : found.capture !== undefined ? [found.capture, ...rest] : rest;
    }
    if (result === null) failed[p * width + f] = 1;
    return result;
  };
  return step(0, 0);
}

/** Compiled patterns by text: a burst of pushes or a tree of files compiles each pattern once. */
const compiled = new Map<string, CompiledPathPattern>();
const MAX_COMPILED = 256;

/**
 * Compiles a pattern (with `ignoreCase` for repository names, which GitHub compares without
 * regard to case). A pattern {@link checkPathPattern} refuses matches nothing: configurations
 * are checked when they are read, and one indexed before a rule existed must not match by accident.
 */
export function compilePathPattern(pattern: string, options: { ignoreCase?: boolean } = {}): CompiledPathPattern {
  const ignoreCase = options.ignoreCase === true;
  const key = `${ignoreCase ? 'i' : 's'}${pattern}`;
  const cached = compiled.get(key);
  if (cached) return cached;
  const parsed = parsePathPattern(pattern);
  const segments = parsed.ok ? parsed.segments.map((segment) => matcherOf(segment, ignoreCase)) : undefined;
  const result: CompiledPathPattern = {
    pattern,
    test: (path) => segments !== undefined && run(segments, splitPath(path), false) !== null,
    match: (path) => {
      const captures = segments === undefined ? null : run(segments, splitPath(path), true);
      if (captures === null) return null;
      return captures.length > 0 ? { app: captures[0] as string } : {};
    },
  };
  if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
  compiled.set(key, result);
  return result;
}

/**
 * Matches a repository file path against one pattern: `{ app }` with what the first `*`
 * matched, `{}` when the pattern has no `*`, `null` when the file is not covered.
 *
 * @example matchPathPattern('apps/*\/overlays/dev', 'apps/hello/overlays/dev/kustomization.yaml') // { app: 'hello' }
 */
export function matchPathPattern(pattern: string, filePath: string): { app?: string } | null {
  return compilePathPattern(pattern).match(filePath);
}
