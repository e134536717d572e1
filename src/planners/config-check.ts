import { escapeText } from './markdown.js';

/** What the check reads of one configuration problem (`ConfigProblem` of src/config/repo-config.ts). */
export interface ConfigProblemLine {
  file: string;
  line: number;
  col: number;
  message: string;
  hint?: string;
}

/** What the check reads of a parsed configuration (`RepoConfigResult` of src/config/repo-config.ts). */
export type ConfigCheckInput =
  | { ok: true; config: { environments: ReadonlyArray<{ name: string; from: string }> } }
  | { ok: false; problems: readonly ConfigProblemLine[] };

/** What the `escalator/config` check run says about the `.github/escalator.yml` of a pull request. */
export interface ConfigCheck {
  conclusion: 'success' | 'failure';
  title: string;
  summary: string;
}

/** GitHub refuses a check run summary longer than 65,535 characters; leave room for the tail. */
const SUMMARY_BUDGET = 60_000;

/**
 * One problem as one line of code-block text: `file:line:col: message (hint)`, as the CLI prints
 * it, with every line break (LF, CRLF, lone CR, and the Unicode separators) shown as `\n` or `\r`
 * instead of taken, and other control characters as `\u….`. Problems quote the repository's
 * values, so a value must not start a line of its own in the block.
 */
function problemLine(problem: ConfigProblemLine): string {
  const text = `${problem.file}:${problem.line}:${problem.col}: ${problem.message}${problem.hint ? ` (${problem.hint})` : ''}`;
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\n]/g, (ch) =>
    ch === '\n' ? '\\n' : ch === '\r' ? '\\r' : `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * A fenced code block no line of `lines` can close: backticks, one more than the longest run of
 * backticks anywhere in the text (CommonMark §4.5: a closing fence is at least as long as the
 * opening one; a tilde line never closes a backtick fence). Its content is literal: no link,
 * image, HTML, mention or issue reference.
 */
function fenced(lines: readonly string[]): string[] {
  const longest = Math.max(2, ...lines.flatMap((line) => (line.match(/`+/g) ?? []).map((run) => run.length)));
  const fence = '`'.repeat(longest + 1);
  return [fence, ...lines, fence];
}

/**
 * The title and summary of the `escalator/config` check. Repository text reaches markdown only
 * inside a code block it cannot close (problems) or escaped (environment names).
 */
export function renderConfigCheck(parsed: ConfigCheckInput, configPath: string): ConfigCheck {
  if (parsed.ok) {
    const environments = parsed.config.environments
      .map((env) => `${escapeText(env.name)} (from ${escapeText(env.from)})`)
      .join(', ');
    return {
      conclusion: 'success',
      title: 'Escalator configuration is valid',
      summary: `${parsed.config.environments.length} environments: ${environments}`,
    };
  }
  const count = parsed.problems.length;
  const lines: string[] = [];
  let used = 0;
  for (const problem of parsed.problems) {
    const line = problemLine(problem);
    // The fence grows with the longest backtick run, so its length counts against the budget too.
    if (used + line.length + 2 * (line.length + 1) > SUMMARY_BUDGET) break;
    lines.push(line);
    used += line.length + 1;
  }
  const omitted = count - lines.length;
  return {
    conclusion: 'failure',
    title: `${count} problem${count === 1 ? '' : 's'} in ${configPath}`,
    summary: [
      ...fenced(lines),
      ...(omitted > 0
        ? ['', `… and ${omitted} more problem${omitted === 1 ? '' : 's'}; run the command below to see them all.`]
        : []),
      '',
      "Check it locally with `escalator validate-config` (installed from Escalator's repository as its README says; not `npx escalator`, which is another npm package).",
    ].join('\n'),
  };
}
