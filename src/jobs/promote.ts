import {
  closePull,
  createComment,
  ensureCheckRun,
  loadBranch,
  reportCheck,
  requestReviewers,
  type PullSummary,
} from '../adapters/github/repo.js';
import { escapeText, refusalList } from '../planners/markdown.js';
import { editSettingsFrom } from '../planners/image-edit/index.js';
import type { RepoIndex } from '../adapters/store/subscriptions.js';
import { ConfigError } from '../observability/errors.js';
import { parseMarker } from '../planners/pull-marker.js';
import {
  planPromotion,
  promotionBranch,
  promotionSubject,
  renderPromotionReply,
  type PromotionInput,
  type PromotionResult,
  type RunningVersion,
} from '../planners/promotion-plan.js';
import { enqueuePromote } from '../queue/enqueue.js';
import type { RollbackRecord } from '../planners/rollback.js';
import type { PromoteJob } from '../queue/jobs.js';
import type { ProcessorContext } from '../queue/worker.js';
import type { JobDeps } from './shared/deps.js';
import { loadIndexOrRequest, withRepoLease } from './shared/repo-lease.js';
import { ensureLivingPull } from './shared/living-pull.js';
import { autoMerge } from './shared/auto-merge.js';
import { noteFailure, notePromotion, refreshDashboard } from './shared/dashboard-refresh.js';
import { loadRequiredChecks } from '../adapters/github/gates.js';
import { gateEnforcement } from '../planners/promotion-gates.js';
import { decideGates, loadEnvFiles, promotedVersions } from './shared/promotion-inputs.js';
import { promotionNotes } from './shared/pull-notes.js';
import { verifyGate } from './shared/verify-gate.js';
import {
  guardRollbacks,
  noteRollbackOutcome,
  recordVersions,
  startRollback,
  type RollbackVersions,
} from './shared/rollback-run.js';

export interface PromoteOutcome {
  pull?: number;
  rows: number;
  gates: Array<{ name: string; state: 'passed' | 'pending' | 'failed'; detail: string }>;
  closed?: number;
  missing: string[];
}

/**
 * Promote what environment X runs into Y (Y.from = X), app by app or grouped:
 * 1. take the repository's write lease
 * 2. read X's versions at the default branch (or, for a rollback, Y's previous versions)
 * 3. evaluate the gates: health (X runs them synced and healthy, when X reports it), soak (how
 *    long X has run them, healthy when it reports health) and hold
 * 4. plan Y's files and keep the one living promotion PR current (CAS, re-plan on conflict)
 * 5. a PR that became unnecessary is closed with a comment
 * 6. check runs for the gates; a pending soak or health gate schedules this job again when it
 *    elapses or times out;
 *    reviewers on a new PR; auto-merge when every gate passed
 */
export async function processPromoteJob(
  deps: JobDeps,
  data: PromoteJob,
  context: ProcessorContext,
): Promise<PromoteOutcome> {
  const outcome = await withRepoLease(deps, data, () => promote(deps, data, context));
  await refreshDashboard(deps, data);
  return outcome;
}

