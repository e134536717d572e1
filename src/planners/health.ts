/**
 * What the cluster reports back: the sync and health of each (repository, environment, app), as
 * Argo CD and Flux tell it. Pure: reports come in as data, time as `now`.
 *
 * The contract between the side that records reports (intake → health-report job → HealthStore)
 * and the side that gates on them (promotion job → `escalator/health`, soak from healthy-since,
 * rollback, Deployments). Both sides build on these types; change them in one commit.
 */

/** Which agent told us, and about which of its objects. */
export interface HealthSource {
  agent: 'argocd' | 'flux' | 'status';
  /** The agent's object: `hello-staging` (Argo CD Application), `flux-system/apps-staging` (Flux Kustomization), or a commit-status context. */
  object: string;
  /** Where a person reads more (Argo CD app URL, the status's target_url), when the agent gave one. */
  url?: string;
}

export type SyncState = 'synced' | 'out-of-sync' | 'failed' | 'unknown';
export type HealthState = 'healthy' | 'progressing' | 'degraded' | 'missing' | 'suspended' | 'unknown';

/** One report, normalized from any of the three wire formats, already mapped to an environment and app. */
export interface HealthReport {
  owner: string;
  repo: string;
  environment: string;
  app: string;
  /** The commit (40 hex) the agent says it synced; a report without one is not recorded. */
  revision: string;
  sync: SyncState;
  health: HealthState;
  /** When the agent says this happened (ISO); the receive time when it gave none. */
  at: string;
  source: HealthSource;
  /** The agent's own words (Flux event message, Argo CD operation message), bounded, for the PR line. */
  message?: string;
}

/** What the store keeps per (repository, environment, app): the fold of its reports. */
export interface AppHealth {
  revision: string;
  sync: SyncState;
  health: HealthState;
  /** Since when the app has been synced and healthy at `revision` without a degraded spell longer than `tolerate` (ISO); undefined: not healthy now. */
  healthySince?: string;
  /** Since when it has been degraded (or its sync failed) without pause (ISO); undefined: not degraded now. */
  degradedSince?: string;
  /** The last time it was degraded or failed, for the PR line. */
  lastDegradedAt?: string;
  /** The last report's time and source. */
  reportedAt: string;
  source: HealthSource;
  message?: string;
}
