import type { HealthState, SyncState } from '../../planners/health.js';
import { boundMessage, commitOf, isoOf, type AgentResult } from './report.js';

/**
 * What the agents already post to GitHub, as reports: commit statuses (Flux notification-controller's
 * `github` Provider posts `success`/`failure` with context `<kind>/<name>/<provider uid prefix>`,
 * internal/notifier/github.go; Argo CD Notifications' github service posts the context its template
 * names), check runs, and deployment statuses (Argo CD Notifications' github service can create
 * Deployments). Payload shapes: GitHub's webhook payloads as in @octokit/webhooks-examples.
 * The object each is matched by is the status context, the check run's name, or the deployment's
 * environment.
 */

interface StatusPayload {
  sha: string;
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
  };
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
  };
  deployment: { sha: string; environment: string };
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
  return statusReport(payload.context, revision, state, { at, url: payload.target_url, message });
}

/** A check run: completed success → healthy; failure, timed_out → degraded; queued, in progress → progressing. */
export function normalizeCheckRunEvent(payload: CheckRunPayload): AgentResult {
  const run = payload.check_run;
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
  return statusReport(run.name, revision, state, { at, url, message });
}

/** A deployment status: success → healthy; failure, error → degraded; queued, pending, in_progress → progressing; inactive is ignored. */
export function normalizeDeploymentStatusEvent(payload: DeploymentStatusPayload): AgentResult {
  const status = payload.deployment_status;
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
  return statusReport(status.environment || payload.deployment.environment, revision, state, { at, url, message });
}

/** The report a commit status, check run or deployment status makes, about the object `name`. */
function statusReport(
  name: string,
  revision: string,
  state: State,
  extra: { at: string | undefined; url: string | null | undefined; message: string | undefined },
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
    },
  };
}
