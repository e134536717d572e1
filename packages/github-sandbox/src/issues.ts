import type { SandboxContext } from './context.js';
import { emitIssues, emitPullRequest, labelPayload } from './events.js';
import { validationFailed } from './http.js';
import type { LockReason, SandboxIssue, SandboxLabel, SandboxPull, SandboxRepo, SandboxUser } from './model.js';
import { addLabels, removeLabel } from './pulls.js';

/** What `/issues/{n}` names: an issue, or the issue side of a pull request (one number sequence). */
export type IssueTarget = { kind: 'issue'; issue: SandboxIssue } | { kind: 'pull'; pull: SandboxPull };

export function findIssueTarget(context: SandboxContext, repo: SandboxRepo, number: number): IssueTarget | null {
  const issue = context.state.issuesOf(repo).find((candidate) => candidate.number === number);
  if (issue) return { kind: 'issue', issue };
  const pull = context.state.pull(repo, number);
  return pull ? { kind: 'pull', pull } : null;
}

/** `POST /issues`: opens an issue and sends `issues` opened (then `labeled` per label, as GitHub does). */
export function createIssue(
  context: SandboxContext,
  repo: SandboxRepo,
  author: SandboxUser,
  input: { title: string; body: string | null; labels: string[]; assignees: SandboxUser[] },
): SandboxIssue {
  const now = context.state.clock();
  const issue: SandboxIssue = {
    id: context.state.nextId(),
    number: repo.nextNumber++,
    repoId: repo.id,
    title: input.title,
    body: input.body,
    state: 'open',
    stateReason: null,
    user: author,
    labels: [],
    assignees: input.assignees,
    locked: false,
    activeLockReason: null,
    createdAt: now,
    updatedAt: now,
    closedAt: null,
    closedBy: null,
  };
  context.state.issuesOf(repo).push(issue);
  emitIssues(context, repo, issue, 'opened', author);
  addIssueLabels(context, repo, issue, author, input.labels);
  return issue;
}

/** Finds a label or creates it with GitHub's default color, as adding an unknown label does. */
export function ensureLabel(context: SandboxContext, repo: SandboxRepo, name: string): SandboxLabel {
  const key = name.toLowerCase();
  let label = repo.labels.get(key);
  if (!label) {
    label = { id: context.state.nextId(), name, color: 'ededed', description: null, default: false };
    repo.labels.set(key, label);
  }
  return label;
}

/** Adds labels to an issue (creating unknown ones) and sends `issues` labeled per new label. */
export function addIssueLabels(
  context: SandboxContext,
  repo: SandboxRepo,
  issue: SandboxIssue,
  actor: SandboxUser,
  names: string[],
): void {
  for (const name of names) {
    const label = ensureLabel(context, repo, name);
    if (issue.labels.some((existing) => existing.toLowerCase() === label.name.toLowerCase())) continue;
    issue.labels.push(label.name);
    issue.updatedAt = context.state.clock();
    emitIssues(context, repo, issue, 'labeled', actor, labelPayload(context, repo, label, false));
  }
}

/** Removes one label; false when the issue does not carry it. */
export function removeIssueLabel(
  context: SandboxContext,
  repo: SandboxRepo,
  issue: SandboxIssue,
  actor: SandboxUser,
  name: string,
): boolean {
  const label = repo.labels.get(name.toLowerCase());
  const index = issue.labels.findIndex((existing) => existing.toLowerCase() === name.toLowerCase());
  if (!label || index === -1) return false;
  issue.labels.splice(index, 1);
  issue.updatedAt = context.state.clock();
  emitIssues(context, repo, issue, 'unlabeled', actor, labelPayload(context, repo, label, false));
  return true;
}

/** Labels of either kind of target: pull requests send `pull_request` events, issues `issues` events. */
export async function addTargetLabels(
  context: SandboxContext,
  repo: SandboxRepo,
  target: IssueTarget,
  actor: SandboxUser,
  names: string[],
): Promise<string[]> {
  if (target.kind === 'pull') {
    await addLabels(context, repo, target.pull, actor, names);
    return target.pull.labels;
  }
  addIssueLabels(context, repo, target.issue, actor, names);
  return target.issue.labels;
}

export async function removeTargetLabel(
  context: SandboxContext,
  repo: SandboxRepo,
  target: IssueTarget,
  actor: SandboxUser,
  name: string,
): Promise<boolean> {
  if (target.kind === 'pull') return removeLabel(context, repo, target.pull, actor, name);
  return removeIssueLabel(context, repo, target.issue, actor, name);
}

/** `PATCH /issues/{n}` on an issue: title, body, state and its reason, labels, assignees. */
export function updateIssue(
  context: SandboxContext,
  repo: SandboxRepo,
  issue: SandboxIssue,
  actor: SandboxUser,
  input: {
    title?: string;
    body?: string | null;
    state?: 'open' | 'closed';
    stateReason?: SandboxIssue['stateReason'];
    labels?: string[];
    assignees?: SandboxUser[];
  },
): void {
  const changes: Record<string, { from: unknown }> = {};
  if (input.title !== undefined && input.title !== issue.title) changes.title = { from: issue.title };
  if (input.body !== undefined && input.body !== issue.body) changes.body = { from: issue.body ?? '' };
  if (input.title !== undefined) issue.title = input.title;
  if (input.body !== undefined) issue.body = input.body;
  if (input.assignees !== undefined) issue.assignees = input.assignees;
  issue.updatedAt = context.state.clock();
  if (Object.keys(changes).length) emitIssues(context, repo, issue, 'edited', actor, { changes });
  if (input.labels !== undefined) {
    const wanted = new Set(input.labels.map((name) => name.toLowerCase()));
    for (const name of [...issue.labels])
      if (!wanted.has(name.toLowerCase())) removeIssueLabel(context, repo, issue, actor, name);
    addIssueLabels(context, repo, issue, actor, input.labels);
  }
  if (input.state === 'closed' && issue.state === 'open') {
    issue.state = 'closed';
    issue.stateReason = input.stateReason ?? 'completed';
    issue.closedAt = context.state.clock();
    issue.closedBy = actor;
    emitIssues(context, repo, issue, 'closed', actor);
  } else if (input.state === 'open' && issue.state === 'closed') {
    issue.state = 'open';
    issue.stateReason = 'reopened';
    issue.closedAt = null;
    emitIssues(context, repo, issue, 'reopened', actor);
  } else if (input.stateReason !== undefined && issue.state === 'closed') {
    issue.stateReason = input.stateReason;
  }
}

const LOCK_REASONS: LockReason[] = ['off-topic', 'too heated', 'resolved', 'spam'];

/** `PUT`/`DELETE /issues/{n}/lock`; a lock reason GitHub does not know is refused with 422. */
export async function setLocked(
  context: SandboxContext,
  repo: SandboxRepo,
  target: IssueTarget,
  actor: SandboxUser,
  locked: boolean,
  reason: string | undefined,
): Promise<void> {
  if (reason !== undefined && !LOCK_REASONS.includes(reason as LockReason))
    throw validationFailed([{ resource: 'Issue', field: 'lock_reason', code: 'invalid' }]);
  const record = target.kind === 'issue' ? target.issue : target.pull;
  if (record.locked === locked) return;
  record.locked = locked;
  record.activeLockReason = locked ? ((reason as LockReason | undefined) ?? null) : null;
  record.updatedAt = context.state.clock();
  const action = locked ? 'locked' : 'unlocked';
  if (target.kind === 'issue') emitIssues(context, repo, target.issue, action, actor);
  else await emitPullRequest(context, repo, target.pull, action, actor);
}
