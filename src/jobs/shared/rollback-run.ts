import { createComment } from '../../adapters/github/repo.js';
import type { RepoIndex } from '../../adapters/store/subscriptions.js';
import { ConfigError } from '../../observability/errors.js';
import { describeSource, rollbackReason } from '../../planners/health-gate.js';
import { escapeText } from '../../planners/markdown.js';
import type { RunningVersion } from '../../planners/promotion-plan.js';
import { planAutomaticRollback, planRollbackGuard, tagsText, type RollbackRecord } from '../../planners/rollback.js';
import { targetKey, versionsByTarget, type PinnedVersion } from '../../planners/versions.js';
import type { PromoteJob } from '../../queue/enqueue.js';
import type { ProcessorContext } from '../../queue/worker.js';
import type { JobDeps } from './deps.js';
import { chooseRollback, loadHealth, runningText } from './health-inputs.js';
import { enqueuePromotionsOutOf } from './promotion-inputs.js';

type Log = ProcessorContext['log'];
/** Per app, the versions a rollback writes, by image name. */
export type RollbackVersions = Map<string, Map<string, RunningVersion>>;

const asRunning = (versions: readonly PinnedVersion[]): Map<string, RunningVersion> =>
  new Map(
    versions.map((v) => [
      v.name,
      { name: v.name, repository: v.name, tag: v.tag, ...(v.digest ? { digest: v.digest } : {}) },
    ]),
  );

/**
 * Before a promotion Escalator runs on its own (not `/escalator rollback`): per app, whether the
 * last rollback into `target` holds it back (`planRollbackGuard`).
 * - blocked: the app is left out; when its rollback pull request is Escalator's current one for a
 *   single-app run, the run keeps that pull request a rollback (`replan`) and opens nothing
 * - lifted: the record is forgotten and the app promoted as usual
 */
export async function guardRollbacks(
  deps: JobDeps,
  index: RepoIndex,
  target: string,
  source: string,
  data: Pick<PromoteJob, 'app' | 'reason' | 'requestedBy'>,
  apps: string[],
  log: Log,
): Promise<{ apps: string[]; replan?: RollbackRecord; blocked: string[] }> {
  const running = versionsByTarget(index.files);
  const person = data.reason === 'command' ? data.requestedBy : undefined;
  const kept: string[] = [];
  const blocked: string[] = [];
  let replan: RollbackRecord | undefined;
  for (const app of apps) {
    const record = await deps.store.rollbacks.load(index, target, app);
    const guard = planRollbackGuard({
      record,
      source,
      proposed: running.get(targetKey(source, app)) ?? [],
      person,
    });
    if (guard.kind === 'block') {
      log.info({ environment: target, app, reason: guard.reason }, 'Not proposed again after a rollback');
      blocked.push(guard.reason);
      if (record?.state === 'proposed' && data.app) replan = record;
      continue;
    }
    if (guard.kind === 'lift' && record) {
      await deps.store.rollbacks.forget(index, record);
      // What the dashboard said about that rollback (not written, halted) is past too; a hold stays until released.
      await deps.store.dashboard.recordAttention(index, `rollback:${target}:${app}`, null);
      log.info({ environment: target, app, reason: guard.reason }, 'Rollback no longer holds this app back');
    }
    kept.push(app);
  }
  return { apps: kept, blocked, ...(replan ? { replan } : {}) };
}

/**
 * For `/escalator plan`: a failed `rollback` gate for each app a rollback holds back, with the
 * sentence saying what lifts it, so the plan never lists as ready what will not open.
 */
export async function rollbackGates(
  deps: JobDeps,
  index: RepoIndex,
  target: string,
  source: string,
  apps: string[],
): Promise<Array<{ name: string; state: 'failed'; detail: string }>> {
  const running = versionsByTarget(index.files);
  const gates: Array<{ name: string; state: 'failed'; detail: string }> = [];
  for (const app of apps) {
    const guard = planRollbackGuard({
      record: await deps.store.rollbacks.load(index, target, app),
      source,
      proposed: running.get(targetKey(source, app)) ?? [],
    });
    if (guard.kind === 'block') gates.push({ name: 'rollback', state: 'failed', detail: guard.reason });
  }
  return gates;
}

/** A rollback record's versions as the promotion planner takes them. */
export function recordVersions(record: RollbackRecord): RollbackVersions {
  return new Map([[record.app, asRunning(record.to)]]);
}

/**
 * A rollback job (`/escalator rollback`, or `rollback: auto` once a degraded spell outlasted
 * `tolerate`):
 * 1. automatic: the spell must still go on, else nothing (`over`)
 * 2. automatic: the environment degraded on the versions Escalator rolled it back to is halted
 *    once (`planAutomaticRollback`): a hold on the app, one comment on the rollback pull request,
 *    a line on the dashboard, the promotions out of it planned again (their health gate says so)
 * 3. otherwise the versions each app goes back to (`chooseRollback`), and for one app the record
 *    of this rollback (saved before anything is written: its merge re-plans at once)
 */
