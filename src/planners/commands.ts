/**
 * `/escalator <command> [args]` in a pull request or issue comment. The first line of visible
 * text that starts with `/escalator` counts. What GitHub does not show as a line of its own does
 * not: quoted replies (`> /escalator …` and their lazy continuation lines), fenced code (``` or
 * ~~~, closed only by a fence of the same character at least as long), indented code (4 columns;
 * a tab counts to the next multiple of 4), HTML blocks and HTML comments, also when a comment
 * spans lines. The block rules follow CommonMark 0.31 (https://spec.commonmark.org/0.31.2/),
 * erring on the side of "hidden": a line that only might be code or HTML never runs a command.
 */
import { parseFreezeWords, type FreezeRequest } from './freeze.js';

export type Command =
  | { name: 'hold'; environment?: string; app?: string }
  | { name: 'release'; environment?: string; app?: string }
  | { name: 'promote'; environment: string; app?: string; now?: boolean }
  | { name: 'rollback'; environment: string; app?: string; now?: never }
  | { name: 'freeze'; request: FreezeRequest }
  | { name: 'unfreeze'; environment?: string }
  | { name: 'plan' }
  | { name: 'diff' }
  | { name: 'help' };

export type ParsedCommand = { ok: true; command: Command } | { ok: false; message: string } | null;

export const commandHelp = [
  "`/escalator hold [env] [app]` — hold promotion into an environment (default: this PR's)",
  '`/escalator release [env] [app]` — lift a hold',
  '`/escalator promote <env> [app] [--now]` — open or refresh the promotion into `env` now; `--now` also skips its soak (the pull request says so)',
  '`/escalator rollback <env> [app]` — open a PR restoring the versions `env` ran before',
  '`/escalator freeze [env|all] [for 2d | until 2027-01-04] [reason]` — stop automatic merges and `promote` into an environment or all of them (rollbacks stay allowed)',
  '`/escalator unfreeze [env|all]` — lift a freeze',
  '`/escalator plan` — answer with the promotion plan, changing nothing',
  '`/escalator diff` — render the manifest diff of this PR again',
].join('\n');

const word = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

export function parseCommand(body: string): ParsedCommand {
  for (const line of visibleCommandLines(body)) {
    const [, name = 'help', ...words] = line.split(/\s+/);
    // A freeze carries a reason in free words; its grammar is its own (src/planners/freeze.ts).
    if (name === 'freeze') {
      const parsed = parseFreezeWords(words);
      return parsed.ok ? { ok: true, command: { name, request: parsed.request } } : parsed;
    }
    const flags = words.filter((w) => w.startsWith('--'));
    const args = words.filter((w) => !w.startsWith('--'));
    const shorten = (text: string): string => (text.length > 40 ? `${text.slice(0, 40)}…` : text);
    if (args.some((arg) => !word.test(arg)))
      return {
        ok: false,
        message: `"${shorten(args.find((arg) => !word.test(arg)) as string)}" is not an environment or app name`,
      };
    const flag = flags.find((f) => name !== 'promote' || f !== '--now');
    if (flag)
      return {
        ok: false,
        message:
          name === 'promote'
            ? `unknown option "${shorten(flag)}"; /escalator promote takes only --now`
            : `/escalator ${shorten(name)} takes no option ("${shorten(flag)}"); only /escalator promote takes --now`,
      };
    switch (name) {
      case 'hold':
      case 'release':
        if (args.length > 2)
          return { ok: false, message: `/escalator ${name} takes at most an environment and an app` };
        return {
          ok: true,
          command: { name, ...(args[0] ? { environment: args[0] } : {}), ...(args[1] ? { app: args[1] } : {}) },
        };
      case 'promote':
      case 'rollback':
        if (args.length < 1 || args.length > 2)
          return {
            ok: false,
            message: `/escalator ${name} needs an environment, and optionally an app: /escalator ${name} <env> [app]${name === 'promote' ? ' [--now]' : ''}`,
          };
        return {
          ok: true,
          command:
            name === 'promote'
              ? {
                  name,
                  environment: args[0] as string,
                  ...(args[1] ? { app: args[1] } : {}),
                  ...(flags.includes('--now') ? { now: true } : {}),
                }
              : { name, environment: args[0] as string, ...(args[1] ? { app: args[1] } : {}) },
        };
      case 'unfreeze':
        if (args.length > 1) return { ok: false, message: '/escalator unfreeze takes at most an environment (or all)' };
        return { ok: true, command: { name, ...(args[0] ? { environment: args[0] } : {}) } };
      case 'plan':
      case 'diff':
      case 'help':
        return { ok: true, command: { name } };
      default: {
        const near = nearestCommand(name);
        return {
          ok: false,
          message: `unknown command "${shorten(name)}"${near ? `; did you mean /escalator ${near}?` : ''}`,
        };
      }
    }
  }
  return null;
}

const commandNames = ['hold', 'release', 'promote', 'rollback', 'freeze', 'unfreeze', 'plan', 'diff', 'help'];

/**
 * The command a mistyped name was most likely meant as: the one at the smallest edit distance
 * (insertions, deletions, substitutions and swaps of two neighbours count one each), when that is
 * at most 2 (1 for names of up to 4 letters) and no other command is as near.
 */
export function nearestCommand(typed: string): string | undefined {
  const name = typed.toLowerCase();
  if (name.length > 40) return undefined;
  const scored = commandNames
    .map((command) => ({ command, distance: editDistance(name, command) }))
    .sort((a, b) => a.distance - b.distance);
  const [best, next] = scored;
  if (!best || best.distance === 0 || best.distance > (best.command.length <= 4 ? 1 : 2)) return undefined;
  return next && next.distance === best.distance ? undefined : best.command;
}

