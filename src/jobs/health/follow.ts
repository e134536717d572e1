import type { RepoIndex } from '../../adapters/store/subscriptions.js';
import { parseDuration } from '../../config/repo-config.js';
import type { AppHealth } from '../../planners/health.js';
import { sustainedBad } from '../../planners/health-gate.js';
import { sameVersions } from '../../planners/rollback.js';
import { enqueuePromote } from '../../queue/enqueue.js';
import { refreshDashboard } from '../shared/dashboard-refresh.js';
import type { JobDeps } from '../shared/deps.js';
import { followDeployment, keepsDeployments } from '../shared/deployments.js';
import { chooseRollback, versionsAt } from '../shared/health-inputs.js';
import { enqueuePromotionsOutOf } from '../shared/promotion-inputs.js';

/** One (repository, environment, app) whose recorded health changed. */
export interface HealthChange {
  index: RepoIndex;
  environment: string;
  app: string;
  previous: AppHealth | undefined;
  current: AppHealth;
  /**
   * The versions the app runs at `current.revision` (`versionsAt`), when the caller has read them
   * already (`null`: no landing contains it); read here otherwise. One read per report.
   */
  running?: Awaited<ReturnType<typeof versionsAt>> | null;
}

/** What following one change did (for the caller's log line and for tests). */
export interface HealthFollowed {
  /** Promotions out of the environment planned again. */
  replanned: string[];
  /** The versions recorded healthy, when the report said synced and healthy. */
  healthy?: string[];
  /** Deployment statuses posted. */
  deploymentStatuses: number;
  /** `rollback: auto`: the rollback scheduled (its delay in ms), or why none was. */
  rollback?: { delayMs: number } | { skipped: string };
}

/**
 * What follows a change of health. Called by the job that records agent reports.
 * 1. the promotions out of that environment plan again (their health and soak gates read the new state)
 * 2. synced and healthy: the versions the environment runs at that revision are recorded healthy (what a rollback goes back to)
 * 3. the Deployment of the merge the revision contains follows the report (docs/health.md)
 * 4. `rollback: auto` and a failed sync or a degraded spell: the rollback to the last healthy
 *    versions, scheduled for when the spell outlasts `tolerate` (one job per spell; it does nothing
 *    when the spell is over by then)
 */
export async function followHealth(deps: JobDeps, change: HealthChange): Promise<HealthFollowed> {
  const { index, environment, app, current } = change;
  const followed: HealthFollowed = { replanned: [], deploymentStatuses: 0 };
  const key = `${current.revision}:${current.sync}:${current.health}:${current.reportedAt}`;
  followed.replanned.push(...(await enqueuePromotionsOutOf(deps, index, environment, app, 'health', key)));
  // The dashboard's health column follows too (also for the last environment, which feeds no promotion).
  await refreshDashboard(deps, index, { index });
  const env = index.config?.environments.find((candidate) => candidate.name === environment);
  if (!env?.health) return followed;
  const log = deps.log.child({ repo: `${index.owner}/${index.repo}`, environment, app });
  const bad = current.sync === 'failed' || current.health === 'degraded';
  const healthy = current.sync === 'synced' && current.health === 'healthy';
  // What runs at the reported revision: read once, for the versions recorded healthy and the rollback.
  const landed =
    healthy || (env.rollback === 'auto' && bad)
      ? change.running !== undefined
        ? (change.running ?? undefined)
        : await versionsAt(deps, index, environment, app, current.revision)
      : undefined;

  if (healthy) {
    const running = landed;
    if (running) {
      await deps.store.healthGate.recordHealthy(index, environment, app, { ...running, until: current.reportedAt });
      followed.healthy = running.versions.map((version) => `${version.name}:${version.tag}`);
    }
  }

  if (keepsDeployments(env)) followed.deploymentStatuses = await followDeployment(deps, index, env, app, current);

  if (env.rollback === 'auto' && bad) {
    followed.rollback = await scheduleRollback(
      deps,
      index,
      env.name,
      app,
      current,
      parseDuration(env.health.tolerate),
      landed,
    );
    if ('skipped' in followed.rollback) log.warn({ reason: followed.rollback.skipped }, 'No automatic rollback');
    else log.info({ delayMs: followed.rollback.delayMs }, 'Automatic rollback scheduled for this degraded spell');
  }
  return followed;
}

async function scheduleRollback(
  deps: JobDeps,
  index: RepoIndex,
  environment: string,
  app: string,
  current: AppHealth,
  tolerateMs: number,
  /** What runs at `current.revision` (`versionsAt`). */
  landed: Awaited<ReturnType<typeof versionsAt>>,
): Promise<{ delayMs: number } | { skipped: string }> {
  const choice = await chooseRollback(deps, index, environment, app);
  const running = choice?.current ?? (await deps.store.versions.loadHistory(index, environment, app))[0]?.versions;
  // Degraded on the versions Escalator rolled it back to: the job halts it (one message), so it is scheduled all the same.
  const record = await deps.store.rollbacks.load(index, environment, app);
  const halts = record !== undefined && running !== undefined && sameVersions(running, record.to);
  if (!choice?.current && !halts)
    return { skipped: `no earlier version of ${app} in ${environment} is recorded; nothing to roll back to` };
  // Only what landed last is rolled back: a report about an older revision is not about it.
  if (!landed || JSON.stringify(landed.versions) !== JSON.stringify(running))
    return { skipped: `the report is about ${current.revision.slice(0, 7)}, not the versions ${environment} runs now` };
  const spell = current.degradedSince ?? current.reportedAt;
  const now = deps.now().getTime();
  const delayMs = sustainedBad(current, tolerateMs, now) ? 0 : Math.max(0, Date.parse(spell) + tolerateMs - now) + 50;
  await enqueuePromote(
    deps.producer,
    {
      installationId: index.installationId,
      owner: index.owner,
      repo: index.repo,
      environment,
      app,
      reason: 'rollback',
      spell,
    },
    `spell-${spell}`,
    delayMs,
  );
  return { delayMs };
}
