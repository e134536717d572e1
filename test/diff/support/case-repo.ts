/**
 * Golden cases for the rendered diff live in `test/fixtures/diff/<case>/`: `base/` is the whole
 * tree at base; `head/` holds the files that differ at head (added or changed), and `case.json`
 * may list `deleted` paths. The test commits base, then head, into a fresh git repository with
 * fixed authors and dates, so commit SHAs — and so the expected comments — are stable.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

export const CaseMeta = z.object({
  about: z.string().min(1),
  deleted: z.array(z.string()).default([]),
  /** Secret values that must not appear in any output. */
  canaries: z.array(z.string()).default([]),
  /** Target patterns (diff.paths). */
  targets: z.array(z.string()).default([]),
  /** Use the fake helm script in test/diff/support/fake-helm.sh. */
  fakeHelm: z.boolean().default(false),
  mergeCommit: z.boolean().optional(),
  maxChars: z.number().int().positive().optional(),
  /** The run's cap on targets (renderAndDiff's maxTargets). */
  maxTargets: z.number().int().positive().optional(),
  /** What the reviewer must see at the top of the comment: before the targets table (anywhere in the short form). */
  top: z.array(z.string()).default([]),
  /** What must appear somewhere in the comment. */
  contains: z.array(z.string()).default([]),
  /** Real-helm cases (test/fixtures/diff-helm): helm 3.17 and helm 4.1 render this case differently. */
  helmOutputsDiffer: z.boolean().default(false),
  /** What must not appear anywhere in the comment. */
  absent: z.array(z.string()).default([]),
  /** The check run's conclusion the case expects (success, failure, or neutral when a target is not rendered). */
  conclusion: z.enum(['success', 'failure', 'neutral']).optional(),
});
export type CaseMeta = z.infer<typeof CaseMeta>;

export interface CaseRepo {
  dir: string;
  base: string;
  head: string;
  meta: CaseMeta;
  cleanup: () => void;
}

const gitEnv = {
  GIT_AUTHOR_NAME: 'Escalator Tests',
  GIT_AUTHOR_EMAIL: 'tests@escalator.invalid',
  GIT_COMMITTER_NAME: 'Escalator Tests',
  GIT_COMMITTER_EMAIL: 'tests@escalator.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

function git(dir: string, args: string[], date?: string): string {
  return execFileSync('git', ['-C', dir, ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      ...gitEnv,
      ...(date ? { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
    .toString('utf8')
    .trim();
}

export function readCaseMeta(caseDir: string): CaseMeta {
  const file = join(caseDir, 'case.json');
  return CaseMeta.parse(existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { about: 'no case.json' });
}

/** Build the case's repository: commit base, then head. */
export function buildCaseRepo(caseDir: string): CaseRepo {
  const meta = readCaseMeta(caseDir);
  const dir = mkdtempSync(join(tmpdir(), 'escalator-diff-case-'));
  git(dir, ['init', '-q', '-b', 'main']);
  if (existsSync(join(caseDir, 'base')))
    cpSync(join(caseDir, 'base'), dir, { recursive: true, verbatimSymlinks: true });
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '--allow-empty', '-m', 'base'], '2024-01-01T00:00:00Z');
  const base = git(dir, ['rev-parse', 'HEAD']);
  for (const path of meta.deleted) rmSync(join(dir, path), { recursive: true, force: true });
  if (existsSync(join(caseDir, 'head')))
    cpSync(join(caseDir, 'head'), dir, { recursive: true, verbatimSymlinks: true });
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '--allow-empty', '-m', 'head'], '2024-01-02T00:00:00Z');
  const head = git(dir, ['rev-parse', 'HEAD']);
  return { dir, base, head, meta, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Markdown that GitHub renders as intended: every code fence closed by a fence at least as long,
 * and `<details>` blocks opened and closed outside fences, in order.
 */
export function unbalancedMarkdown(markdown: string): string | undefined {
  let fence: string | undefined;
  let details = 0;
  for (const [index, line] of markdown.split('\n').entries()) {
    const run = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (run && run[0] === fence[0] && run.length >= fence.length && line.trim() === run) fence = undefined;
      continue;
    }
    if (run) {
      fence = run;
      continue;
    }
    if (line === '<details>') details++;
    if (line === '</details>') details--;
    if (details < 0) return `line ${index + 1}: </details> without <details>`;
  }
  if (fence) return 'a code fence is never closed';
  if (details !== 0) return `${details} <details> never closed`;
  return undefined;
}