async function promote(deps: JobDeps, data: PromoteJob, { log }: ProcessorContext): Promise<PromoteOutcome> {
  const index = await loadIndexOrRequest(deps, data, 'promotion');
  if (!index.config)
    throw new ConfigError(
      `.github/escalator.yml in ${data.owner}/${data.repo} is invalid; fix it and push to the default branch`,
    );
  const target = index.config.environments.find((env) => env.name === data.environment);
  if (!target) throw new ConfigError(`environment ${data.environment} is not in .github/escalator.yml`);
  if (target.from === 'registry')
    throw new ConfigError(
      `environment ${target.name} takes images from the registry; there is nothing to promote into it`,
    );
  const source = target.from;
  const octokit = deps.github.forInstallation(data.installationId);
  const id = { owner: data.owner, repo: data.repo };
  let apps = data.app ? [data.app] : appsOf(index, [source, target.name]);
  const now = deps.now().getTime();
  let because = data.because;
  // A rollback sticks (src/planners/rollback.ts): what it took out is not proposed again on
  // Escalator's own, and an environment that stays degraded after it is halted, not rolled back again.
  let rollback: RollbackVersions | null = null;
  let record: RollbackRecord | undefined;
  let keepOnly = false;
  if (data.reason === 'rollback') {
    const started = await startRollback(deps, index, target.name, data, apps, now, log);
    if ('over' in started) {
      log.info(
        { environment: target.name, app: data.app, spell: data.spell, reason: started.over },
        'No automatic rollback',
      );
      return { rows: 0, gates: [], missing: [] };
    }
    ({ versions: rollback, record, because } = started);
  } else {
    const guarded = await guardRollbacks(deps, index, target.name, source, data, apps, log);
    apps = guarded.apps;
    if (guarded.replan) {
      // Its rollback pull request stays a rollback whichever job plans it (a hold, a window, a merge).
      record = guarded.replan;
      rollback = recordVersions(record);
      because = record.because;
      apps = [record.app];
      keepOnly = true;
    } else if (apps.length === 0) {
      log.info({ environment: target.name, app: data.app, reasons: guarded.blocked }, 'Nothing proposed');
      return { rows: 0, gates: [], missing: [] };
    }
  }
  // A version the target's verify policy refuses is not promoted; an open pull request stays as it was.
  const verify = verifyGate(deps, data.owner, target, log);
  const head = target.verify && !rollback ? ((await loadBranch(octokit, id, index.defaultBranch))?.sha ?? '') : '';
  if (head) apps = await verify.sourceApps({ octokit, index, blobs: deps.store.blobs }, source, apps, head);
  if (head && apps.length === 0)
    return verify.stopped(octokit, id, {
      sha: head,
      branch: promotionBranch(target.name, data.app),
      replyTo: data.replyTo,
      requestedBy: data.requestedBy,
    });
  // Whether GitHub holds a merge to Escalator's gates: said on the pull request when it does not.
  const required = await loadRequiredChecks(octokit, id, index.defaultBranch);

  const result = await ensureLivingPull({
    octokit,
    store: deps.store,
    id,
    defaultBranch: index.defaultBranch,
    branch: promotionBranch(target.name, data.app),
    labels: [rollback ? 'rollback' : 'promotion', `env:${target.name}`, ...index.config.labels],
    log,
    dryRun: index.config.dryRun,
    // A hold or release (a freeze, an unfreeze, a freeze's end) re-checks the open promotion pull
    // request; it never opens one. Nor does a health report: promotions open when versions land
    // (a push), and a report only moves their gates, so an agent reporting an environment healthy
    // never proposes again versions a rollback just took back out.
    openNew: !keepOnly && data.reason !== 'hold' && data.reason !== 'freeze' && data.reason !== 'health',
    plan: async (base, _open, defaultHead, marker) => {
      const files = { octokit, index, blobs: deps.store.blobs };
      // What the PR changes is judged against the default branch; the edits go on the PR's branch.
      const entries: PromotionInput['apps'] = [];
      const onBranch: PromotionInput['apps'] = [];
      for (const app of apps) {
        const sourceFiles = rollback ? [] : await loadEnvFiles(files, source, app, defaultHead.sha);
        const targetFiles = await loadEnvFiles(files, target.name, app, defaultHead.sha);
        const versions = rollback?.get(app) ? { versions: rollback.get(app) as Map<string, RunningVersion> } : {};
        entries.push({ app, sourceFiles, targetFiles, ...versions });
        const branchFiles =
          base.sha === defaultHead.sha ? targetFiles : await loadEnvFiles(files, target.name, app, base.sha);
        onBranch.push({ app, sourceFiles, targetFiles: branchFiles, ...versions });
      }
      // Gates: what the source has run and for how long (soak), holds, a skipped soak; decided by planGates.
      if (data.skipSoak && !rollback && data.requestedBy)
        await deps.store.holds.setSoakSkip(index, target.name, data.app, {
          by: `@${data.requestedBy}`,
          versions: promotedVersions(entries),
        });
      const { gates, readyAt, healthRecheckAt, healthLines, opensAt, freezeEndsAt } = await decideGates(
        deps,
        index,
        target,
        data.app,
        entries,
        {
          rollback: rollback !== null,
          now,
          freezeLifted: data.reason === 'freeze',
        },
      );
      // A rollback's reason stays on its pull request whichever job plans it (the record keeps it).
      const why = because;
      const sources = marker?.sources ?? [];
      const provenance =
        data.app && !rollback ? await deps.store.provenance.loadProvenance(index, source, data.app) : [];
      const input = {
        source: rollback ? `${target.name} (history)` : source,
        target: target.name,
        app: data.app,
        sources: provenance.length ? provenance : sources,
        gates,
        enforcement: gateEnforcement(required, index.defaultBranch, gates),
        editing: editSettingsFrom(index.config?.images ?? []),
        ...(healthLines ? { health: healthLines } : {}),
        ...(why ? { because: why } : {}),
        ...(rollback ? { rollback: { source, restores: record?.restores } } : {}),
      };
      // What changed between what the target runs and what it would run: never blocks the promotion.
      const bare = planPromotion({ ...input, apps: entries });
      const notes = verify.withSigned(
        await promotionNotes(
          deps,
          { installationId: data.installationId, owner: data.owner, repo: data.repo },
          log,
          await verify.rows(bare.rows, entries, onBranch),
          bare.body,
        ),
      );
      const plan = planPromotion({ ...input, apps: entries, ...(notes ? { notes } : {}) });
      return {
        ...plan,
        updates: base.sha === defaultHead.sha ? plan.updates : planPromotion({ ...input, apps: onBranch }).updates,
        gates,
        readyAt,
        healthRecheckAt,
        opensAt,
        freezeEndsAt,
      };
    },
  });

  const { plan } = result;
  const { gates, readyAt, healthRecheckAt, opensAt, freezeEndsAt } = plan;
  const pull: PullSummary | null = result.pull;
  const at = { pullHead: pull?.headSha, baseSha: result.base.sha, branch: promotionBranch(target.name, data.app) };
  await verify.report(octokit, id, at);
  const outcome: PromoteOutcome = { rows: plan.rows.length, gates, missing: plan.missing };
  if (record && !index.config.dryRun)
    await noteRollbackOutcome(
      deps,
      index,
      record,
      { pull: pull?.number, refused: plan.refused, rows: plan.rows.length },
      log,
    );
  await notePromotion(deps, index, {
    branch: promotionBranch(target.name, data.app),
    environment: target.name,
    app: data.app,
    pull: pull && !index.config.dryRun ? { number: pull.number, title: plan.title } : null,
    gates,
    refused: plan.refused,
  });
  // The person whose command asked for this run hears what it did, whatever it did.
  const reply = async (kind: PromotionResult): Promise<void> => {
    if (!data.replyTo) return;
    await createComment(
      octokit,
      id,
      data.replyTo,
      renderPromotionReply(
        { source, target: target.name, app: data.app, rollback: rollback !== null, requestedBy: data.requestedBy },
        plan,
        gates,
        kind,
      ),
    );
  };
  if (index.config.dryRun) {
    log.info(
      { environment: target.name, app: data.app, rows: plan.rows, gates },
      'Dry run: promotion planned, nothing written',
    );
    if (plan.rows.length > 0)
      await ensureCheckRun(octokit, id, result.base.sha, `escalator/plan ${promotionBranch(target.name, data.app)}`, {
        status: 'completed',
        conclusion: 'neutral',
        title: `Dry run: ${plan.title}`,
        summary: plan.body,
      });
    await reply({ kind: 'dry-run' });
    return outcome;
  }
  if (pull && plan.rows.length === 0 && !result.commit && !verify.refused()) {
    const marker = parseMarker(pull.body);
    if (marker?.kind === 'promote') {
      await closePull(
        octokit,
        id,
        pull.number,
        `Escalator closed this pull request: **${target.name}** already runs the versions it would promote. A newer version in ${source} opens a new one.`,
      );
      log.info({ pr: pull.number }, 'Promotion no longer needed; pull request closed');
      await reply({ kind: 'closed', pull: pull.number });
      return { ...outcome, closed: pull.number };
    }
  }
  if (!pull) {
    if (data.reason === 'hold' || data.reason === 'freeze') {
      // A hold or release re-checks the open promotion; it never opens one.
      log.info({ environment: target.name, app: data.app }, 'Hold changed; no open promotion to re-check');
      return outcome;
    }
    if (plan.refused.length > 0) {
      // No pull request to carry the refusals: a failing check on the default branch, like a bump's.
      log.warn(
        { environment: target.name, app: data.app, refused: plan.refused },
        rollback ? 'Rollback refused by the editor' : 'Promotion refused by the editor',
      );
      await reportCheck(octokit, id, {
        sha: result.base.sha,
        name: `escalator/promote ${promotionBranch(target.name, data.app)}`,
        conclusion: 'failure',
        title: `${plan.refused.length} file${plan.refused.length === 1 ? '' : 's'} could not be promoted into ${target.name}`,
        summary: refusalList(plan.refused).join('\n'),
      });
    } else if (rollback)
      log.info(
        { environment: target.name, app: data.app, missing: plan.missing },
        'Nothing to roll back: the environment runs the versions it would go back to, or no rollback pull request is open',
      );
    else if (plan.rows.length > 0)
      // Versions differ, but this run may only re-check an open promotion (a health report): never
      // say "already runs" then. The promotion opens on the next landing in the source, on the
      // repository's first index, or with /escalator promote.
      log.info(
        {
          environment: target.name,
          source,
          app: data.app,
          reason: data.reason,
          rows: plan.rows.length,
          next: `/escalator promote ${target.name}${data.app ? ` ${data.app}` : ''}`,
        },
        'Promotion not opened: the versions differ, but this re-check only updates an open promotion pull request',
      );
    else
      log.info(
        { environment: target.name, app: data.app, missing: plan.missing },
        `Nothing to promote: ${target.name} already runs what ${source} runs`,
      );
    await reply({ kind: 'nothing' });
    return outcome;
  }
  outcome.pull = pull.number;
  if (result.created && target.reviewers.length > 0) await requestReviewers(octokit, id, pull.number, target.reviewers);

  // A head this run just wrote carries no check run yet: each gate is created without looking first.
  const fresh = { fresh: result.commit !== undefined && result.commit === pull.headSha };
  for (const gate of gates) {
    await ensureCheckRun(
      octokit,
      id,
      pull.headSha,
      `escalator/${gate.name}`,
      {
        status: gate.state === 'pending' ? 'in_progress' : 'completed',
        ...(gate.state === 'pending' ? {} : { conclusion: gate.state === 'passed' ? 'success' : 'failure' }),
        title:
          gate.state === 'passed'
            ? `${gate.name}: passed`
            : gate.state === 'pending'
              ? `${gate.name}: waiting`
              : `${gate.name}: blocked`,
        summary: gate.detail,
      },
      fresh,
    );
  }
  if (!gates.some((gate) => gate.name === 'health') && required.contexts.includes('escalator/health'))
    // A required check that never reports holds a merge forever: no health to wait for is a pass.
    await ensureCheckRun(
      octokit,
      id,
      pull.headSha,
      'escalator/health',
      {
        status: 'completed',
        conclusion: 'success',
        title: 'health: not reported',
        summary: `${rollback ? `${target.name} (history)` : source} has no \`health\` setting, so there is no agent report to wait for (docs/health.md).`,
      },
      fresh,
    );
  await reply({ kind: result.created ? 'opened' : 'updated', pull: pull.number });
  const soak = gates.find((gate) => gate.name === 'soak');
  const health = gates.find((gate) => gate.name === 'health');
  if (health?.state === 'pending' && healthRecheckAt !== undefined) {
    // Nothing new may be reported: the timeout (or a degraded spell outlasting `tolerate`) decides then.
    const { replyTo: _replyTo, skipSoak: _skipSoak, ...again } = data;
    await enqueuePromote(
      deps.producer,
      { ...again, reason: 'health' },
      `${pull.headSha}-${healthRecheckAt}`,
      Math.max(0, healthRecheckAt - now) + 50,
    );
    log.info(
      { pr: pull.number, recheckAt: new Date(healthRecheckAt).toISOString() },
      'Health pending; re-check scheduled at its timeout',
    );
  }
  // While health is not passed, soak has no start yet: the report that makes it healthy re-plans.
  if (soak?.state === 'pending' && (!health || health.state === 'passed')) {
    // A delayed job, not a polling loop: it lives in Redis and survives restarts. It answers no one.
    const { replyTo: _replyTo, skipSoak: _skipSoak, ...again } = data;
    await enqueuePromote(
      deps.producer,
      { ...again, reason: 'soak' },
      `${pull.headSha}-${readyAt}`,
      Math.max(0, readyAt - now) + 50,
    );
    log.info({ pr: pull.number, readyAt: new Date(readyAt).toISOString() }, 'Soak pending; re-check scheduled');
  }
  await scheduleControls(deps, data, pull.headSha, gates, { now, opensAt, freezeEndsAt }, log);
  if (target.autoMerge && gates.every((gate) => gate.state === 'passed')) {
    await autoMerge(octokit, id, pull, { baseBranch: index.defaultBranch, method: 'merge', log, required });
  }
  return outcome;
}

