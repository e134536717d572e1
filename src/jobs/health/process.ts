import { parseDuration } from '../../config/repo-config.schema.js';
import { enqueueHealth } from '../../queue/enqueue.js';
import type { HealthJob } from './job.js';
import type { ProcessorContext } from '../../queue/worker.js';
import { followHealth } from './follow.js';
import { versionsAt } from '../shared/health-inputs.js';
import type { JobDeps } from '../shared/deps.js';

/**
 * Record one agent report for one (environment, app):
 * 1. load the repository's index (its config says the environment's `tolerate`)
 * 2. read the report as about the commit where the app's versions last changed at or before the
 *    reported one: a report for commit X means the app runs the version of the latest commit ≤ X
 *    that changed its files, so a commit that changed only other apps (one Flux Kustomization for
 *    a whole environment) neither restarts healthy-since nor counts as a new revision
 * 3. fold it into what is recorded (`store.health.record`, atomic per app)
 * 4. when that changed, follow the change (`followHealth`: the promotions out of the environment plan again)
 * Every outcome is logged with its reason.
 */
export async function processHealthJob(deps: JobDeps, data: HealthJob, { log }: ProcessorContext): Promise<string> {
  const { report } = data;
  const context = {
    repo: `${data.owner}/${data.repo}`,
    environment: report.environment,
    app: report.app,
    agent: report.source.agent,
    object: report.source.object,
    revision: report.revision,
    sync: report.sync,
    health: report.health,
    at: report.at,
  };
  const index = await deps.store.subscriptions.loadRepo(data.owner, data.repo);
  const environment = index?.config?.environments.find((env) => env.name === report.environment);
  if (!index || !environment?.health) {
    log.info(context, 'Health report not recorded: the environment no longer listens to agents (config changed)');
    return 'not-listening';
  }
  const tolerateMs = parseDuration(environment.health.tolerate);
  // The landing the report is about, read once (`versionsAt` asks GitHub whether each landing is in the revision).
  const countedAs = async () =>
    report.app ? await versionsAt(deps, index, report.environment, report.app, report.revision) : undefined;
  let landed = await countedAs();
  let recorded = await deps.store.health.record(
    data,
    landed ? { ...report, revision: landed.sha, reported: report.revision } : report,
    tolerateMs,
  );
  // Counted as an older landing: the index job may be recording a newer one right now (the agent
  // synced the merge before the index did). Looked at once more after recording; the index job
  // looks at the record after its landing (src/jobs/shared/deployments.ts), so one of the two sees it.
  const again = landed && landed.sha !== report.revision ? await countedAs() : undefined;
  if (again && again.sha !== landed?.sha) {
    landed = again;
    recorded = await deps.store.health.record(
      data,
      { ...report, revision: again.sha, reported: report.revision },
      tolerateMs,
    );
  }
  // What follows reads what runs at the recorded revision: the landing read here, when it is that one.
  const running =
    report.app && recorded.current.revision === (landed?.sha ?? report.revision) ? { running: landed ?? null } : {};
  if (!recorded.changed && recorded.current.reportedAt !== report.at) {
    log.info(
      { ...context, reportedAt: recorded.current.reportedAt },
      'Health report older than the recorded one: ignored',
    );
    return 'unchanged';
  }
  if (!recorded.changed) {
    // This very report is the one recorded: an earlier attempt of this job recorded it and then
    // failed while following it. Follow it again; what follows is idempotent (deterministic job
    // ids, deployment states posted once), so nothing it started is lost or done twice.
    log.info(context, 'Health report recorded already by an earlier attempt; following it again');
    await followHealth(deps, {
      index,
      environment: report.environment,
      app: report.app,
      previous: undefined,
      current: recorded.current,
      ...running,
    });
    return 'unchanged';
  }
  log.info(
    {
      ...context,
      healthySince: recorded.current.healthySince,
      degradedSince: recorded.current.degradedSince,
      previous: recorded.previous
        ? { revision: recorded.previous.revision, sync: recorded.previous.sync, health: recorded.previous.health }
        : undefined,
    },
    'Health report recorded',
  );
  await followHealth(deps, {
    index,
    environment: report.environment,
    app: report.app,
    previous: recorded.previous,
    current: recorded.current,
    ...running,
  });
  await recheckAtTolerate(deps, data, recorded.current.degradedSince, tolerateMs);
  return 'recorded';
}

/**
 * A degraded spell shorter than `tolerate` is still "in progress" (the gate waits, the Deployment
 * shows in_progress). Agents report a spell once, so nothing would look again when it outlasts
 * `tolerate`: this report is followed again then (its own delayed job), which fails the gate and
 * the Deployment, and schedules the rollback, when no healthy report came in between.
 */
async function recheckAtTolerate(
  deps: JobDeps,
  data: HealthJob,
  degradedSince: string | undefined,
  tolerateMs: number,
): Promise<void> {
  if (!degradedSince) return;
  const at = Date.parse(degradedSince) + tolerateMs + 1_000;
  const now = deps.now().getTime();
  if (at <= now) return;
  await enqueueHealth(deps.producer, data, { at, now });
}
