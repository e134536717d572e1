import { fullName, type SandboxContext } from './context.js';
import { ZERO_SHA, type CommitObject, type GitIdentity } from './git.js';
import {
  isPull,
  type IssueRecord,
  type SandboxCheckRun,
  type SandboxComment,
  type SandboxCommitStatus,
  type SandboxInstallation,
  type SandboxIssue,
  type SandboxLabel,
  type SandboxPull,
  type SandboxRepo,
  type SandboxUser,
} from './model.js';
import { describePull } from './pull-view.js';
import { checkRunShape } from './shapes/checks.js';
import { commentShape, issueShape, labelShape, pullIssueShape } from './shapes/issues.js';
import { repoShape } from './shapes/repos.js';
import { installationShape, teamShape, userShape } from './shapes/users.js';
import { isoTime, nodeId } from './urls.js';

const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/**
 * Sends a repository event to the App when the App is installed on the repository and
 * subscribes to the event; GitHub sends nothing otherwise.
 */
function emitForRepo(
  context: SandboxContext,
  repo: SandboxRepo,
  event: string,
  payload: Record<string, unknown>,
): void {
  const installation = context.state.installationForRepo(repo);
  if (!installation || !context.state.requireApp().events.includes(event)) return;
  context.webhooks.send(event, {
    ...payload,
    installation: { id: installation.id, node_id: nodeId('Installation', installation.id) },
  });
}

function common(context: SandboxContext, repo: SandboxRepo, sender: SandboxUser): Record<string, unknown> {
  return { repository: repoShape(context.urls, repo, 'nested'), sender: userShape(context.urls, sender) };
}

/** `push`: GitHub's payload for a ref moving from `before` to `after` (either may be all zeros). */
export async function emitPush(
  context: SandboxContext,
  repo: SandboxRepo,
  update: { ref: string; before: string; after: string; pusher: SandboxUser },
): Promise<void> {
  if (!context.state.installationForRepo(repo)) return;
  const { ref, before, after, pusher } = update;
  const git = repo.git;
  const created = before === ZERO_SHA;
  const deleted = after === ZERO_SHA;
  let exclude: string | undefined = created ? undefined : before;
  if (created && ref !== `refs/heads/${repo.defaultBranch}`) {
    exclude = (await git.readRef(`refs/heads/${repo.defaultBranch}`)) ?? undefined;
  }
  const shas = deleted ? [] : (await git.revList(after, { exclude })).reverse();
  const commits = await Promise.all(shas.map(async (sha) => pushCommit(context, repo, await git.readCommit(sha))));
  const forced = !created && !deleted && !(await git.isAncestor(before, after));
  const html = context.urls.repoHtml(fullName(repo));
  const short = (sha: string) => sha.slice(0, 12);
  const head = deleted ? null : (commits.at(-1) ?? (await pushCommit(context, repo, await git.readCommit(after))));
  emitForRepo(context, repo, 'push', {
    ref,
    before,
    after,
    repository: repoShape(context.urls, repo, 'push'),
    pusher: { name: pusher.login, email: pusher.email },
    sender: userShape(context.urls, pusher),
    created,
    deleted,
    forced,
    base_ref: null,
    compare: created
      ? `${html}/compare/${ref.replace(/^refs\/(heads|tags)\//, '')}`
      : `${html}/compare/${short(before)}...${short(after)}`,
    commits,
    head_commit: head,
  });
}

async function pushCommit(
  context: SandboxContext,
  repo: SandboxRepo,
  commit: CommitObject,
): Promise<Record<string, unknown>> {
  const changes = await repo.git.diff(commit.parents[0] ?? EMPTY_TREE, commit.sha);
  const added: string[] = [];
  const removed: string[] = [];
  const modified: string[] = [];
  for (const change of changes) {
    if (change.status === 'added' || change.status === 'copied') added.push(change.path);
    else if (change.status === 'removed') removed.push(change.path);
    else if (change.status === 'renamed') {
      removed.push(change.previousPath ?? change.path);
      added.push(change.path);
    } else modified.push(change.path);
  }
  const person = (identity: GitIdentity) => {
    const user = [...context.state.users.values()].find((u) => u.email === identity.email);
    return { name: identity.name, email: identity.email, ...(user ? { username: user.login } : {}) };
  };
  return {
    id: commit.sha,
    tree_id: commit.tree,
    distinct: true,
    message: commit.message.replace(/\n$/, ''),
    timestamp: isoTime(commit.committer.date),
    url: context.urls.repoHtml(fullName(repo), `/commit/${commit.sha}`),
    author: person(commit.author),
    committer: person(commit.committer),
    added,
    removed,
    modified,
  };
}

