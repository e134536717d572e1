import { fullName, withRepoLock, type SandboxContext } from './context.js';
import { emitPullRequest, labelPayload, reviewerPayload } from './events.js';
import { HttpError, validationFailed } from './http.js';
import type { SandboxPull, SandboxRepo, SandboxUser } from './model.js';
import { firstUnmet, requiredChecks, requiresUpToDate, unmetMessage } from './gates.js';
import { baseShaOf, checkMerge, isUpToDate, pullCommits } from './pull-view.js';
import { afterRefUpdate } from './refs.js';

/** Opens a pull request from a branch of the same repository (forks are not simulated). */
export async function openPull(
  context: SandboxContext,
  repo: SandboxRepo,
  author: SandboxUser,
  input: {
    title: string;
    head: string;
    base: string;
    body?: string | null;
    draft?: boolean;
    maintainerCanModify?: boolean;
  },
): Promise<SandboxPull> {
  const headRef = input.head.includes(':') ? input.head.slice(input.head.indexOf(':') + 1) : input.head;
  const headOwner = input.head.includes(':') ? input.head.slice(0, input.head.indexOf(':')) : repo.owner.login;
  const baseSha = await repo.git.readRef(`refs/heads/${input.base}`);
  if (!baseSha) throw validationFailed([{ resource: 'PullRequest', field: 'base', code: 'invalid' }]);
  const headSha =
    headOwner.toLowerCase() === repo.owner.login.toLowerCase() ? await repo.git.readRef(`refs/heads/${headRef}`) : null;
  if (!headSha) throw validationFailed([{ resource: 'PullRequest', field: 'head', code: 'invalid' }]);
  const existing = context.state
    .pullsOf(repo)
    .find((p) => p.state === 'open' && p.headRef === headRef && p.baseRef === input.base);
  if (existing) {
    throw validationFailed([
      {
        resource: 'PullRequest',
        code: 'custom',
        message: `A pull request already exists for ${repo.owner.login}:${headRef}.`,
      },
    ]);
  }
  if ((await repo.git.revList(headSha, { exclude: baseSha, max: 1 })).length === 0) {
    throw validationFailed([
      { resource: 'PullRequest', code: 'custom', message: `No commits between ${input.base} and ${headRef}` },
    ]);
  }
  const now = context.state.clock();
  const pull: SandboxPull = {
    id: context.state.nextId(),
    issueId: context.state.nextId(),
    number: repo.nextNumber++,
    repoId: repo.id,
    title: input.title,
    body: input.body ?? null,
    state: 'open',
    draft: input.draft ?? false,
    headRef,
    headSha,
    baseRef: input.base,
    closedBaseSha: null,
    user: author,
    createdAt: now,
    updatedAt: now,
    closedAt: null,
    mergedAt: null,
    mergedBy: null,
    mergeCommitSha: null,
    labels: [],
    locked: false,
    activeLockReason: null,
    requestedReviewers: [],
    requestedTeams: [],
    maintainerCanModify: input.maintainerCanModify ?? false,
    autoMerge: null,
  };
  context.state.pullsOf(repo).push(pull);
  await emitPullRequest(context, repo, pull, 'opened', author);
  return pull;
}