export async function startRollback(
  deps: JobDeps,
  index: RepoIndex,
  target: string,
  data: PromoteJob,
  apps: string[],
  now: number,
  log: Log,
): Promise<{ over: string } | { versions: RollbackVersions; record?: RollbackRecord; because?: string }> {
  const app = data.app;
  let because = data.because;
  if (data.spell) {
    const health = await loadHealth(deps, index, target, app);
    const bad = health && (health.sync === 'failed' || health.health === 'degraded');
    if (!health || !bad || (health.degradedSince ?? health.reportedAt) !== data.spell)
      return { over: `the degraded spell of ${app} in ${target} since ${data.spell} is over` };
    const history = await deps.store.versions.loadHistory(index, target, app);
    const record = await deps.store.rollbacks.load(index, target, app);
    const degradation = `${describeSource(health.source)}${health.message ? `: ${health.message}` : ''}`;
    const decision = planAutomaticRollback({ record, running: history[0]?.versions ?? [], degradation });
    if (decision.kind === 'halted') return { over: `${app} in ${target} is halted already after a rollback` };
    if (decision.kind === 'halt' && record) {
      await halt(deps, index, record, decision, now, log);
      return { over: decision.message };
    }
    const choice = await chooseRollback(deps, index, target, app);
    if (!choice) return { over: `no earlier version of ${app} in ${target} is recorded` };
    because = rollbackReason({
      environment: target,
      running: runningText(app, choice.current ?? []),
      health,
      target: { tags: [...new Set(choice.target.map((v) => v.tag))], until: choice.healthyUntil },
      now,
    });
    log.warn({ environment: target, app, because }, 'Automatic rollback');
  }
  const versions: RollbackVersions = new Map();
  let record: RollbackRecord | undefined;
  for (const each of apps) {
    const choice = await chooseRollback(deps, index, target, each);
    if (!choice)
      throw new ConfigError(
        `no earlier version of ${each || target} in ${target} is recorded; nothing to roll back to`,
      );
    versions.set(each, asRunning(choice.target));
    if (app && each === app && choice.current?.length) {
      record = {
        environment: target,
        app,
        from: choice.current,
        to: choice.target,
        because: because ?? (data.requestedBy ? `@${data.requestedBy} commented /escalator rollback` : 'rollback'),
        ...(data.spell ? { spell: data.spell } : {}),
        at: new Date(now).toISOString(),
        state: 'proposed',
        restores: {
          sha: choice.sha,
          sources: await deps.store.provenance.loadProvenanceAt(index, target, app, choice.sha),
        },
      };
      await deps.store.rollbacks.save(index, record);
    }
  }
  return { versions, ...(record ? { record } : {}), ...(because ? { because } : {}) };
}

async function halt(
  deps: JobDeps,
  index: RepoIndex,
  record: RollbackRecord,
  decision: { message: string; hold: string },
  now: number,
  log: Log,
): Promise<void> {
  const { environment, app } = record;
  await deps.store.holds.setHold(index, environment, app, decision.hold);
  await deps.store.rollbacks.save(index, { ...record, state: 'halted', halted: decision.message });
  log.warn(
    { environment, app, from: record.from, to: record.to },
    'Degraded after a rollback: halted, no second rollback',
  );
  if (record.pull)
    await createComment(
      deps.github.forInstallation(index.installationId),
      { owner: index.owner, repo: index.repo },
      record.pull,
      `**Escalator halted ${escapeText(app || environment)} in ${escapeText(environment)}.** ${escapeText(decision.message)}`,
    );
  await deps.store.dashboard.recordAttention(index, `rollback:${environment}:${app}`, {
    what: `${app || environment} in ${environment}, halted after a rollback`,
    reason: decision.message,
    at: new Date(now).toISOString(),
  });
  // The promotions out of the environment say it in their health gate.
  await enqueuePromotionsOutOf(deps, index, environment, app, 'health', `halt-${record.at}`);
}

/**
 * What became of a rollback this run wrote: its pull request, or why it could not be written —
 * then a person hears it within seconds: the record says why (the health gate of the promotions
 * out of the environment and the dashboard show it) and those promotions are planned again.
 */
export async function noteRollbackOutcome(
  deps: JobDeps,
  index: RepoIndex,
  record: RollbackRecord,
  outcome: {
    pull: number | undefined;
    refused: ReadonlyArray<{ path: string; reason: string; line?: number }>;
    rows: number;
  },
  log: Log,
): Promise<void> {
  const { environment, app } = record;
  const key = `rollback:${environment}:${app}`;
  if (outcome.pull !== undefined) {
    if (record.pull !== outcome.pull || record.state !== 'proposed')
      await deps.store.rollbacks.save(index, { ...record, state: 'proposed', pull: outcome.pull });
    await deps.store.dashboard.recordAttention(index, key, null);
    return;
  }
  if (outcome.refused.length === 0) return;
  const refused = `Escalator could not change ${outcome.refused.map((r) => `${r.path}${r.line ? `:${r.line}` : ''} (${r.reason})`).join('; ')}`;
  await deps.store.rollbacks.save(index, { ...record, state: 'refused', refused });
  log.warn(
    { environment, app, from: record.from, to: record.to, refused: outcome.refused },
    'Rollback could not be written',
  );
  await deps.store.dashboard.recordAttention(index, key, {
    what: `rollback of ${app || environment} in ${environment} from ${tagsText(record.from)} to ${tagsText(record.to)}`,
    reason: refused,
    at: deps.now().toISOString(),
  });
  await enqueuePromotionsOutOf(deps, index, environment, app, 'health', `rollback-refused-${record.at}`);
}
