import type { RepoIndex } from '../../adapters/store/subscriptions.js';
import type { DashboardPull } from '../../planners/dashboard.js';
import { enqueueDashboard } from '../../queue/enqueue.js';
import type { JobDeps } from './deps.js';

type RepoRef = { installationId: number; owner: string; repo: string };

/**
 * Something the dashboard shows changed: render it again soon (coalesced per repository, see
 * `enqueueDashboard`). Nothing when the repository's configuration does not ask for a dashboard.
 */
export async function refreshDashboard(
  deps: JobDeps,
  ref: RepoRef,
  options: { index?: RepoIndex | null; force?: boolean } = {},
): Promise<void> {
  const index =
    options.index === undefined ? await deps.store.subscriptions.loadRepo(ref.owner, ref.repo) : options.index;
  if (!index?.config?.dashboard) return;
  await enqueueDashboard(
    deps.producer,
    {
      installationId: ref.installationId,
      owner: ref.owner,
      repo: ref.repo,
      ...(options.force ? { force: true } : {}),
    },
    String(deps.now().getTime()),
  );
}

/**
 * What a promotion run leaves for the dashboard: the gates its pull request got (by branch), and
 * the files it refused to edit as something that needs a person (cleared once none is refused).
 */
export async function notePromotion(
  deps: JobDeps,
  index: RepoIndex,
  promotion: {
    branch: string;
    environment: string;
    app: string;
    pull: { number: number; title: string } | null;
    gates: DashboardPull['gates'];
    refused: ReadonlyArray<{ path: string; reason: string; line?: number }>;
  },
): Promise<void> {
  const { branch, environment, app } = promotion;
  await deps.store.dashboard.recordPull(
    index,
    branch,
    promotion.pull
      ? {
          number: promotion.pull.number,
          title: promotion.pull.title,
          kind: 'promote',
          environment,
          app,
          gates: promotion.gates,
        }
      : null,
  );
  await deps.store.dashboard.recordAttention(
    index,
    `promote:${environment}:${app}`,
    promotion.refused.length > 0
      ? {
          what: `promotion into ${environment}${app ? ` (${app})` : ''}`,
          reason: `Escalator refused to edit ${promotion.refused.map((r) => `${r.path}${r.line ? `:${r.line}` : ''} (${r.reason})`).join('; ')}`,
          at: deps.now().toISOString(),
        }
      : null,
  );
}

/** A job failed for good: the dashboard lists it until the same work succeeds. */
export async function noteFailure(
  deps: JobDeps,
  ref: RepoRef,
  what: { id: string; text: string },
  error: Error,
): Promise<void> {
  await deps.store.dashboard.recordAttention(ref, what.id, {
    what: what.text,
    reason: `failed for good: ${error.message}`,
    at: deps.now().toISOString(),
  });
  await refreshDashboard(deps, ref);
}