/** `PATCH /pulls/{n}`: title, body, base, and closing or reopening. */
export async function updatePull(
  context: SandboxContext,
  repo: SandboxRepo,
  pull: SandboxPull,
  actor: SandboxUser,
  input: { title?: string; body?: string | null; state?: string; base?: string },
): Promise<void> {
  const changes: Record<string, { from: unknown }> = {};
  if (input.title !== undefined && input.title !== pull.title) changes.title = { from: pull.title };
  if (input.body !== undefined && input.body !== pull.body) changes.body = { from: pull.body ?? '' };
  if (input.base !== undefined && input.base !== pull.baseRef) {
    if (!(await repo.git.readRef(`refs/heads/${input.base}`)))
      throw validationFailed([{ resource: 'PullRequest', field: 'base', code: 'invalid' }]);
    changes.base = { from: { ref: pull.baseRef, sha: await baseShaOf(repo, pull) } } as never;
    pull.baseRef = input.base;
  }
  if (input.title !== undefined) pull.title = input.title;
  if (input.body !== undefined) pull.body = input.body;
  pull.updatedAt = context.state.clock();
  if (Object.keys(changes).length) await emitPullRequest(context, repo, pull, 'edited', actor, { changes });
  if (input.state === 'closed' && pull.state === 'open') await closePull(context, repo, pull, actor);
  if (input.state === 'open' && pull.state === 'closed') {
    if (pull.mergedAt)
      throw validationFailed([
        { resource: 'PullRequest', code: 'custom', message: 'Cannot reopen a merged pull request.' },
      ]);
    const head = await repo.git.readRef(`refs/heads/${pull.headRef}`);
    if (!head)
      throw validationFailed([
        { resource: 'PullRequest', code: 'custom', message: `Cannot reopen: branch ${pull.headRef} no longer exists.` },
      ]);
    pull.state = 'open';
    pull.headSha = head;
    pull.closedAt = null;
    pull.closedBaseSha = null;
    await emitPullRequest(context, repo, pull, 'reopened', actor);
  }
}

/** Closes without merging and sends `pull_request` closed (`merged: false`). */
export async function closePull(
  context: SandboxContext,
  repo: SandboxRepo,
  pull: SandboxPull,
  actor: SandboxUser,
): Promise<void> {
  pull.closedBaseSha = await baseShaOf(repo, pull);
  pull.state = 'closed';
  pull.closedAt = context.state.clock();
  pull.updatedAt = pull.closedAt;
  pull.mergeCommitSha = null;
  await emitPullRequest(context, repo, pull, 'closed', actor);
}

export type MergeMethod = 'merge' | 'squash' | 'rebase';

/**
 * Merges with real git under the repository lock: 409 when `sha` is not the head,
 * 405 when the pull request is closed, conflicts, or a required status check of the base
 * branch (classic protection or an active ruleset) has not passed on the head; 409 when the
 * base requires up-to-date branches and the head does not contain it. Sends `push` for the base branch, then
 * `pull_request` closed with `merged: true`.
 */