/** `pull_request` with any action; `extra` carries action-specific fields (`before`/`after`, `label`, …). */
export async function emitPullRequest(
  context: SandboxContext,
  repo: SandboxRepo,
  pull: SandboxPull,
  action: string,
  sender: SandboxUser,
  extra: Record<string, unknown> = {},
): Promise<void> {
  if (!context.state.installationForRepo(repo)) return;
  const pullRequest = await describePull(context, repo, pull, 'webhook');
  emitForRepo(context, repo, 'pull_request', {
    action,
    number: pull.number,
    ...extra,
    pull_request: pullRequest,
    ...common(context, repo, sender),
  });
}

/** The `label` of a `labeled`/`unlabeled` event; pull request events type its description as a string. */
export function labelPayload(
  context: SandboxContext,
  repo: SandboxRepo,
  label: SandboxLabel,
  inPull = true,
): Record<string, unknown> {
  return { label: labelShape(context.urls, fullName(repo), label, inPull) };
}

export function reviewerPayload(
  context: SandboxContext,
  request: { user?: SandboxUser; team?: { id: number; org: string; slug: string; name: string } },
): Record<string, unknown> {
  if (request.user) return { requested_reviewer: userShape(context.urls, request.user) };
  return request.team ? { requested_team: teamShape(context.urls, request.team, 'webhook') } : {};
}

/** `issues` (opened, edited with `changes`, closed, reopened, labeled, unlabeled, locked, unlocked). */
export function emitIssues(
  context: SandboxContext,
  repo: SandboxRepo,
  issue: SandboxIssue,
  action: string,
  sender: SandboxUser,
  extra: Record<string, unknown> = {},
): void {
  const comments = [...context.state.comments.values()].filter(
    (c) => c.repoId === repo.id && c.issueNumber === issue.number,
  ).length;
  emitForRepo(context, repo, 'issues', {
    action,
    ...extra,
    issue: issueShape(context.urls, repo, issue, comments, 'webhook'),
    ...common(context, repo, sender),
  });
}

/** `issue_comment` (created, edited with `changes`, deleted) on an issue or a pull request. */
export function emitIssueComment(
  context: SandboxContext,
  repo: SandboxRepo,
  record: IssueRecord,
  comment: SandboxComment,
  action: 'created' | 'edited' | 'deleted',
  sender: SandboxUser,
  changes?: { body: { from: string } },
): void {
  const comments = [...context.state.comments.values()].filter(
    (c) => c.repoId === repo.id && c.issueNumber === record.number,
  ).length;
  const onPull = isPull(record);
  emitForRepo(context, repo, 'issue_comment', {
    action,
    ...(changes ? { changes } : {}),
    issue: onPull
      ? pullIssueShape(context.urls, repo, record, comments)
      : issueShape(context.urls, repo, record, comments, 'webhook'),
    comment: commentShape(context.urls, repo, context.state.app, comment, onPull),
    ...common(context, repo, sender),
  });
}

/** `check_run` (e.g. `rerequested` when a user asks to run a check again). */
export function emitCheckRun(
  context: SandboxContext,
  repo: SandboxRepo,
  run: SandboxCheckRun,
  action: string,
  sender: SandboxUser,
): void {
  const pulls = context.state.pullsOf(repo).filter((pull) => pull.state === 'open' && pull.headSha === run.headSha);
  emitForRepo(context, repo, 'check_run', {
    action,
    check_run: checkRunShape(context.urls, repo, context.state.requireApp(), run, pulls, 'webhook'),
    ...common(context, repo, sender),
  });
}

