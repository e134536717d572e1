import { withRepoLock, type SandboxContext } from './context.js';
import { emitPullRequest, emitPush } from './events.js';
import { ZERO_SHA } from './git.js';
import { validationFailed } from './http.js';
import type { SandboxRepo, SandboxUser } from './model.js';
import { baseShaOf } from './pull-view.js';

/** A ref moved from `before` to `after` (all zeros when it did not exist / no longer exists). */
export interface RefUpdate {
  ref: string;
  before: string;
  after: string;
  pusher: SandboxUser;
}

/**
 * What GitHub does after any ref update (API, merge or push): a `push` webhook, and for open
 * pull requests whose head branch moved, `synchronize` (or `closed` when the branch is gone).
 * Callers hold the repository lock.
 */
export async function afterRefUpdate(context: SandboxContext, repo: SandboxRepo, update: RefUpdate): Promise<void> {
  repo.pushedAt = context.state.clock();
  await emitPush(context, repo, update);
  if (!update.ref.startsWith('refs/heads/')) return;
  const branch = update.ref.slice('refs/heads/'.length);
  for (const pull of context.state.pullsOf(repo)) {
    if (pull.state !== 'open' || pull.headRef !== branch) continue;
    pull.updatedAt = context.state.clock();
    if (update.after === ZERO_SHA) {
      pull.closedBaseSha = await baseShaOf(repo, pull);
      pull.state = 'closed';
      pull.closedAt = pull.updatedAt;
      pull.mergeCommitSha = null;
      await emitPullRequest(context, repo, pull, 'closed', update.pusher);
    } else {
      pull.headSha = update.after;
      await emitPullRequest(context, repo, pull, 'synchronize', update.pusher, {
        before: update.before,
        after: update.after,
      });
    }
  }
}

async function requireObject(repo: SandboxRepo, sha: string, branch: boolean): Promise<void> {
  const type = await repo.git.objectType(sha);
  if (!type || (branch && type !== 'commit')) throw validationFailed([], 'Object does not exist');
}

/** `POST /git/refs`: 422 when the ref exists, is malformed, or the object is missing. */
export function createRef(
  context: SandboxContext,
  repo: SandboxRepo,
  ref: string,
  sha: string,
  actor: SandboxUser,
): Promise<void> {
  return withRepoLock(context, repo, async () => {
    const valid =
      /^refs\/[^/]+\/.+/.test(ref) && (await repo.git.run(['check-ref-format', ref], { okCodes: [1] })).code === 0;
    if (!valid) throw validationFailed([], "Reference name is invalid: use a full name such as 'refs/heads/my-branch'");
    await requireObject(repo, sha, ref.startsWith('refs/heads/'));
    if (!(await repo.git.updateRef(ref, sha, ZERO_SHA))) throw validationFailed([], 'Reference already exists');
    await afterRefUpdate(context, repo, { ref, before: ZERO_SHA, after: sha, pusher: actor });
  });
}

/**
 * `PATCH /git/refs/{ref}`: a compare-and-swap against the current value. Without `force`
 * the new commit must descend from the old one (422 "Update is not a fast forward").
 */
export function updateRef(
  context: SandboxContext,
  repo: SandboxRepo,
  ref: string,
  sha: string,
  options: { force: boolean; actor: SandboxUser; expected?: string },
): Promise<void> {
  return withRepoLock(context, repo, async () => {
    const current = await repo.git.readRef(ref);
    if (!current) throw validationFailed([], 'Reference does not exist');
    if (options.expected && options.expected !== current)
      throw validationFailed([], 'Reference update failed: the ref moved since it was read');
    await requireObject(repo, sha, ref.startsWith('refs/heads/'));
    if (current === sha) return;
    if (!options.force && !(await repo.git.isAncestor(current, sha)))
      throw validationFailed([], 'Update is not a fast forward');
    if (!(await repo.git.updateRef(ref, sha, current)))
      throw validationFailed([], 'Reference update failed: the ref moved since it was read');
    await afterRefUpdate(context, repo, { ref, before: current, after: sha, pusher: options.actor });
  });
}

export function deleteRef(context: SandboxContext, repo: SandboxRepo, ref: string, actor: SandboxUser): Promise<void> {
  return withRepoLock(context, repo, async () => {
    const current = await repo.git.readRef(ref);
    if (!current || !(await repo.git.deleteRef(ref, current))) throw validationFailed([], 'Reference does not exist');
    await afterRefUpdate(context, repo, { ref, before: current, after: ZERO_SHA, pusher: actor });
  });
}
