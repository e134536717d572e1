import type { Octokit } from '../../adapters/github/client.js';
import type { RequiredChecks } from '../../adapters/github/gates.js';
import { ensureCheckRun, type PullSummary, type RepoId } from '../../adapters/github/repo.js';
import type { Gate } from '../../planners/promotion-gates.js';
import { enqueuePromote } from '../../queue/enqueue.js';
import type { ProcessorContext } from '../../queue/worker.js';
import type { JobDeps } from '../shared/deps.js';
import type { PromoteJob } from './job.js';
import type { PromotionRunPlan } from './plan.js';

/**
 * Each gate as a check run on the pull request's head, which is what GitHub holds a merge to
 * (docs/gates.md). A head this run just wrote (`fresh`) carries no check run yet: each gate is
 * created without looking first. A required `escalator/health` with no health to wait for passes,
 * since a required check that never reports holds a merge forever.
 */
export async function postGates(
  octokit: Octokit,
  id: RepoId,
  pull: PullSummary,
  gates: Gate[],
  options: { required: RequiredChecks; fresh: { fresh: boolean }; healthSource: string },
): Promise<void> {
  const { fresh } = options;
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
  if (!gates.some((gate) => gate.name === 'health') && options.required.contexts.includes('escalator/health'))
    await ensureCheckRun(
      octokit,
      id,
      pull.headSha,
      'escalator/health',
      {
        status: 'completed',
        conclusion: 'success',
        title: 'health: not reported',
        summary: `${options.healthSource} has no \`health\` setting, so there is no agent report to wait for (docs/health.md).`,
      },
      fresh,
    );
}

/**
 * A gate that is waiting on time plans this promotion again when it may change: a pending health
 * gate at its timeout, a pending soak when it ends, a closed window when it opens, a freeze when
 * it ends. Delayed jobs in Redis, not polling loops: a restart loses none (docs/controls.md).
 * They answer no one.
 */
export async function scheduleRechecks(
  deps: JobDeps,
  data: PromoteJob,
  pull: Pick<PullSummary, 'number' | 'headSha'>,
  plan: Pick<PromotionRunPlan, 'gates' | 'readyAt' | 'healthRecheckAt' | 'opensAt' | 'freezeEndsAt'>,
  now: number,
  log: ProcessorContext['log'],
): Promise<void> {
  const { gates, readyAt, healthRecheckAt, opensAt, freezeEndsAt } = plan;
  const { headSha } = pull;
  const { replyTo: _replyTo, skipSoak: _skipSoak, ...again } = data;
  const soak = gates.find((gate) => gate.name === 'soak');
  const health = gates.find((gate) => gate.name === 'health');
  if (health?.state === 'pending' && healthRecheckAt !== undefined) {
    // Nothing new may be reported: the timeout (or a degraded spell outlasting `tolerate`) decides then.
    await enqueuePromote(
      deps.producer,
      { ...again, reason: 'health' },
      `${headSha}-${healthRecheckAt}`,
      Math.max(0, healthRecheckAt - now) + 50,
    );
    log.info(
      { pr: pull.number, recheckAt: new Date(healthRecheckAt).toISOString() },
      'Health pending; re-check scheduled at its timeout',
    );
  }
  // While health is not passed, soak has no start yet: the report that makes it healthy re-plans.
  if (soak?.state === 'pending' && (!health || health.state === 'passed')) {
    await enqueuePromote(
      deps.producer,
      { ...again, reason: 'soak' },
      `${headSha}-${readyAt}`,
      Math.max(0, readyAt - now) + 50,
    );
    log.info({ pr: pull.number, readyAt: new Date(readyAt).toISOString() }, 'Soak pending; re-check scheduled');
  }
  const window = gates.find((gate) => gate.name === 'window');
  if (window?.state === 'pending' && opensAt !== undefined) {
    await enqueuePromote(
      deps.producer,
      { ...again, reason: 'window' },
      `${headSha}-${opensAt}`,
      Math.max(0, opensAt - now) + 50,
    );
    log.info({ opensAt: new Date(opensAt).toISOString() }, 'Window closed; re-check scheduled at its opening');
  }
  const freeze = gates.find((gate) => gate.name === 'freeze');
  if (freeze?.state === 'failed' && freezeEndsAt !== undefined) {
    await enqueuePromote(
      deps.producer,
      { ...again, reason: 'freeze' },
      `${headSha}-${freezeEndsAt}`,
      Math.max(0, freezeEndsAt - now) + 50,
    );
    log.info({ endsAt: new Date(freezeEndsAt).toISOString() }, 'Frozen; re-check scheduled at the end of the freeze');
  }
}
