import type { SandboxContext } from './context.js';
import type { RequiredCheck, SandboxProtection, SandboxRepo, SandboxRuleset, SandboxUser } from './model.js';
import { permissionOf } from './routes/common.js';

/** Where a required check comes from: classic branch protection or a ruleset. */
export type CheckSource = { kind: 'protection' } | { kind: 'ruleset'; ruleset: SandboxRuleset };

export interface SourcedCheck extends RequiredCheck {
  source: CheckSource;
}

/** What a required check is on a commit, as the merge button sees it. */
export type CheckState = 'passing' | 'pending' | 'failing' | 'missing';

/**
 * `fnmatch` as rulesets use it on ref names: `*` stays within one path segment, `**` crosses
 * them, `?` is one character. Anything else is literal.
 */
function globToRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i] ?? '';
    if (char === '*' && pattern[i + 1] === '*') {
      source += '.*';
      i++;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

function refMatches(repo: SandboxRepo, pattern: string, ref: string): boolean {
  if (pattern === '~ALL') return true;
  if (pattern === '~DEFAULT_BRANCH') return ref === `refs/heads/${repo.defaultBranch}`;
  return globToRegExp(pattern).test(ref);
}

/** Rulesets that apply to a branch: enforcement `active`, included and not excluded by `ref_name`. */
export function activeRulesets(repo: SandboxRepo, branch: string): SandboxRuleset[] {
  const ref = `refs/heads/${branch}`;
  return repo.rulesets.filter(
    (ruleset) =>
      ruleset.enforcement === 'active' &&
      ruleset.include.some((pattern) => refMatches(repo, pattern, ref)) &&
      !ruleset.exclude.some((pattern) => refMatches(repo, pattern, ref)),
  );
}

export function protectionOf(repo: SandboxRepo, branch: string): SandboxProtection | undefined {
  return repo.protections.get(branch);
}

/**
 * Every status check required to merge into `branch`, from classic protection and active
 * rulesets. An administrator passes classic protection unless it enforces admins (GitHub lets
 * admins merge past it); rulesets here have no bypass actors, so they hold for everyone.
 */
export function requiredChecks(repo: SandboxRepo, branch: string, actor?: SandboxUser): SourcedCheck[] {
  const checks: SourcedCheck[] = [];
  const protection = protectionOf(repo, branch);
  const adminBypass = !!actor && !protection?.enforceAdmins && permissionOf(repo, actor) === 'admin';
  if (protection?.requiredStatusChecks && !adminBypass) {
    for (const check of protection.requiredStatusChecks.checks)
      checks.push({ ...check, source: { kind: 'protection' } });
  }
  for (const ruleset of activeRulesets(repo, branch)) {
    for (const check of ruleset.requiredStatusChecks?.checks ?? [])
      checks.push({ ...check, source: { kind: 'ruleset', ruleset } });
  }
  return checks;
}

/**
 * Whether merging into `branch` needs the head to contain the base ("Require branches to be up
 * to date": `strict` in classic protection, `strict_required_status_checks_policy` in a ruleset).
 */
export function requiresUpToDate(repo: SandboxRepo, branch: string, actor?: SandboxUser): boolean {
  const protection = protectionOf(repo, branch);
  const adminBypass = !!actor && !protection?.enforceAdmins && permissionOf(repo, actor) === 'admin';
  if (protection?.requiredStatusChecks?.strict && !adminBypass) return true;
  return activeRulesets(repo, branch).some((ruleset) => ruleset.requiredStatusChecks?.strict);
}

const PASSING_CONCLUSIONS = ['success', 'neutral', 'skipped'];

/**
 * The state of one required check on a commit: the newest check run of that name (from the App
 * when `appId` names it) and the newest commit status of that context (posted by that App when
 * `appId` names it). GitHub counts success, neutral and skipped check runs as passing.
 */
export function checkState(context: SandboxContext, repo: SandboxRepo, sha: string, check: RequiredCheck): CheckState {
  const app = context.state.requireApp();
  const fromApp = check.appId === null || check.appId === app.id;
  const runs = [...context.state.checkRuns.values()]
    .filter((run) => run.repoId === repo.id && run.headSha === sha && run.name === check.context && fromApp)
    .sort((a, b) => b.id - a.id);
  const statuses = [...context.state.statuses.values()]
    .filter(
      (status) =>
        status.repoId === repo.id &&
        status.sha === sha &&
        status.context === check.context &&
        (check.appId === null || (status.viaApp && check.appId === app.id)),
    )
    .sort((a, b) => b.id - a.id);
  const states: CheckState[] = [];
  const run = runs[0];
  if (run) {
    if (run.status !== 'completed') states.push('pending');
    else states.push(PASSING_CONCLUSIONS.includes(run.conclusion ?? '') ? 'passing' : 'failing');
  }
  const status = statuses[0];
  if (status) states.push(status.state === 'success' ? 'passing' : status.state === 'pending' ? 'pending' : 'failing');
  for (const wanted of ['passing', 'failing', 'pending'] as const) if (states.includes(wanted)) return wanted;
  return 'missing';
}

/** The first required check that is not passing on `sha`, with its state, or null when all pass. */
export function firstUnmet(
  context: SandboxContext,
  repo: SandboxRepo,
  sha: string,
  checks: RequiredCheck[],
): { check: RequiredCheck; state: Exclude<CheckState, 'passing'> } | null {
  for (const check of checks) {
    const state = checkState(context, repo, sha, check);
    if (state !== 'passing') return { check, state };
  }
  return null;
}

/**
 * GitHub's 405 message for a merge blocked by a required check: "is expected" while it has not
 * reported (or is still running), "is failing" once it failed.
 */
export function unmetMessage(unmet: { check: RequiredCheck; state: Exclude<CheckState, 'passing'> }): string {
  return unmet.state === 'failing'
    ? `Required status check "${unmet.check.context}" is failing.`
    : `Required status check "${unmet.check.context}" is expected.`;
}

/**
 * Any check run or status on `sha` that has not passed (failed or still running), required or
 * not: GitHub's `unstable` ("mergeable with non-passing commit status").
 */
export function anyNotPassing(context: SandboxContext, repo: SandboxRepo, sha: string): boolean {
  const names = new Set<string>();
  for (const run of context.state.checkRuns.values())
    if (run.repoId === repo.id && run.headSha === sha) names.add(run.name);
  for (const status of context.state.statuses.values())
    if (status.repoId === repo.id && status.sha === sha) names.add(status.context);
  return [...names].some((name) => checkState(context, repo, sha, { context: name, appId: null }) !== 'passing');
}
