import { ensureCheckRun, reportCheck } from '../../adapters/github/repo.js';
import { autoMerge } from '../shared/auto-merge.js';
import type { Candidate } from '../../adapters/store/candidates.js';
import type { RepoIndex } from '../../adapters/store/subscriptions.js';
import { ConfigError } from '../../observability/errors.js';
import { bumpBranch, planBump, renderBumpBody } from '../../planners/bump-plan.js';
import { readVersions } from '../../planners/promotion-plan.js';
import { bumpNotes } from '../shared/pull-notes.js';
import { loadFilesAt } from '../shared/indexed-files.js';
import { refusalList } from '../../planners/markdown.js';
import { editSettingsFrom } from '../../planners/image-edit/index.js';
import { loadRenderedFiles } from '../shared/rendered-files.js';
import { normalizeName } from '../../planners/image-ref.js';
import { acceptsTag, compareTags, policyFor, type TagPolicy } from '../../planners/tag-policy.js';
import { enqueueBump, type BumpJob } from './job.js';
import type { ProcessorContext } from '../../queue/worker.js';
import { noteFailure, refreshDashboard } from '../shared/dashboard-refresh.js';
import { autoMergeHeldBy } from './merge-controls.js';
import type { JobDeps } from '../shared/deps.js';
import { loadIndexOrRequest, withRepoLease } from '../shared/repo-lease.js';
import { ensureLivingPull } from '../shared/living-pull.js';
import { verifyGate } from '../shared/verify-gate.js';
import { promotesConfig } from '../../planners/config-routes.js';

export interface BumpOutcome {
  pull?: { number: number; url: string };
  commit?: string;
  changes: number;
  refused: number;
}

/**
 * Bring one (repository, environment, app) up to the images waiting for it:
 * 1. take the repository's write lease (one writer per repository across all workers)
 * 2. choose, per image, the best waiting candidate under the image's policy
 * 3. plan the edits against the living PR's branch (or the default branch) and commit them once
 * 4. move the branch by compare-and-swap; on conflict, re-plan from fresh state
 * 5. ensure the one living PR: title, body with the hidden marker, labels; auto-merge if configured
 * 6. forget the candidates handled; ones that arrived meanwhile wait for the next run
 */
export async function processBumpJob(deps: JobDeps, data: BumpJob, context: ProcessorContext): Promise<BumpOutcome> {
  const outcome = await withRepoLease(deps, data, () => bump(deps, data, context));
  await refreshDashboard(deps, data);
  return outcome;
}