function repoLite(context: SandboxContext, repo: SandboxRepo): Record<string, unknown> {
  return {
    id: repo.id,
    node_id: nodeId('Repository', repo.id),
    name: repo.name,
    full_name: fullName(repo),
    private: repo.visibility !== 'public',
  };
}

/** `installation` created: the App was installed on an account with these repositories. */
export function emitInstallation(
  context: SandboxContext,
  installation: SandboxInstallation,
  repos: SandboxRepo[],
  sender: SandboxUser,
): void {
  context.webhooks.send('installation', {
    action: 'created',
    installation: installationShape(context.urls, context.state.requireApp(), installation),
    repositories: repos.map((repo) => repoLite(context, repo)),
    sender: userShape(context.urls, sender),
  });
}

/** `installation_repositories` added/removed. */
export function emitInstallationRepositories(
  context: SandboxContext,
  installation: SandboxInstallation,
  change: { added: SandboxRepo[]; removed: SandboxRepo[] },
  sender: SandboxUser,
): void {
  context.webhooks.send('installation_repositories', {
    action: change.added.length ? 'added' : 'removed',
    installation: installationShape(context.urls, context.state.requireApp(), installation),
    repository_selection: 'selected',
    repositories_added: change.added.map((repo) => repoLite(context, repo)),
    repositories_removed: change.removed.map((repo) => repoLite(context, repo)),
    requester: null,
    sender: userShape(context.urls, sender),
  });
}

/** Up to 10 branches whose history contains `sha`, as the `status` event lists them. */
async function branchesContaining(
  context: SandboxContext,
  repo: SandboxRepo,
  sha: string,
): Promise<Record<string, unknown>[]> {
  const branches: Record<string, unknown>[] = [];
  for (const { ref, sha: head } of await repo.git.listRefs('refs/heads/')) {
    if (branches.length === 10) break;
    if (head !== sha && !(await repo.git.isAncestor(sha, head))) continue;
    const name = ref.slice('refs/heads/'.length);
    branches.push({
      name,
      commit: { sha: head, url: context.urls.repoApi(fullName(repo), `/commits/${head}`) },
      protected: repo.protections.has(name),
    });
  }
  return branches;
}

/** The `status` event's commit carries `verification` without `verified_at` (@octokit/webhooks-schemas). */
function withoutVerifiedAt(commit: Record<string, unknown>): Record<string, unknown> {
  const inner = commit.commit as Record<string, unknown> | undefined;
  const verification = inner?.verification as Record<string, unknown> | undefined;
  if (!inner || !verification) return commit;
  const { verified_at: _verifiedAt, ...rest } = verification;
  return { ...commit, commit: { ...inner, verification: rest } };
}

/** `status`: a commit status was created (the event has no action). */
export async function emitStatus(
  context: SandboxContext,
  repo: SandboxRepo,
  status: SandboxCommitStatus,
  commit: Record<string, unknown>,
  sender: SandboxUser,
): Promise<void> {
  emitForRepo(context, repo, 'status', {
    id: status.id,
    sha: status.sha,
    name: fullName(repo),
    target_url: status.targetUrl,
    avatar_url: userShape(context.urls, status.creator).avatar_url,
    context: status.context,
    description: status.description,
    state: status.state,
    commit: withoutVerifiedAt(commit),
    branches: await branchesContaining(context, repo, status.sha),
    created_at: isoTime(status.createdAt),
    updated_at: isoTime(status.createdAt),
    ...common(context, repo, sender),
  });
}

/** `deployment` created, and `deployment_status` created with the deployment it belongs to. */
export function emitDeployment(
  context: SandboxContext,
  repo: SandboxRepo,
  deployment: Record<string, unknown>,
  sender: SandboxUser,
): void {
  emitForRepo(context, repo, 'deployment', {
    action: 'created',
    deployment,
    workflow: null,
    workflow_run: null,
    ...common(context, repo, sender),
  });
}

export function emitDeploymentStatus(
  context: SandboxContext,
  repo: SandboxRepo,
  deployment: Record<string, unknown>,
  status: Record<string, unknown>,
  sender: SandboxUser,
): void {
  emitForRepo(context, repo, 'deployment_status', {
    action: 'created',
    deployment_status: status,
    deployment,
    ...common(context, repo, sender),
  });
}
