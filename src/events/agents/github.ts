import type { HealthState, SyncState } from '../../planners/health.js';
import { boundMessage, commitOf, isoOf, type AgentReport, type AgentResult, type Poster } from './report.js';

/**
 * What the agents already post to GitHub, as reports: commit statuses (Flux notification-controller's
 * `github` Provider posts `success`/`failure` with context `<kind>/<name>/<provider uid prefix>`,
 * internal/notifier/github.go; Argo CD Notifications' github service posts the context its template
 * names), check runs, and deployment statuses (Argo CD Notifications' github service can create
 * Deployments). Payload shapes: GitHub's webhook payloads as in @octokit/webhooks-examples.
 * The object each is matched by is the status context, the check run's name, or the deployment's
 * environment; who posted it (the `poster` of the report) is matched against the source's bound
 * App or user (./health-map.ts): a commit status names its poster as `sender` only (an App as its
 * bot account `<slug>[bot]`, type Bot), a check run as `check_run.app` (only Apps create check
 * runs), a deployment status as `deployment_status.performed_via_github_app` or else its
 * `creator`, and its Deployment likewise (GitHub's webhook payloads, @octokit/webhooks-schemas).
 */

/** A user or bot account as GitHub's payloads carry it. */
interface Account {
  login: string;
  type?: string;
}

/** A GitHub App as `check_run.app` and `performed_via_github_app` carry it. */
interface AppRef {
  id: number | null;
  slug?: string | null;
}

/** The poster a commit status's `sender` names: a bot account `<slug>[bot]` is its App. */
function accountPoster(account: Account | null | undefined): Poster | undefined {
  if (!account?.login) return undefined;
  const bot = /^(.+)\[bot\]$/.exec(account.login);
  if (bot && account.type === 'Bot') return { kind: 'app', slug: bot[1]! };
  if (account.type !== undefined && account.type !== 'User') return undefined;
  return { kind: 'user', login: account.login };
}

/** An App's poster from `performed_via_github_app`, else the account that created the thing. */
function posterOf(app: AppRef | null | undefined, account: Account | null | undefined): Poster | undefined {
  if (app && typeof app.id === 'number') return { kind: 'app', id: app.id, ...(app.slug ? { slug: app.slug } : {}) };
  if (app) return undefined; // an App without an id is no poster anyone can be bound to
  return accountPoster(account);
}

interface StatusPayload {
  sha: string;
  sender?: Account | null;
  context: string;
  state: string;
  description?: string | null;
  target_url?: string | null;
  updated_at?: string;
  created_at?: string;
}

interface CheckRunPayload {
  check_run: {
    name: string;
    head_sha: string;
    status: string;
    conclusion?: string | null;
    started_at?: string | null;
    completed_at?: string | null;
    details_url?: string | null;
    html_url?: string | null;
    output?: { title?: string | null; summary?: string | null } | null;
    app?: AppRef | null;
    pull_requests?: ReadonlyArray<unknown> | null;
    check_suite?: { head_branch?: string | null } | null;
  };
  repository?: { default_branch?: string };
}

interface DeploymentStatusPayload {
  deployment_status: {
    state: string;
    description?: string | null;
    environment?: string;
    target_url?: string | null;
    log_url?: string | null;
    environment_url?: string | null;
    created_at?: string;
    updated_at?: string;
    creator?: Account | null;
    performed_via_github_app?: AppRef | null;
  };
  deployment: {
    sha: string;
    environment: string;
    creator?: Account | null;
    performed_via_github_app?: AppRef | null;
  };
}

type State = { sync: SyncState; health: HealthState };
const HEALTHY: State = { sync: 'synced', health: 'healthy' };
const DEGRADED: State = { sync: 'synced', health: 'degraded' };
const PROGRESSING: State = { sync: 'out-of-sync', health: 'progressing' };

/** A commit status: success → synced and healthy; failure, error → degraded; pending → progressing. */
export function normalizeStatusEvent(payload: StatusPayload): AgentResult {
  const state = { success: HEALTHY, failure: DEGRADED, error: DEGRADED, pending: PROGRESSING }[payload.state];
  if (!state) return { kind: 'ignored', reason: `commit status state "${payload.state}" says nothing about health` };
  const revision = commitOf(payload.sha);
  if (!revision) return { kind: 'ignored', reason: 'the status names no commit' };
  const at = isoOf(payload.updated_at) ?? isoOf(payload.created_at);
  const message = boundMessage(payload.description);
  return statusReport(payload.context, revision, state, {
    at,
    url: payload.target_url,
    message,
    poster: accountPoster(payload.sender),
  });
}

