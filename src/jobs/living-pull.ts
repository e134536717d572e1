import {
  advanceBranch,
  createBranch,
  createCommit,
  createPull,
  ensureLabels,
  ensurePullOpen,
  ensurePullText,
  findOpenPull,
  loadBranch,
  resetBranch,
  type BranchHead,
  type PullSummary,
  type RepoId,
} from '../adapters/github/repo.js';
import type { Octokit } from '../adapters/github/client.js';
import { ConfigError, ConflictError } from '../observability/errors.js';
import type { Logger } from '../observability/logger.js';

/** The part of a plan the living-PR adapter applies. */
export interface BranchPlan {
  title: string;
  body: string;
  commitMessage: string;
  updates: Array<{ path: string; content: string }>;
}

export interface LivingPullResult<P extends BranchPlan> {
  plan: P;
  /** The open PR after the run (null when none was needed). */
  pull: PullSummary | null;
  commit?: string;
  /** The commit the plan was made against. */
  base: BranchHead;
  /** True when this run opened the pull request. */
  created: boolean;
}

/**
 * One living pull request per deterministic branch, kept current:
 * 1. read the default branch and the bot's branch; an open PR on it means "build on it"
 * 2. let the caller plan against that base (it loads the files it needs at `base.sha`)
 * 3. commit the plan once; move the branch by compare-and-swap (create, or fast-forward only)
 * 4. create the PR or update its text only when it differs; add missing labels
 * On a lost compare-and-swap, or a PR merged or closed meanwhile, everything is planned again from
 * fresh state (up to 4 times).
 */
export async function ensureLivingPull<P extends BranchPlan>(input: {
  octokit: Octokit;
  id: RepoId;
  defaultBranch: string;
  branch: string;
  labels: string[];
  log: Logger;
  dryRun?: boolean;
  plan: (base: BranchHead, open: PullSummary | null, defaultHead: BranchHead) => Promise<P>;
}): Promise<LivingPullResult<P>> {
  const { octokit, id, branch } = input;
  for (let attempt = 1; ; attempt++) {
    try {
      return await once();
    } catch (error) {
      if (!(error instanceof ConflictError) || attempt >= 4) throw error;
      input.log.info({ branch, attempt }, 'Branch moved meanwhile; planning again from fresh state');
    }
  }

  async function once(): Promise<LivingPullResult<P>> {
    const branchHead = await loadBranch(octokit, id, branch);
    const open = branchHead ? await findOpenPull(octokit, id, branch) : null;
    // The default branch is read after the PR: a PR merged meanwhile is then either still seen open
    // (its update below finds it merged, and the run plans again) or already in the default branch.
    // Read before it, a merge in between would be planned again on top of the old default branch.
    const defaultHead = await loadBranch(octokit, id, input.defaultBranch);
    if (!defaultHead) throw new ConfigError(`the default branch ${input.defaultBranch} of ${id.owner}/${id.repo} is gone`);
    const base = open && branchHead ? branchHead : defaultHead;
    const plan = await input.plan(base, open, defaultHead);
    if (input.dryRun) return { plan, pull: open, base, created: false };
    if (plan.updates.length === 0) {
      if (open) await ensurePullText(octokit, id, open, { title: plan.title, body: plan.body });
      return { plan, pull: open ? { ...open, title: plan.title, body: plan.body } : null, base, created: false };
    }
    const commit = await createCommit(octokit, id, base, plan.updates, plan.commitMessage);
    if (!branchHead) await createBranch(octokit, id, branch, commit);
    else if (open) await advanceBranch(octokit, id, branch, commit);
    else await resetBranch(octokit, id, branch, commit); // leftover branch of a closed PR: ours to reuse
    let pull: PullSummary;
    if (open) {
      // A person may merge or close the PR while this run writes it: the PATCH answers its state,
      // or, when the text is unchanged, one read does. Either way a lost race is planned again.
      if (!(await ensurePullText(octokit, id, open, { title: plan.title, body: plan.body }))) await ensurePullOpen(octokit, id, open.number);
      pull = { ...open, title: plan.title, body: plan.body };
    } else {
      pull = await createPull(octokit, id, { head: branch, base: input.defaultBranch, title: plan.title, body: plan.body });
    }
    await ensureLabels(octokit, id, pull.number, pull.labels, input.labels);
    input.log.info({ branch, pr: pull.number, commit, files: plan.updates.length }, 'Living pull request updated');
    return { plan, pull: { ...pull, headSha: commit, labels: [...new Set([...pull.labels, ...input.labels])] }, commit, base, created: !open };
  }
}
