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
  /** The commit the agent named, when `revision` is the older landing it was counted as (see src/jobs/health/process.ts). */
  reported?: string;
}

/** What the store keeps per (repository, environment, app): the fold of its reports. */
export interface AppHealth {
  revision: string;
  /** The commit the agent named, when `revision` is an older landing: the index had not recorded a newer one yet. */
  reported?: string;
  sync: SyncState;
  health: HealthState;
  /**
   * Since when the app has been synced and healthy at `revision` without a degraded spell longer
   * than `tolerate` (ISO); undefined: not healthy at this revision. Kept through a degraded spell
   * until the spell proves longer than `tolerate` (at a later report, or at the reader's `now`:
   * read it through `healthySinceAt`), and through progressing or out-of-sync reports of the same
   * revision.
   */
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

/** The states that stop a promotion: the app went degraded or its sync failed. */
export function isDegraded(report: Pick<HealthReport, 'sync' | 'health'>): boolean {
  return report.health === 'degraded' || report.sync === 'failed';
}

/** The state that counts as running the revision well: synced and healthy. */
export function isHealthy(report: Pick<HealthReport, 'sync' | 'health'>): boolean {
  return report.sync === 'synced' && report.health === 'healthy';
}

/**
 * Fold one report into what is recorded for its (repository, environment, app).
 *
 * 1. A report older than the recorded one (`at` earlier than `reportedAt`) changes nothing.
 * 2. A report about another revision starts afresh: healthy-since is its time when it says synced
 *    and healthy, and undefined otherwise (the gate compares `revision` with the merge commit).
 * 3. At the same revision, a degraded or failed report starts a degraded spell (`degradedSince`)
 *    or continues it; healthy-since survives the spell while it is shorter than `tolerateMs`.
 * 4. A healthy report ends the spell; healthy-since is kept when the spell was shorter than
 *    `tolerateMs` (or there was none), and starts at this report otherwise.
 * 5. Other states (progressing, out of sync, suspended, missing, unknown) end a degraded spell the
 *    same way but start no healthy-since.
 */
export function foldReport(previous: AppHealth | undefined, report: HealthReport, tolerateMs: number): AppHealth {
  const at = Date.parse(report.at);
  if (previous && at < Date.parse(previous.reportedAt)) return previous;
  const same = previous?.revision === report.revision ? previous : undefined;
  const spellLasted = (since: string | undefined): boolean =>
    since !== undefined && at - Date.parse(since) >= tolerateMs;
  const next: AppHealth = {
    revision: report.revision,
    sync: report.sync,
    health: report.health,
    reportedAt: report.at,
    source: report.source,
  };
  if (report.message !== undefined) next.message = report.message;
  if (report.reported !== undefined && report.reported !== report.revision) next.reported = report.reported;
  const kept = same?.healthySince !== undefined && !spellLasted(same.degradedSince) ? same.healthySince : undefined;
  let lastDegradedAt = previous?.lastDegradedAt;
  if (isDegraded(report)) {
    const degradedSince = same?.degradedSince ?? report.at;
    next.degradedSince = degradedSince;
    lastDegradedAt = report.at;
    if (same?.healthySince !== undefined && !spellLasted(degradedSince)) next.healthySince = same.healthySince;
  } else if (isHealthy(report)) {
    next.healthySince = kept ?? report.at;
  } else if (kept !== undefined) {
    next.healthySince = kept;
  }
  if (lastDegradedAt !== undefined) next.lastDegradedAt = lastDegradedAt;
  return next;
}

/**
 * Since when `health` counts as healthy at `now`: its healthy-since, unless a degraded spell has
 * by now lasted `tolerateMs` or longer (no report may come while an app stays degraded).
 */
export function healthySinceAt(health: AppHealth, now: number, tolerateMs: number): string | undefined {
  if (health.degradedSince !== undefined && now - Date.parse(health.degradedSince) >= tolerateMs) return undefined;
  return health.healthySince;
}