/**
 * A closed window and a freeze with an end each re-plan this promotion when they change: delayed
 * jobs in Redis, so a restart loses neither (docs/controls.md). They answer no one.
 */
async function scheduleControls(
  deps: JobDeps,
  data: PromoteJob,
  headSha: string,
  gates: PromoteOutcome['gates'],
  times: { now: number; opensAt: number | undefined; freezeEndsAt: number | undefined },
  log: ProcessorContext['log'],
): Promise<void> {
  const { replyTo: _replyTo, skipSoak: _skipSoak, ...again } = data;
  const window = gates.find((gate) => gate.name === 'window');
  if (window?.state === 'pending' && times.opensAt !== undefined) {
    await enqueuePromote(
      deps.producer,
      { ...again, reason: 'window' },
      `${headSha}-${times.opensAt}`,
      Math.max(0, times.opensAt - times.now) + 50,
    );
    log.info({ opensAt: new Date(times.opensAt).toISOString() }, 'Window closed; re-check scheduled at its opening');
  }
  const freeze = gates.find((gate) => gate.name === 'freeze');
  if (freeze?.state === 'failed' && times.freezeEndsAt !== undefined) {
    await enqueuePromote(
      deps.producer,
      { ...again, reason: 'freeze' },
      `${headSha}-${times.freezeEndsAt}`,
      Math.max(0, times.freezeEndsAt - times.now) + 50,
    );
    log.info(
      { endsAt: new Date(times.freezeEndsAt).toISOString() },
      'Frozen; re-check scheduled at the end of the freeze',
    );
  }
}

/** A promotion failed for good: the dashboard lists it, and the person whose command asked hears why. */
export async function reportPromoteFailure(deps: JobDeps, data: PromoteJob, error: Error): Promise<void> {
  if (data.replyTo)
    await createComment(
      deps.github.forInstallation(data.installationId),
      { owner: data.owner, repo: data.repo },
      data.replyTo,
      `${data.requestedBy ? `@${data.requestedBy} ` : ''}${promotionSubject({ target: data.environment, app: data.app, rollback: data.reason === 'rollback' })} failed: ${escapeText(error.message)}.`,
    );
  await noteFailure(
    deps,
    data,
    {
      id: `promote:${data.environment}:${data.app}`,
      text: `promotion into ${data.environment}${data.app ? ` (${data.app})` : ''}`,
    },
    error,
  );
}

/** Apps that have files in any of the environments (for grouped promotions). */
function appsOf(index: RepoIndex, environments: string[]): string[] {
  return [
    ...new Set(index.files.filter((file) => environments.includes(file.environment)).map((file) => file.app)),
  ].sort();
}