/** A check run: completed success → healthy; failure, timed_out → degraded; queued, in progress → progressing. */
export function normalizeCheckRunEvent(payload: CheckRunPayload): AgentResult {
  const run = payload.check_run;
  // A check run on a pull request's head, or on another branch, is about code not (yet) on the
  // default branch: a pull request author controls a workflow job's name (GitHub Actions), so
  // such a run is never a deployment's report.
  if ((run.pull_requests?.length ?? 0) > 0)
    return { kind: 'ignored', reason: 'the check run belongs to a pull request, not to the default branch' };
  const branch = run.check_suite?.head_branch;
  const defaultBranch = payload.repository?.default_branch;
  if (branch && defaultBranch && branch !== defaultBranch)
    return { kind: 'ignored', reason: `the check run is on branch "${branch}", not the default branch` };
  let state: State | undefined;
  if (run.status !== 'completed') state = PROGRESSING;
  else if (run.conclusion === 'success') state = HEALTHY;
  else if (run.conclusion === 'failure' || run.conclusion === 'timed_out') state = DEGRADED;
  if (!state)
    return { kind: 'ignored', reason: `check run conclusion "${run.conclusion ?? 'none'}" says nothing about health` };
  const revision = commitOf(run.head_sha);
  if (!revision) return { kind: 'ignored', reason: 'the check run names no commit' };
  const at = isoOf(run.completed_at) ?? isoOf(run.started_at);
  const url = run.details_url || run.html_url;
  const message = boundMessage(run.output?.title ?? run.output?.summary);
  return statusReport(run.name, revision, state, {
    at,
    url,
    message,
    poster: run.app ? posterOf(run.app, undefined) : undefined,
  });
}

/**
 * A deployment status: success → healthy; failure, error → degraded; queued, pending, in_progress
 * → progressing; inactive is ignored. `appId` is Escalator's own App: its own statuses are not
 * reports, and its own Deployments are ones a bound poster may report on.
 */
export function normalizeDeploymentStatusEvent(payload: DeploymentStatusPayload, appId?: number | string): AgentResult {
  const status = payload.deployment_status;
  const own = (app: AppRef | null | undefined) =>
    appId !== undefined && app != null && String(app.id) === String(appId);
  if (own(status.performed_via_github_app))
    return { kind: 'ignored', reason: "Escalator's own deployment status follows the reports; it is not one" };
  const state = {
    success: HEALTHY,
    failure: DEGRADED,
    error: DEGRADED,
    queued: PROGRESSING,
    pending: PROGRESSING,
    in_progress: PROGRESSING,
  }[status.state];
  if (!state)
    return { kind: 'ignored', reason: `deployment status "${status.state}" says nothing about what runs now` };
  const revision = commitOf(payload.deployment.sha);
  if (!revision) return { kind: 'ignored', reason: 'the deployment names no commit' };
  const at = isoOf(status.updated_at) ?? isoOf(status.created_at);
  const url = status.log_url || status.target_url || status.environment_url;
  const message = boundMessage(status.description);
  return statusReport(status.environment || payload.deployment.environment, revision, state, {
    at,
    url,
    message,
    poster: posterOf(status.performed_via_github_app, status.creator),
    deployment: {
      byEscalator: own(payload.deployment.performed_via_github_app),
      creator: posterOf(payload.deployment.performed_via_github_app, payload.deployment.creator),
    },
  });
}

/** The report a commit status, check run or deployment status makes, about the object `name`. */
function statusReport(
  name: string,
  revision: string,
  state: State,
  extra: {
    at: string | undefined;
    url: string | null | undefined;
    message: string | undefined;
    poster: Poster | undefined;
    deployment?: AgentReport['deployment'];
  },
): AgentResult {
  return {
    kind: 'report',
    report: {
      agent: 'status',
      object: { name },
      revision,
      ...state,
      ...(extra.at ? { at: extra.at } : {}),
      ...(extra.url ? { url: extra.url } : {}),
      ...(extra.message ? { message: extra.message } : {}),
      ...(extra.poster ? { poster: extra.poster } : {}),
      ...(extra.deployment ? { deployment: extra.deployment } : {}),
    },
  };
}
