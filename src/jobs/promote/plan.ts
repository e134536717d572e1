import type { Octokit } from '../../adapters/github/client.js';
import type { BranchHead } from '../../adapters/github/repo.js';
import type { RequiredChecks } from '../../adapters/github/gates.js';
import type { RepoIndex } from '../../adapters/store/subscriptions.js';
import { editSettingsFrom } from '../../planners/image-edit/index.js';
import { enforcedGates, gateEnforcement, type GateDecision } from '../../planners/promotion-gates.js';
import { planPromotion, type PromotionInput, type RunningVersion } from '../../planners/promotion-plan.js';
import type { PullMarker } from '../../planners/pull-marker.js';
import type { ProcessorContext } from '../../queue/worker.js';
import type { JobDeps } from '../shared/deps.js';
import { carriedConfig, decideGates, loadEnvFiles, promotedVersions } from '../shared/promotion-inputs.js';
import { configInput, loadConfigCarry, withConfig, type AppConfigCarry } from '../shared/config-inputs.js';
import { promotionNotes } from '../shared/pull-notes.js';
import { withTreeAt } from '../shared/indexed-files.js';
import type { PromoteJob } from './job.js';
import type { RollbackRun } from './rollback.js';
import type { VerifyGate } from '../shared/verify-gate.js';

type Environment = NonNullable<RepoIndex['config']>['environments'][number];

/** One run of the promotion job: what it promotes, from where into where. */
export interface PromotionRun {
  data: PromoteJob;
  index: RepoIndex;
  octokit: Octokit;
  target: Environment;
  /** The environment promoted from (`target.from`). */
  source: string;
  rollback: RollbackRun;
  /** The base branch's required checks: which gates hold a merge. */
  required: RequiredChecks;
  now: number;
  /** The target's verify policy: who signed, shown in "What changed". */
  verify: VerifyGate;
}

/** A promotion's plan, with its gates and the times they change. */
export type PromotionRunPlan = ReturnType<typeof planPromotion> &
  Pick<GateDecision, 'gates' | 'readyAt' | 'healthRecheckAt' | 'opensAt' | 'freezeEndsAt'> & {
    /** The configuration changes planned, per app (against the default branch). */
    config: AppConfigCarry[];
  };

/**
 * The plan of one run against the living pull request's branch (`ensureLivingPull` calls it
 * again after a conflict): read both environments' files, decide the gates, render the pull
 * request. What the pull request changes is judged against the default branch; the edits go on
 * its branch.
 */
export function promotionPlanner(
  deps: JobDeps,
  run: PromotionRun,
  log: ProcessorContext['log'],
): (base: BranchHead, open: unknown, defaultHead: BranchHead, marker: PullMarker | null) => Promise<PromotionRunPlan> {
  const { data, index, octokit, target, source, required, now, verify } = run;
  const { versions: rollback, record, because, apps } = run.rollback;
  return async (base, _open, defaultHead, marker) => {
    // An index older than the default branch (a configuration change's promotion can start before
    // the push's index job recorded the merge): one tree listing, then the blob store.
    const files = await withTreeAt({ octokit, index, blobs: deps.store.blobs }, defaultHead);
    const entries: PromotionInput['apps'] = [];
    const onBranch: PromotionInput['apps'] = [];
    // Configuration changes waiting for the target (never with a rollback): planned against the
    // default branch for the body, and against the branch for what is written on it.
    const waiting = rollback ? [] : await deps.store.configChanges.list(index, target.name, data.app);
    const carries: Array<AppConfigCarry | undefined> = [];
    const branchCarries: Array<AppConfigCarry | undefined> = [];
    for (const app of new Set([...apps, ...waiting.map((entry) => entry.app)])) {
      const sourceFiles = rollback ? [] : await loadEnvFiles(files, source, app, defaultHead.sha);
      const carry = await loadConfigCarry(deps, files, target, app, defaultHead.sha, waiting);
      const branchCarry =
        base.sha === defaultHead.sha ? carry : await loadConfigCarry(deps, files, target, app, base.sha, waiting);
      carries.push(carry);
      branchCarries.push(branchCarry);
      const targetFiles = withConfig(await loadEnvFiles(files, target.name, app, defaultHead.sha), carry);
      const versions = rollback?.get(app) ? { versions: rollback.get(app) as Map<string, RunningVersion> } : {};
      entries.push({ app, sourceFiles, targetFiles, ...versions });
      const branchFiles =
        base.sha === defaultHead.sha
          ? targetFiles
          : withConfig(await loadEnvFiles(files, target.name, app, base.sha), branchCarry);
      onBranch.push({ app, sourceFiles, targetFiles: branchFiles, ...versions });
    }
    const config = configInput(carries, { source, target: target.name, app: data.app });
    const branchConfig = configInput(branchCarries, { source, target: target.name, app: data.app });
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
        carried: carriedConfig(carries),
      },
    );
    // A rollback's reason stays on its pull request whichever job plans it (the record keeps it).
    const why = because;
    const sources = marker?.sources ?? [];
    const provenance = data.app && !rollback ? await deps.store.provenance.loadProvenance(index, source, data.app) : [];
    const input = {
      source: rollback ? `${target.name} (history)` : source,
      target: target.name,
      app: data.app,
      sources: provenance.length ? provenance : sources,
      gates,
      enforcement: gateEnforcement(required, index.defaultBranch, enforcedGates(gates)),
      editing: editSettingsFrom(index.config?.images ?? []),
      ...(healthLines ? { health: healthLines } : {}),
      ...(why ? { because: why } : {}),
      ...(rollback ? { rollback: { source, restores: record?.restores } } : {}),
    };
    // What changed between what the target runs and what it would run: never blocks the promotion.
    const withConfigInput = { ...input, ...(config ? { config } : {}) };
    const bare = planPromotion({ ...withConfigInput, apps: entries });
    const notes = verify.withSigned(
      await promotionNotes(
        deps,
        { installationId: data.installationId, owner: data.owner, repo: data.repo },
        log,
        await verify.rows(bare.rows, entries, onBranch),
        bare.body,
      ),
    );
    const plan = planPromotion({ ...withConfigInput, apps: entries, ...(notes ? { notes } : {}) });
    const branchPlan =
      base.sha === defaultHead.sha
        ? plan
        : planPromotion({ ...input, ...(branchConfig ? { config: branchConfig } : {}), apps: onBranch });
    return {
      ...plan,
      config: carries.filter((carry): carry is AppConfigCarry => carry !== undefined),
      updates: branchPlan.updates,
      deletions: branchPlan.deletions,
      gates,
      readyAt,
      healthRecheckAt,
      opensAt,
      freezeEndsAt,
    };
  };
}
