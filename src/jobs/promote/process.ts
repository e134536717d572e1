import type { Octokit } from '../../adapters/github/client.js';
import {
  closePull,
  createComment,
  ensureCheckRun,
  loadBranch,
  reportCheck,
  requestReviewers,
  type PullSummary,
  type RepoId,
} from '../../adapters/github/repo.js';
import { escapeText, refusalList } from '../../planners/markdown.js';
import { blockedReason, renderBlockedComment } from '../../planners/config-carry.js';
import type { RepoIndex } from '../../adapters/store/subscriptions.js';
import { ConfigError } from '../../observability/errors.js';
import { parseMarker } from '../../planners/pull-marker.js';
import {
  promotionBranch,
  promotionSubject,
  renderPromotionReply,
  type PromotionResult,
} from '../../planners/promotion-plan.js';
import type { PromoteJob } from './job.js';
import type { ProcessorContext } from '../../queue/worker.js';
import type { JobDeps } from '../shared/deps.js';
import { loadIndexOrRequest, withRepoLease } from '../shared/repo-lease.js';
import { ensureLivingPull } from '../shared/living-pull.js';
import { autoMerge } from '../shared/auto-merge.js';
import { noteFailure, notePromotion, refreshDashboard } from '../shared/dashboard-refresh.js';
import { loadRequiredChecks } from '../../adapters/github/gates.js';
import { noteRollbackOutcome } from '../shared/rollback-run.js';
import { postGates, scheduleRechecks } from './gates.js';
import { promotionPlanner, type PromotionRunPlan } from './plan.js';
import { resolveRollback } from './rollback.js';
import { verifyGate } from '../shared/verify-gate.js';
import { promotesConfig } from '../../planners/config-routes.js';

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
  const now = deps.now().getTime();
  const resolved = await resolveRollback(
    deps,
    index,
    { target: target.name, source, apps: data.app ? [data.app] : appsOf(index, [source, target.name]), now },
    data,
    log,
  );
  if (!resolved) return { rows: 0, gates: [], missing: [] };
  const { versions: rollback, record, keepOnly } = resolved;
  // A version the target's verify policy refuses is not promoted; an open pull request stays as it was.
  const verify = verifyGate(deps, data.owner, target, log);
  const head = target.verify && !rollback ? ((await loadBranch(octokit, id, index.defaultBranch))?.sha ?? '') : '';
  const rollbackRun = head
    ? {
        ...resolved,
        apps: await verify.sourceApps({ octokit, index, blobs: deps.store.blobs }, source, resolved.apps, head),
      }
    : resolved;
  if (head && rollbackRun.apps.length === 0)
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
    headChanges: promotesConfig(index.config.environments),
    // A hold or release (a freeze, an unfreeze, a freeze's end) re-checks the open promotion pull
    // request; it never opens one. Nor does a health report: promotions open when versions land
    // (a push), and a report only moves their gates, so an agent reporting an environment healthy
    // never proposes again versions a rollback just took back out.
    openNew: !keepOnly && data.reason !== 'hold' && data.reason !== 'freeze' && data.reason !== 'health',
    plan: promotionPlanner(
      deps,
      { data, index, octokit, target, source, rollback: rollbackRun, required, now, verify },
      log,
    ),
  });

  const { plan } = result;
  const { gates } = plan;
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
  await settleConfig(deps, { octokit, id, target: target.name, index }, plan, log);
  if (pull && plan.rows.length === 0 && plan.configCarried === 0 && !result.commit && !verify.refused()) {
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
    await sayNothingOpened(
      { data, target: target.name, source, rollback: rollback !== null, octokit, id, baseSha: result.base.sha, log },
      plan,
      reply,
    );
    return outcome;
  }
  outcome.pull = pull.number;
  if (result.created && target.reviewers.length > 0) await requestReviewers(octokit, id, pull.number, target.reviewers);

  // A head this run just wrote carries no check run yet: each gate is created without looking first.
  const fresh = { fresh: result.commit !== undefined && result.commit === pull.headSha };
  await postGates(octokit, id, pull, gates, {
    required,
    fresh,
    healthSource: rollback ? `${target.name} (history)` : source,
  });
  await reply({ kind: result.created ? 'opened' : 'updated', pull: pull.number });
  await scheduleRechecks(deps, data, pull, plan, now, log);
  if (target.autoMerge && gates.every((gate) => gate.state === 'passed')) {
    await autoMerge(octokit, id, pull, { baseBranch: index.defaultBranch, method: 'merge', log, required });
  }
  return outcome;
}

