import type { SandboxContext } from './context.js';
import { emitPullRequest } from './events.js';
import { HttpError } from './http.js';
import type { SandboxPull, SandboxRepo, SandboxUser } from './model.js';
import { baseShaOf, checkMerge, mergeStateOf } from './pull-view.js';
import { mergePull } from './pulls.js';

/** Why `enablePullRequestAutoMerge` refuses, in GitHub's words (GraphQL `UNPROCESSABLE`). */
export class AutoMergeRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AutoMergeRefused';
  }
}

/**
 * `enablePullRequestAutoMerge`: only when the repository allows auto-merge and the pull request
 * still waits for something (a required check, or an update from its base). GitHub refuses a
 * pull request that could merge right now ("Pull request Pull request is in clean status";
 * likewise `unstable`), one with conflicts, and one that is closed. Sends `pull_request`
 * `auto_merge_enabled`.
 */
export async function enableAutoMerge(
  context: SandboxContext,
  repo: SandboxRepo,
  pull: SandboxPull,
  actor: SandboxUser,
  input: { method: 'merge' | 'squash' | 'rebase'; expectedHeadOid?: string; title?: string; body?: string },
): Promise<void> {
  // Wording as GitHub answers (gh prints "GraphQL: <message> (enablePullRequestAutoMerge)").
  if (!repo.allowAutoMerge) throw new AutoMergeRefused('Auto merge is not allowed for this repository');
  if (pull.state !== 'open') throw new AutoMergeRefused('Pull request Pull request is closed');
  if (input.expectedHeadOid && input.expectedHeadOid !== pull.headSha)
    throw new AutoMergeRefused('Pull request Head sha did not match expected head oid');
  if (input.method === 'rebase')
    throw new AutoMergeRefused('Pull request Merge method rebase merging is not allowed on this repository');
  const merge = await checkMerge(repo, await baseShaOf(repo, pull), pull.headSha);
  if (!merge.clean) throw new AutoMergeRefused('Pull request Pull request is in dirty status');
  const state = await mergeStateOf(context, repo, pull);
  if (state !== 'blocked' && state !== 'behind')
    throw new AutoMergeRefused(`Pull request Pull request is in ${state} status`);
  const defaultTitle =
    input.method === 'squash'
      ? `${pull.title} (#${pull.number})`
      : `Merge pull request #${pull.number} from ${repo.owner.login}/${pull.headRef}`;
  pull.autoMerge = {
    method: input.method,
    enabledBy: actor,
    enabledAt: context.state.clock(),
    commitTitle: input.title ?? defaultTitle,
    commitMessage: input.body ?? (input.method === 'squash' ? '' : pull.title),
  };
  pull.updatedAt = context.state.clock();
  // The webhook schema requires a `reason` string; GitHub fills it only when auto-merge is disabled.
  await emitPullRequest(context, repo, pull, 'auto_merge_enabled', actor, { reason: '' });
}

/**
 * `disablePullRequestAutoMerge`: turns auto-merge off again and sends `pull_request`
 * `auto_merge_disabled`; refused when it is not on.
 */
export async function disableAutoMerge(
  context: SandboxContext,
  repo: SandboxRepo,
  pull: SandboxPull,
  actor: SandboxUser,
): Promise<void> {
  if (pull.state !== 'open') throw new AutoMergeRefused('Pull request Pull request is closed');
  if (!pull.autoMerge) throw new AutoMergeRefused('Pull request Auto merge is not enabled for this pull request');
  pull.autoMerge = null;
  pull.updatedAt = context.state.clock();
  await emitPullRequest(context, repo, pull, 'auto_merge_disabled', actor, { reason: `Disabled by ${actor.login}` });
}

/**
 * What GitHub does when a check or status lands: every open pull request of the repository
 * with auto-merge enabled whose requirements are now met is merged, as the person who enabled
 * it. A merge that cannot happen yet (a conflict, a branch that moved) leaves auto-merge on.
 */
export async function settleAutoMerges(context: SandboxContext, repo: SandboxRepo): Promise<void> {
  for (const pull of context.state.pullsOf(repo)) {
    const auto = pull.autoMerge;
    if (pull.state !== 'open' || !auto) continue;
    const state = await mergeStateOf(context, repo, pull);
    if (state === 'blocked' || state === 'behind') continue;
    try {
      await mergePull(context, repo, pull, auto.enabledBy, {
        method: auto.method,
        sha: pull.headSha,
        title: auto.commitTitle,
        ...(auto.commitMessage ? { message: auto.commitMessage } : {}),
      });
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
    }
  }
}