/** Optimal string alignment distance between `a` and `b`. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, d[i - 2]![j - 2]! + 1);
      d[i]![j] = value;
    }
  return d[a.length]![b.length]!;
}

/** The column width of a line's leading spaces and tabs (a tab advances to the next multiple of 4). */
function indentation(line: string): number {
  let column = 0;
  for (const ch of line) {
    if (ch === ' ') column += 1;
    else if (ch === '\t') column += 4 - (column % 4);
    else break;
  }
  return column;
}

/** HTML block starts (CommonMark §4.6, types 1–7) and what ends each: a pattern, or a blank line. */
const htmlBlockStarts: Array<{ start: RegExp; end: RegExp | 'blank' }> = [
  { start: /^<(?:pre|script|style|textarea)(?:[\s>]|$)/i, end: /<\/(?:pre|script|style|textarea)>/i },
  { start: /^<!--/, end: /-->/ },
  { start: /^<\?/, end: /\?>/ },
  { start: /^<![A-Za-z]/, end: />/ },
  { start: /^<!\[CDATA\[/, end: /\]\]>/ },
  {
    start:
      /^<\/?(?:address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul)(?:[\s>]|\/>|$)/i,
    end: 'blank',
  },
  // Type 7 (any other complete tag alone on its line) cannot interrupt a paragraph in CommonMark;
  // taking it as a block everywhere only ever hides more.
  { start: /^<\/?[A-Za-z][A-Za-z0-9-]*(?:\s[^>]*)?\/?>\s*$/, end: 'blank' },
];

/** Block quote markers and list item markers in front of a line's content. */
const containerPrefix = /^ {0,3}(?:>|[-+*](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$))[ \t]?/;

/** True when `text`, from position `from` on, opens an HTML comment it does not close. */
function opensComment(text: string, from = 0): boolean {
  let at = from;
  for (;;) {
    const open = text.indexOf('<!--', at);
    if (open === -1) return false;
    const close = text.indexOf('-->', open + 4);
    if (close === -1) return true;
    at = close + 3;
  }
}

/** Where the first match of `pattern` in `text` ends. */
function endOf(text: string, pattern: RegExp): number {
  const match = pattern.exec(text);
  return match ? match.index + match[0].length : text.length;
}

/** Strip block quote and list item markers; says whether a block quote marker was among them. */
function stripContainers(line: string): { content: string; quote: boolean } {
  let content = line;
  let quote = false;
  for (let match = containerPrefix.exec(content); match; match = containerPrefix.exec(content)) {
    if (match[0].trimStart().startsWith('>')) quote = true;
    content = content.slice(match[0].length);
  }
  return { content, quote };
}

/**
 * How many `<details>` elements are open after `line`: their content is collapsed, not visible
 * until someone opens it, so no command inside one runs (even after a blank line, where
 * CommonMark reads markdown again).
 */
function detailsDepth(line: string, depth: number): number {
  let open = depth;
  for (const match of line.matchAll(/<(\/?)details(?=[\s>/])[^>]*>/gi))
    open = match[1] ? Math.max(0, open - 1) : open + 1;
  return open;
}

/**
 * The lines of a comment that GitHub shows as their own line of visible text, trimmed: what is
 * left after code blocks, HTML blocks, HTML comments, collapsed `<details>` and block quotes are
 * taken out.
 */
function* visibleCommandLines(body: string): Generator<string> {
  const closingFence = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
  let fence: { char: string; length: number; nested: boolean } | undefined;
  let html: RegExp | 'blank' | undefined;
  let inComment = false;
  let quoted = false;
  let collapsed = 0;
  for (const line of body.split(/\r\n?|\n/)) {
    const blank = line.trim() === '';
    const { content, quote } = stripContainers(line);
    if (fence) {
      // A fence opened inside a quote or list item may be closed inside it too; one opened at the
      // top level only by a top-level closing fence (`- ```` is code there).
      const close = closingFence.exec(line) ?? (fence.nested ? closingFence.exec(content) : null);
      if (close && close[1]![0] === fence.char && close[1]!.length >= fence.length) fence = undefined;
      continue;
    }
    if (html) {
      collapsed = detailsDepth(line, collapsed);
      if (html === 'blank' ? blank : html.test(line)) {
        // Raw HTML after the end on the same line may open a comment that hides what follows.
        if (html !== 'blank') inComment = opensComment(line, endOf(line, html));
        html = undefined;
      }
      continue;
    }
    if (inComment) {
      const close = line.indexOf('-->');
      if (close !== -1) inComment = opensComment(line, close + 3);
      continue;
    }
    if (blank) {
      quoted = false;
      continue;
    }
    const indented = indentation(content) > 3;
    const opener = indented ? null : /^[ \t]*(`{3,}|~{3,})(.*)$/.exec(content);
    if (opener && !(opener[1]![0] === '`' && opener[2]!.includes('`'))) {
      fence = { char: opener[1]![0]!, length: opener[1]!.length, nested: content !== line };
      continue;
    }
    const trimmed = content.trimStart();
    if (!indented) collapsed = detailsDepth(line, collapsed);
    const block = indented ? undefined : htmlBlockStarts.find((candidate) => candidate.start.test(trimmed));
    if (block) {
      if (block.end === 'blank' || !block.end.test(trimmed)) html = block.end;
      else inComment = opensComment(trimmed, endOf(trimmed, block.end));
      continue;
    }
    // A line right after a quoted one (no blank line between) continues the quote lazily.
    const candidate =
      collapsed === 0 && !quote && !quoted && content === line && indentation(line) <= 3 ? line.trim() : '';
    quoted ||= quote;
    inComment = opensComment(line);
    if (/^\/escalator(\s|$)/.test(candidate)) yield candidate;
  }
}
