import { RequestError } from '@octokit/request-error';
import type { Octokit } from './client.js';
import { isGraphqlError, type RepoId } from './repo.js';

/**
 * What GitHub itself holds a merge to: the status checks a branch requires (classic branch
 * protection and rulesets), GitHub's native auto-merge, and whether the required checks have
 * passed on a commit. Everything here reads with the App's own permissions — Contents,
 * Metadata, Checks and Commit statuses read — never Administration (docs/gates.md).
 */

/** One required status check and where it is required. */
export interface RequiredCheck {
  context: string;
  /** The App that must report it (`app_id` / `integration_id`); null: any App or commit status. */
  appId: number | null;
  source: 'branch-protection' | 'ruleset';
  /** The ruleset requiring it, for `source: 'ruleset'`. */
  rulesetId?: number;
}

/** How reading one source went. */
export type SourceReading = { readable: true } | { readable: false; status: number; reason: string };

export interface RequiredChecks {
  /** Every required check name, from both sources, sorted and unique. */
  contexts: string[];
  checks: RequiredCheck[];
  source: { branchProtection: SourceReading; rulesets: SourceReading };
  /** Both sources were read: `contexts` is the whole truth. */
  readable: boolean;
  /** When not readable: what could not be read and what to do, for the pull request and the log. */
  reason: string | null;
  /** Merging needs the head to contain the base ("Require branches to be up to date"). */
  upToDate: boolean;
  /** A ruleset sends pull requests into this branch through a merge queue. */
  mergeQueue: boolean;
  /**
   * Classic protection requires checks but lets administrators merge past them (GitHub's
   * `enforcement_level: non_admins`, the unticked "Do not allow bypassing the above settings").
   */
  adminsExempt: boolean;
}

function isStatus(error: unknown, ...statuses: number[]): error is RequestError {
  return error instanceof RequestError && statuses.includes(error.status);
}

function messageOf(error: RequestError): string {
  const data = error.response?.data as { message?: unknown } | undefined;
  return typeof data?.message === 'string' ? data.message : error.message;
}

/**
 * The status checks GitHub requires before anything merges into `branch`: those of classic
 * branch protection as `GET /repos/{o}/{r}/branches/{branch}` shows them to any reader
 * (`protection.required_status_checks`; `GET …/protection` would need Administration), and the
 * `required_status_checks` rules of every ruleset that applies (`GET …/rules/branches/{branch}`,
 * Metadata read; repository and organization rulesets alike). The union of both.
 *
 * A 403 or 404 from either source is not an error: the result says `readable: false` with the
 * reason, and lists what the other source gave. Anything else (rate limits, 5xx) is thrown.
 */
export async function loadRequiredChecks(octokit: Octokit, id: RepoId, branch: string): Promise<RequiredChecks> {
  const checks: RequiredCheck[] = [];
  let upToDate = false;
  let mergeQueue = false;
  let adminsExempt = false;
  const reasons: string[] = [];

  let branchProtection: SourceReading = { readable: true };
  try {
    const { data } = await octokit.rest.repos.getBranch({ ...id, branch });
    const required = data.protection?.required_status_checks;
    if (required && required.enforcement_level !== 'off') {
      adminsExempt = required.enforcement_level === 'non_admins';
      const pinned = new Map((required.checks ?? []).map((check) => [check.context, check.app_id ?? null]));
      for (const context of new Set([...(required.contexts ?? []), ...pinned.keys()]))
        checks.push({ context, appId: pinned.get(context) ?? null, source: 'branch-protection' });
    }
  } catch (error) {
    if (!isStatus(error, 403, 404)) throw error;
    const reason =
      error.status === 404
        ? `branch ${branch} was not found in ${id.owner}/${id.repo} (GitHub: ${messageOf(error)}), so its protection is unknown`
        : `GitHub refused to show branch ${branch} of ${id.owner}/${id.repo} (403: ${messageOf(error)}); check that the App is installed on the repository with Contents read`;
    branchProtection = { readable: false, status: error.status, reason };
    reasons.push(reason);
  }

  let rulesets: SourceReading = { readable: true };
  try {
    for (let page = 1; page <= 10; page++) {
      const { data } = await octokit.rest.repos.getBranchRules({ ...id, branch, per_page: 100, page });
      for (const rule of data) {
        if (rule.type === 'merge_queue') mergeQueue = true;
        if (rule.type !== 'required_status_checks' || !rule.parameters) continue;
        if (rule.parameters.strict_required_status_checks_policy) upToDate = true;
        for (const check of rule.parameters.required_status_checks) {
          checks.push({
            context: check.context,
            appId: check.integration_id ?? null,
            source: 'ruleset',
            ...(typeof rule.ruleset_id === 'number' ? { rulesetId: rule.ruleset_id } : {}),
          });
        }
      }
      if (data.length < 100) break;
    }
  } catch (error) {
    if (!isStatus(error, 403, 404)) throw error;
    const reason =
      error.status === 404
        ? `GitHub has no rulesets endpoint for ${id.owner}/${id.repo} (404: ${messageOf(error)}; GitHub Enterprise Server before 3.11), so only branch protection was read`
        : `GitHub refused to list the rules for branch ${branch} of ${id.owner}/${id.repo} (403: ${messageOf(error)}); the App needs Metadata read`;
    rulesets = { readable: false, status: error.status, reason };
    reasons.push(reason);
  }

  // The branch endpoint does not say whether classic protection wants up-to-date branches;
  // reading `strict` needs Administration, so only rulesets can tell.
  return {
    contexts: [...new Set(checks.map((check) => check.context))].sort(),
    checks,
    source: { branchProtection, rulesets },
    readable: branchProtection.readable && rulesets.readable,
    reason: reasons.length ? reasons.join('; ') : null,
    upToDate,
    mergeQueue,
    adminsExempt,
  };
}

