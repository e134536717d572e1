import type { RepoIndex } from '../../adapters/store/subscriptions.js';
import type { AppHealth } from '../../planners/health.js';
import { enqueuePromote } from '../../queue/enqueue.js';
import { refreshDashboard } from './dashboard-refresh.js';
import type { JobDeps } from './deps.js';

/** One (repository, environment, app) whose recorded health changed. */
export interface HealthChange {
  index: RepoIndex;
  environment: string;
  app: string;
  previous: AppHealth | undefined;
  current: AppHealth;
}

/**
 * What follows a change of health: the promotions out of that environment plan again (their
 * health and soak gates read the new state). Called by the job that records agent reports.
 */
export async function followHealth(deps: JobDeps, change: HealthChange): Promise<void> {
  const { index, environment, app, current } = change;
  const key = `${current.revision}:${current.sync}:${current.health}:${current.reportedAt}`;
  for (const target of index.config?.environments.filter((env) => env.from === environment) ?? [])
    await enqueuePromote(
      deps.producer,
      {
        installationId: index.installationId,
        owner: index.owner,
        repo: index.repo,
        environment: target.name,
        app: target.group ? '' : app,
        reason: 'health',
      },
      key,
    );
  // The dashboard's health column follows too (also for the last environment, which feeds no promotion).
  await refreshDashboard(deps, index, { index });
}