/**
 * No pull request after the run: a hold or a release had none to re-check; the editor refused
 * (a failing check on the default branch carries the refusals, like a bump's); or there was
 * nothing to do, which the log says and the person who asked hears.
 */
async function sayNothingOpened(
  run: {
    data: PromoteJob;
    target: string;
    source: string;
    rollback: boolean;
    octokit: Octokit;
    id: RepoId;
    baseSha: string;
    log: ProcessorContext['log'];
  },
  plan: PromotionRunPlan,
  reply: (kind: PromotionResult) => Promise<void>,
): Promise<void> {
  const { data, target, source, rollback, octokit, id, baseSha, log } = run;
  if (data.reason === 'hold' || data.reason === 'freeze') {
    // A hold or release re-checks the open promotion; it never opens one.
    log.info({ environment: target, app: data.app }, 'Hold changed; no open promotion to re-check');
    return;
  }
  if (plan.refused.length > 0) {
    // No pull request to carry the refusals: a failing check on the default branch, like a bump's.
    log.warn(
      { environment: target, app: data.app, refused: plan.refused },
      rollback ? 'Rollback refused by the editor' : 'Promotion refused by the editor',
    );
    await reportCheck(octokit, id, {
      sha: baseSha,
      name: `escalator/promote ${promotionBranch(target, data.app)}`,
      conclusion: 'failure',
      title: `${plan.refused.length} file${plan.refused.length === 1 ? '' : 's'} could not be promoted into ${target}`,
      summary: refusalList(plan.refused).join('\n'),
    });
  } else if (rollback)
    log.info(
      { environment: target, app: data.app, missing: plan.missing },
      'Nothing to roll back: the environment runs the versions it would go back to, or no rollback pull request is open',
    );
  else if (plan.rows.length > 0)
    // Versions differ, but this run may only re-check an open promotion (a health report): never
    // say "already runs" then. The promotion opens on the next landing in the source, on the
    // repository's first index, or with /escalator promote.
    log.info(
      {
        environment: target,
        source,
        app: data.app,
        reason: data.reason,
        rows: plan.rows.length,
        next: `/escalator promote ${target}${data.app ? ` ${data.app}` : ''}`,
      },
      'Promotion not opened: the versions differ, but this re-check only updates an open promotion pull request',
    );
  else
    log.info(
      { environment: target, app: data.app, missing: plan.missing },
      `Nothing to promote: ${target} already runs what ${source} runs`,
    );
  await reply({ kind: 'nothing' });
}

/**
 * What became of the waiting configuration changes: one the target already holds is done; one of
 * which nothing can be written is said once on its source pull request (`/escalator plan` lists it
 * until a promotion into the target merges).
 */
async function settleConfig(
  deps: JobDeps,
  run: { octokit: Octokit; id: RepoId; target: string; index: RepoIndex },
  plan: PromotionRunPlan,
  log: ProcessorContext['log'],
): Promise<void> {
  const { octokit, id, target, index } = run;
  for (const carry of plan.config)
    for (const carried of carry.changes) {
      const { change } = carried;
      if (carried.outcome === 'in-place') {
        await deps.store.configChanges.done(index, target, carry.app, [change.id]);
        log.info({ environment: target, app: carry.app, change: change.id }, 'Configuration change already in place');
      } else if (carried.outcome === 'blocked') {
        const reason = blockedReason(target, change.source, carried).join('; ');
        const first = await deps.store.configChanges.markBlocked(
          index,
          target,
          carry.app,
          change.id,
          reason,
          deps.now().toISOString(),
        );
        log.info(
          { environment: target, app: carry.app, change: change.id, pr: change.pull.number },
          'Configuration change cannot be promoted: every edit meets a value the target keeps, or is refused',
        );
        if (first)
          await createComment(
            octokit,
            id,
            change.pull.number,
            renderBlockedComment({ target, app: carry.app, carried }),
          );
      }
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