/** What `enablePullRequestAutoMerge` did. */
export type AutoMergeOutcome =
  /** GitHub will merge the pull request itself once every requirement is met. */
  | 'enabled'
  /** The repository does not allow auto-merge (Settings → General → "Allow auto-merge"). */
  | 'not-allowed'
  /** Nothing to wait for: every requirement is met already (GitHub: "is in clean status"). */
  | 'clean'
  /** Required checks passed but another check failed or still runs (GitHub: "is in unstable status"). */
  | 'unstable'
  /** The pull request has conflicts with its base. */
  | 'conflict'
  /** The head is no longer `expectedHeadOid`. */
  | 'head-moved'
  /** The pull request is closed or merged. */
  | 'closed'
  /** The merge method is not allowed on the repository. */
  | 'method-not-allowed'
  /** GitHub refused for another reason; `message` says which. */
  | 'refused';

export interface AutoMergeResult {
  outcome: AutoMergeOutcome;
  /** GitHub's own words when it refused; null when enabled. */
  message: string | null;
}

const ENABLE_AUTO_MERGE = `mutation ($input: EnablePullRequestAutoMergeInput!) {
  enablePullRequestAutoMerge(input: $input) {
    pullRequest { number autoMergeRequest { enabledAt mergeMethod } }
  }
}`;

/**
 * GitHub's messages for a refused `enablePullRequestAutoMerge`, as the GraphQL API answers them
 * (`gh pr merge --auto` prints them as "GraphQL: <message> (enablePullRequestAutoMerge)"); the
 * "Pull request " prefix GitHub puts before some of them varies, so only the rest is matched.
 */
const REFUSALS: Array<[RegExp, AutoMergeOutcome]> = [
  [/auto merge is not allowed/i, 'not-allowed'],
  [/is in clean status/i, 'clean'],
  [/is in unstable status/i, 'unstable'],
  [/is in dirty status|merge conflict/i, 'conflict'],
  [/head (sha|oid|branch)|expected head/i, 'head-moved'],
  [/is closed|already merged|is merged/i, 'closed'],
  [/merge method|merging is not allowed/i, 'method-not-allowed'],
];

/**
 * Turns on GitHub's native auto-merge for a pull request (`node_id` of the REST pull request):
 * GitHub merges it with `method` once every required check and review passes, and refuses when
 * the head is no longer `expectedHeadOid`. Needs Contents and Pull requests write.
 *
 * GitHub's refusals become outcomes; a transport error, rate limit or an answer of another kind
 * is thrown. `clean` and `unstable` mean there is nothing left for GitHub to wait for: merge
 * directly, after `requiredChecksPassed`.
 */
export async function enableAutoMerge(
  octokit: Octokit,
  input: { pullNodeId: string; method: 'merge' | 'squash' | 'rebase'; expectedHeadOid: string },
): Promise<AutoMergeResult> {
  try {
    await octokit.graphql(ENABLE_AUTO_MERGE, {
      input: {
        pullRequestId: input.pullNodeId,
        mergeMethod: input.method.toUpperCase(),
        expectedHeadOid: input.expectedHeadOid,
      },
    });
    return { outcome: 'enabled', message: null };
  } catch (error) {
    if (!isGraphqlError(error)) throw error;
    const message = error.errors.map((entry) => entry.message ?? '').join('; ') || error.message;
    const found = REFUSALS.find(([pattern]) => pattern.test(message));
    return { outcome: found?.[1] ?? 'refused', message };
  }
}

const DISABLE_AUTO_MERGE = `mutation ($input: DisablePullRequestAutoMergeInput!) {
  disablePullRequestAutoMerge(input: $input) { pullRequest { number } }
}`;

export interface DisableAutoMergeResult {
  /** `not-enabled`: it was off already; `closed`: the pull request is closed or merged. */
  outcome: 'disabled' | 'not-enabled' | 'closed' | 'refused';
  message: string | null;
}

/**
 * Turns GitHub's auto-merge off again, e.g. when a person pushed to the pull request's branch
 * (GitHub would merge their commit once the checks pass) or when the gates are not required.
 * Refusals become outcomes; transport errors and rate limits are thrown.
 */
