import type { SandboxContext } from './context.js';
import { anyNotPassing, firstUnmet, requiredChecks, requiresUpToDate } from './gates.js';
import type { FileChange, MergeResult } from './git.js';
import type { SandboxPull, SandboxRepo, SandboxTeam, SandboxUser } from './model.js';
import { pullShape, type PullDetails } from './shapes/pulls.js';

/** Which base:head pair each pull request's `refs/pull/N/*` refs were last written for. */
const testMerges = new WeakMap<SandboxPull, string>();

/** The base commit a pull request is compared against right now. */
export async function baseShaOf(repo: SandboxRepo, pull: SandboxPull): Promise<string> {
  if (pull.closedBaseSha) return pull.closedBaseSha;
  return (await repo.git.readRef(`refs/heads/${pull.baseRef}`)) ?? pull.headSha;
}

/** `merge-tree` of head into base, cached by the pair of SHAs. */
export function checkMerge(repo: SandboxRepo, base: string, head: string): Promise<MergeResult> {
  return repo.git.mergeTree(base, head);
}

/** Files a pull request changes: head against its merge base with the base branch (GitHub's three-dot diff). */
export async function pullFiles(repo: SandboxRepo, pull: SandboxPull): Promise<FileChange[]> {
  const base = await baseShaOf(repo, pull);
  const mergeBase = (await repo.git.mergeBase(base, pull.headSha)) ?? base;
  return repo.git.diff(mergeBase, pull.headSha);
}

export async function pullCommits(repo: SandboxRepo, pull: SandboxPull): Promise<string[]> {
  const base = await baseShaOf(repo, pull);
  return (await repo.git.revList(pull.headSha, { exclude: base })).reverse();
}

/**
 * Computes mergeability like GitHub: a test merge commit of head into base, kept at
 * `refs/pull/N/merge` and reported as `merge_commit_sha` while the pull request is open.
 */
async function refreshTestMerge(
  context: SandboxContext,
  repo: SandboxRepo,
  pull: SandboxPull,
  base: string,
): Promise<MergeResult> {
  const merge = await checkMerge(repo, base, pull.headSha);
  const pair = `${base}:${pull.headSha}`;
  if (testMerges.get(pull) === pair) return merge;
  await repo.git.setRef(`refs/pull/${pull.number}/head`, pull.headSha);
  pull.mergeCommitSha = null;
  if (merge.clean) {
    const identity = { name: 'GitHub', email: 'noreply@github.com', date: context.state.clock() };
    const message = `Merge ${pull.headSha} into ${base}\n`;
    pull.mergeCommitSha = await repo.git.commitTree(merge.tree, [base, pull.headSha], message, identity, identity);
    await repo.git.setRef(`refs/pull/${pull.number}/merge`, pull.mergeCommitSha);
  }
  testMerges.set(pull, pair);
  return merge;
}

function people(context: SandboxContext, pull: SandboxPull): { reviewers: SandboxUser[]; teams: SandboxTeam[] } {
  return {
    reviewers: pull.requestedReviewers.flatMap((login) => context.state.user(login) ?? []),
    teams: pull.requestedTeams.flatMap((key) => {
      const [org = '', slug = ''] = key.split('/');
      return context.state.team(org, slug) ?? [];
    }),
  };
}

/** The full `pull-request` object, mergeability and counts included. */
export async function describePull(
  context: SandboxContext,
  repo: SandboxRepo,
  pull: SandboxPull,
  target: 'rest' | 'webhook' = 'rest',
): Promise<Record<string, unknown>> {
  const base = await baseShaOf(repo, pull);
  let mergeable: boolean | null = null;
  let mergeableState: PullDetails['mergeableState'] = 'unknown';
  if (pull.state === 'open') {
    const merge = await refreshTestMerge(context, repo, pull, base);
    mergeable = merge.clean;
    mergeableState = merge.clean ? await mergeStateOf(context, repo, pull) : 'dirty';
  }
  const files = await pullFiles(repo, pull);
  const details: PullDetails = {
    mergeable,
    mergeableState,
    commits: (await pullCommits(repo, pull)).length,
    additions: files.reduce((sum, file) => sum + file.additions, 0),
    deletions: files.reduce((sum, file) => sum + file.deletions, 0),
    changedFiles: files.length,
    comments: [...context.state.comments.values()].filter((c) => c.repoId === repo.id && c.issueNumber === pull.number)
      .length,
  };
  return pullShape(context.urls, repo, pull, base, people(context, pull), details, target);
}

/**
 * What the merge box says of a pull request without conflicts: `blocked` while a required check
 * is missing, pending or failing; `behind` when the branch must be up to date and is not;
 * `unstable` when every required check passes but another failed or still runs; `clean` otherwise.
 */
export async function mergeStateOf(
  context: SandboxContext,
  repo: SandboxRepo,
  pull: SandboxPull,
): Promise<'clean' | 'blocked' | 'behind' | 'unstable'> {
  if (firstUnmet(context, repo, pull.headSha, requiredChecks(repo, pull.baseRef))) return 'blocked';
  if (requiresUpToDate(repo, pull.baseRef) && !(await isUpToDate(repo, pull))) return 'behind';
  return anyNotPassing(context, repo, pull.headSha) ? 'unstable' : 'clean';
}

/** Whether the head contains the base branch's current commit. */
export async function isUpToDate(repo: SandboxRepo, pull: SandboxPull): Promise<boolean> {
  return repo.git.isAncestor(await baseShaOf(repo, pull), pull.headSha);
}

/** The `pull-request-simple` object of list endpoints. */
export async function summarizePull(
  context: SandboxContext,
  repo: SandboxRepo,
  pull: SandboxPull,
): Promise<Record<string, unknown>> {
  return pullShape(context.urls, repo, pull, await baseShaOf(repo, pull), people(context, pull));
}