async function bump(deps: JobDeps, data: BumpJob, { log }: ProcessorContext): Promise<BumpOutcome> {
  const index = await loadIndexOrRequest(deps, data, 'bump');
  if (!index.config)
    throw new ConfigError(
      `.github/escalator.yml in ${data.owner}/${data.repo} is invalid (${index.problems.length} problems); fix it and push to the default branch`,
    );
  const environment = index.config.environments.find((env) => env.name === data.environment);
  if (!environment)
    throw new ConfigError(
      `environment ${data.environment} is no longer in .github/escalator.yml of ${data.owner}/${data.repo}`,
    );

  const waiting = await deps.store.candidates.loadCandidates(data, data.environment, data.app);
  const verify = verifyGate(deps, data.owner, environment, log);
  const chosen = await verify.images(chooseCandidates(waiting, index));
  // An image whose signature is not there yet stays waiting, and is checked again (verify-gate.ts).
  const unsigned = verify.waiting(waiting);
  const octokit = deps.github.forInstallation(data.installationId);
  const id = { owner: data.owner, repo: data.repo };
  const branch = bumpBranch(data.environment, data.app);
  // Only the files that reference one of the images are read (the index knows which).
  const names = new Set(chosen.map(({ image }) => normalizeName(image.repository) ?? image.repository));
  const paths = index.files
    .filter(
      (file) =>
        file.environment === data.environment && file.app === data.app && file.images.some((name) => names.has(name)),
    )
    .map((file) => file.path);
  const addImages = environment.addImages === true;

  const result = await ensureLivingPull({
    octokit,
    store: deps.store,
    id,
    defaultBranch: index.defaultBranch,
    branch,
    labels: ['escalator', `env:${data.environment}`, ...index.config.labels],
    log,
    dryRun: index.config.dryRun,
    headChanges: promotesConfig(index.config.environments),
    plan: async (base, _open, defaultHead, marker) => {
      const source = { octokit, index, blobs: deps.store.blobs };
      const files = await loadFilesAt(source, paths, base.sha);
      const plan = planBump({
        environment: data.environment,
        app: data.app,
        files,
        images: chosen,
        existing: marker,
        editing: editSettingsFrom(index.config?.images ?? []),
        // addImages: the bases the kustomizations reach say which images they render.
        ...(addImages ? { addImages: { rendered: await loadRenderedFiles(octokit, id, base.sha, files) } } : {}),
      });
      if (!deps.notes || plan.marker.images.length === 0) return plan;
      // What changed since what the environment runs now (its files on the default branch).
      const running = base.sha === defaultHead.sha ? files : await loadFilesAt(source, paths, defaultHead.sha);
      const notes = await bumpNotes(deps, data, log, plan.marker.images, readVersions(running), waiting, plan.body);
      return { ...plan, body: renderBumpBody(plan.marker, plan.refused, verify.withSigned(notes)) };
    },
  });
  const { plan, pull } = result;
  await verify.report(octokit, id, { pullHead: pull?.headSha, baseSha: result.base.sha, branch });
  if (plan.refused.length > 0) log.warn({ refused: plan.refused }, 'Some files were refused by the editor');
  // Files Escalator would not edit stay on the dashboard until a bump of this app edits cleanly.
  await deps.store.dashboard.recordAttention(
    index,
    `bump-refused:${data.environment}:${data.app}`,
    plan.refused.length > 0 && !index.config.dryRun
      ? {
          what: `bump into ${data.environment} (${data.app})`,
          reason: `Escalator refused to edit ${plan.refused.map((r) => `${r.path}${r.line ? `:${r.line}` : ''} (${r.reason})`).join('; ')}`,
          at: deps.now().toISOString(),
        }
      : null,
  );
  if (index.config.dryRun) {
    // dryRun: the plan is posted as a check run on the default branch instead of a pull request.
    log.info({ branch, title: plan.title, changes: plan.changes }, 'Dry run: bump planned, nothing written');
    if (plan.updates.length > 0)
      await ensureCheckRun(octokit, id, result.base.sha, `escalator/plan ${branch}`, {
        status: 'completed',
        conclusion: 'neutral',
        title: `Dry run: ${plan.title}`,
        summary: plan.body,
      });
  } else if (!pull && plan.refused.length > 0) {
    // No pull request to carry the refusals: make them visible as a failing check on the default branch.
    await reportCheck(octokit, id, {
      sha: result.base.sha,
      name: 'escalator/bump',
      conclusion: 'failure',
      title: `${plan.refused.length} file${plan.refused.length === 1 ? '' : 's'} could not be updated in ${data.environment}`,
      summary: refusalList(plan.refused).join('\n'),
    });
  }
  await deps.store.candidates.removeCandidates(
    data,
    data.environment,
    data.app,
    waiting.filter((candidate) => !unsigned.includes(candidate)).map((candidate) => candidate.field),
  );
  if (unsigned.length > 0)
    await enqueueBump(
      deps.producer,
      data,
      { deliveryId: `verify-${deps.now().getTime()}`, tag: 'recheck' },
      deps.debounceMs * 20,
    );

  if (environment.autoMerge && pull && !index.config.dryRun) {
    // A freeze or a closed window holds auto-merge back (docs/controls.md); the dashboard says so.
    const held = await autoMergeHeldBy(deps, index, environment);
    await deps.store.dashboard.recordAttention(
      index,
      `bump:${data.environment}:${data.app}`,
      held
        ? {
            what: `bump #${pull.number} into ${data.environment}`,
            reason: `not merged automatically: ${held}`,
            at: deps.now().toISOString(),
          }
        : null,
    );
    if (held) log.info({ pr: pull.number, reason: held }, 'Auto-merge held back by a freeze or a window');
    else await autoMerge(octokit, id, pull, { baseBranch: index.defaultBranch, method: 'squash', log });
  }
  return {
    changes: plan.changes.length,
    refused: plan.refused.length,
    ...(result.commit ? { commit: result.commit } : {}),
    ...(pull ? { pull: { number: pull.number, url: pull.htmlUrl } } : {}),
  };
}

/** A bump failed for good: the dashboard lists it until a bump of the same app succeeds. */
export async function reportBumpFailure(deps: JobDeps, data: BumpJob, error: Error): Promise<void> {
  await noteFailure(
    deps,
    data,
    { id: `bump-refused:${data.environment}:${data.app}`, text: `bump into ${data.environment} (${data.app})` },
    error,
  );
}

/** Per image, the best waiting candidate its policy accepts (newest push for `newest`). */
export function chooseCandidates(
  waiting: Candidate[],
  index: RepoIndex,
): Array<{ image: { repository: string; tag: string; digest?: string }; policy: TagPolicy }> {
  const best = new Map<string, { candidate: Candidate; policy: TagPolicy }>();
  for (const candidate of waiting) {
    const policy = policyFor(index.config?.images ?? [], candidate.repository);
    if (!acceptsTag(policy, candidate.tag).ok) continue;
    const name = normalizeName(candidate.repository) ?? candidate.repository;
    const seen = best.get(name);
    const order = seen
      ? compareTags(
          policy,
          { tag: candidate.tag, at: candidate.receivedAt },
          { tag: seen.candidate.tag, at: seen.candidate.receivedAt },
        )
      : 1;
    if (!seen || order > 0 || (order === 0 && candidate.receivedAt > seen.candidate.receivedAt))
      best.set(name, { candidate, policy });
  }
  return [...best.values()]
    .sort((a, b) => a.candidate.repository.localeCompare(b.candidate.repository))
    .map(({ candidate, policy }) => ({
      image: {
        repository: candidate.repository,
        tag: candidate.tag,
        ...(candidate.digest ? { digest: candidate.digest } : {}),
      },
      policy,
    }));
}