export async function disableAutoMerge(octokit: Octokit, pullNodeId: string): Promise<DisableAutoMergeResult> {
  try {
    await octokit.graphql(DISABLE_AUTO_MERGE, { input: { pullRequestId: pullNodeId } });
    return { outcome: 'disabled', message: null };
  } catch (error) {
    if (!isGraphqlError(error)) throw error;
    const message = error.errors.map((entry) => entry.message ?? '').join('; ') || error.message;
    const outcome = /not enabled/i.test(message)
      ? 'not-enabled'
      : /is closed|merged/i.test(message)
        ? 'closed'
        : 'refused';
    return { outcome, message };
  }
}

/** Where one required check stands on a commit. */
export interface CheckVerdict {
  context: string;
  state: 'passed' | 'pending' | 'failed' | 'missing' | 'unknown';
  /** What reported it: a check run, a commit status, or nothing readable. */
  via: 'check-run' | 'commit-status' | null;
}

export interface RequiredChecksVerdict {
  /** Every required context passed on the commit. */
  passed: boolean;
  checks: CheckVerdict[];
  /** Why some contexts are `unknown` (commit statuses could not be read); null otherwise. */
  reason: string | null;
}

// GitHub counts success, neutral and skipped as a passed required check.
const PASSING = new Set(['success', 'neutral', 'skipped']);

/**
 * Whether every context in `contexts` has passed on `sha`, as the merge button judges it: a
 * check run of that name (the newest per name, by id) or a commit status of that context (the newest
 * per context), success, neutral or skipped. A context nothing reported is `missing`; when
 * GitHub refuses the commit statuses (403: the App lacks Commit statuses read), contexts no check
 * run settles are `unknown` and `passed` is false, with the reason.
 */
export async function requiredChecksPassed(
  octokit: Octokit,
  id: RepoId,
  sha: string,
  contexts: string[],
): Promise<RequiredChecksVerdict> {
  const wanted = new Set(contexts);
  // The newest run of each name decides (the highest id: GitHub numbers runs as they are created,
  // and `filter=latest` may still list an older run of a name, palantir/policy-bot#821). A gate
  // that went back to pending is a new run (ensureCheckRun), so an older success never counts.
  const newest = new Map<string, { id: number; state: 'passed' | 'pending' | 'failed' }>();
  for (let page = 1; page <= 10 && wanted.size > 0; page++) {
    const { data } = await octokit.rest.checks.listForRef({ ...id, ref: sha, filter: 'latest', per_page: 100, page });
    for (const run of data.check_runs) {
      if (!wanted.has(run.name) || (newest.get(run.name)?.id ?? -1) > run.id) continue;
      newest.set(run.name, {
        id: run.id,
        state: run.status !== 'completed' ? 'pending' : PASSING.has(run.conclusion ?? '') ? 'passed' : 'failed',
      });
    }
    if (data.check_runs.length < 100) break;
  }
  const runs = new Map([...newest].map(([name, run]) => [name, run.state]));

  const statuses = new Map<string, 'passed' | 'pending' | 'failed'>();
  let reason: string | null = null;
  const unsettled = [...wanted].filter((context) => runs.get(context) !== 'passed');
  if (unsettled.length > 0) {
    try {
      for (let page = 1; page <= 10; page++) {
        const { data } = await octokit.rest.repos.getCombinedStatusForRef({ ...id, ref: sha, per_page: 100, page });
        for (const status of data.statuses) {
          if (!wanted.has(status.context) || statuses.has(status.context)) continue;
          statuses.set(
            status.context,
            status.state === 'success' ? 'passed' : status.state === 'pending' ? 'pending' : 'failed',
          );
        }
        if (data.statuses.length < 100) break;
      }
    } catch (error) {
      if (!isStatus(error, 403, 404)) throw error;
      reason = `GitHub refused the commit statuses of ${sha.slice(0, 12)} in ${id.owner}/${id.repo} (${error.status}: ${messageOf(error)}); accept the App's Commit statuses read permission so Escalator can see checks reported as commit statuses`;
    }
  }

  const checks: CheckVerdict[] = [...wanted].sort().map((context) => {
    const run = runs.get(context);
    const status = statuses.get(context);
    if (run === 'passed') return { context, state: 'passed', via: 'check-run' };
    if (status === 'passed') return { context, state: 'passed', via: 'commit-status' };
    if (run === 'failed') return { context, state: 'failed', via: 'check-run' };
    if (status === 'failed') return { context, state: 'failed', via: 'commit-status' };
    if (run === 'pending') return { context, state: 'pending', via: 'check-run' };
    if (status === 'pending') return { context, state: 'pending', via: 'commit-status' };
    return { context, state: reason ? 'unknown' : 'missing', via: null };
  });
  return { passed: checks.every((check) => check.state === 'passed'), checks, reason };
}