export function mergePull(
  context: SandboxContext,
  repo: SandboxRepo,
  pull: SandboxPull,
  actor: SandboxUser,
  input: { sha?: string; method?: MergeMethod; title?: string; message?: string },
): Promise<{ sha: string }> {
  return withRepoLock(context, repo, async () => {
    if (pull.state !== 'open') throw new HttpError(405, 'Pull Request is not mergeable');
    if (input.sha && input.sha !== pull.headSha)
      throw new HttpError(409, 'Head branch was modified. Review and try the merge again.');
    const method = input.method ?? 'merge';
    if (method === 'rebase') throw new HttpError(405, 'Rebase merges are not allowed on this repository.');
    const unmet = firstUnmet(context, repo, pull.headSha, requiredChecks(repo, pull.baseRef, actor));
    if (unmet) throw new HttpError(405, unmetMessage(unmet));
    if (requiresUpToDate(repo, pull.baseRef, actor) && !(await isUpToDate(repo, pull)))
      throw new HttpError(409, 'Head branch is out of date. Review and try the merge again.');
    const baseRef = `refs/heads/${pull.baseRef}`;
    const base = await repo.git.readRef(baseRef);
    if (!base) throw new HttpError(405, 'Pull Request is not mergeable');
    const merge = await checkMerge(repo, base, pull.headSha);
    if (!merge.clean) throw new HttpError(405, 'Pull Request is not mergeable');
    const now = context.state.clock();
    const author = { name: actor.name, email: actor.email, date: now };
    const committer = { name: 'GitHub', email: 'noreply@github.com', date: now };
    let sha: string;
    if (method === 'squash') {
      const messages = await Promise.all(
        (await pullCommits(repo, pull)).map(async (c) => `* ${(await repo.git.readCommit(c)).message.trim()}`),
      );
      const text = `${input.title ?? `${pull.title} (#${pull.number})`}\n\n${input.message ?? messages.join('\n\n')}\n`;
      sha = await repo.git.commitTree(merge.tree, [base], text, author, committer);
    } else {
      const text = `${input.title ?? `Merge pull request #${pull.number} from ${repo.owner.login}/${pull.headRef}`}\n\n${input.message ?? pull.title}\n`;
      sha = await repo.git.commitTree(merge.tree, [base, pull.headSha], text, author, committer);
    }
    context.verifiedCommits.add(sha);
    if (!(await repo.git.updateRef(baseRef, sha, base)))
      throw new HttpError(409, 'Base branch was modified. Review and try the merge again.');
    pull.closedBaseSha = base;
    Object.assign(pull, {
      state: 'closed',
      mergedAt: now,
      closedAt: now,
      updatedAt: now,
      mergedBy: actor,
      mergeCommitSha: sha,
    });
    await afterRefUpdate(context, repo, { ref: baseRef, before: base, after: sha, pusher: actor });
    await emitPullRequest(context, repo, pull, 'closed', actor);
    return { sha };
  });
}

/** Adds labels (creating unknown ones like GitHub does) and sends one `labeled` event per new label. */
export async function addLabels(
  context: SandboxContext,
  repo: SandboxRepo,
  pull: SandboxPull,
  actor: SandboxUser,
  names: string[],
): Promise<void> {
  for (const name of names) {
    const key = name.toLowerCase();
    let label = repo.labels.get(key);
    if (!label) {
      label = { id: context.state.nextId(), name, color: 'ededed', description: null, default: false };
      repo.labels.set(key, label);
    }
    if (pull.labels.some((existing) => existing.toLowerCase() === key)) continue;
    pull.labels.push(label.name);
    pull.updatedAt = context.state.clock();
    await emitPullRequest(context, repo, pull, 'labeled', actor, labelPayload(context, repo, label));
  }
}

export async function removeLabel(
  context: SandboxContext,
  repo: SandboxRepo,
  pull: SandboxPull,
  actor: SandboxUser,
  name: string,
): Promise<boolean> {
  const label = repo.labels.get(name.toLowerCase());
  const index = pull.labels.findIndex((existing) => existing.toLowerCase() === name.toLowerCase());
  if (!label || index === -1) return false;
  pull.labels.splice(index, 1);
  await emitPullRequest(context, repo, pull, 'unlabeled', actor, labelPayload(context, repo, label));
  return true;
}

/**
 * Requests reviews from users (who must be able to see the repository) and from teams of the
 * owning organization; 422 otherwise, with GitHub's message.
 */
export async function requestReviewers(
  context: SandboxContext,
  repo: SandboxRepo,
  pull: SandboxPull,
  actor: SandboxUser,
  request: { reviewers: string[]; teams: string[] },
): Promise<void> {
  const users = request.reviewers.map((login) => context.state.user(login));
  const teams = request.teams.map((slug) => context.state.team(repo.owner.login, slug.replace(/^@?[^/]+\//, '')));
  if (users.some((user) => !user || user.id === pull.user.id) || teams.some((team) => !team)) {
    throw validationFailed(
      [],
      `Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the ${fullName(repo)} repository.`,
    );
  }
  for (const user of users) {
    if (!user || pull.requestedReviewers.includes(user.login)) continue;
    pull.requestedReviewers.push(user.login);
    await emitPullRequest(context, repo, pull, 'review_requested', actor, reviewerPayload(context, { user }));
  }
  for (const team of teams) {
    const key = team && `${team.org}/${team.slug}`;
    if (!team || !key || pull.requestedTeams.includes(key)) continue;
    pull.requestedTeams.push(key);
    await emitPullRequest(context, repo, pull, 'review_requested', actor, reviewerPayload(context, { team }));
  }
}
