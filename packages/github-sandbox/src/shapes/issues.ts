import type {
  SandboxApp,
  SandboxComment,
  SandboxIssue,
  SandboxLabel,
  SandboxPull,
  SandboxRepo,
  SandboxUser,
} from '../model.js';
import { isoTime, nodeId, type Urls } from '../urls.js';
import { appShape, userShape } from './users.js';

/** How an author relates to a repository, as GitHub's `author_association` says. */
export function authorAssociation(repo: SandboxRepo, user: SandboxUser): string {
  if (user.id === repo.owner.id) return 'OWNER';
  if (repo.collaborators.has(user.login.toLowerCase())) return 'COLLABORATOR';
  return 'NONE';
}

/**
 * `label`. GitHub sends `description: null` for a label without one (the add-labels-to-issue
 * recording), but its pull request schemas type it as a string: `inPull` renders it empty there.
 */
export function labelShape(urls: Urls, fullName: string, label: SandboxLabel, inPull = false): Record<string, unknown> {
  return {
    id: label.id,
    node_id: nodeId('Label', label.id),
    url: urls.repoApi(fullName, `/labels/${encodeURIComponent(label.name)}`),
    name: label.name,
    color: label.color,
    default: label.default,
    description: inPull ? (label.description ?? '') : label.description,
  };
}

/** The labels named on an issue or pull request, in the order they were added. */
export function labelsShape(urls: Urls, repo: SandboxRepo, names: string[], inPull = false): Record<string, unknown>[] {
  const full = `${repo.owner.login}/${repo.name}`;
  return names.flatMap((name) => {
    const label = repo.labels.get(name.toLowerCase());
    return label ? [labelShape(urls, full, label, inPull)] : [];
  });
}

/**
 * An issue that is not a pull request, as api.github.com answers it (the add-labels-to-issue,
 * lock-issue and paginate-issues recordings): `rest` for one issue (with `closed_by`), `list`
 * for lists, `webhook` for the `issues` event.
 */
export function issueShape(
  urls: Urls,
  repo: SandboxRepo,
  issue: SandboxIssue,
  comments: number,
  variant: 'rest' | 'list' | 'webhook' = 'rest',
): Record<string, unknown> {
  const full = `${repo.owner.login}/${repo.name}`;
  const url = urls.repoApi(full, `/issues/${issue.number}`);
  const assignees = issue.assignees.map((user) => userShape(urls, user));
  return {
    url,
    repository_url: urls.repoApi(full),
    labels_url: `${url}/labels{/name}`,
    comments_url: `${url}/comments`,
    events_url: `${url}/events`,
    html_url: urls.repoHtml(full, `/issues/${issue.number}`),
    id: issue.id,
    node_id: nodeId('Issue', issue.id),
    number: issue.number,
    title: issue.title,
    user: userShape(urls, issue.user),
    labels: labelsShape(urls, repo, issue.labels),
    state: issue.state,
    locked: issue.locked,
    assignee: assignees[0] ?? null,
    assignees,
    milestone: null,
    comments,
    created_at: isoTime(issue.createdAt),
    updated_at: isoTime(issue.updatedAt),
    closed_at: issue.closedAt ? isoTime(issue.closedAt) : null,
    author_association: authorAssociation(repo, issue.user),
    active_lock_reason: issue.activeLockReason,
    body: issue.body,
    ...(variant === 'rest' ? { closed_by: issue.closedBy ? userShape(urls, issue.closedBy) : null } : {}),
    reactions: reactionsShape(`${url}/reactions`),
    timeline_url: `${url}/timeline`,
    performed_via_github_app: null,
    state_reason: issue.stateReason,
  };
}

function reactionsShape(url: string): Record<string, unknown> {
  return { url, total_count: 0, '+1': 0, '-1': 0, laugh: 0, hooray: 0, confused: 0, heart: 0, rocket: 0, eyes: 0 };
}

/** `issue-comment`, valid for REST and for the `issue_comment` webhook. */
export function commentShape(
  urls: Urls,
  repo: SandboxRepo,
  app: SandboxApp | null,
  comment: SandboxComment,
  onPull = true,
): Record<string, unknown> {
  const full = `${repo.owner.login}/${repo.name}`;
  const url = urls.repoApi(full, `/issues/comments/${comment.id}`);
  const page = onPull ? 'pull' : 'issues';
  return {
    url,
    html_url: urls.repoHtml(full, `/${page}/${comment.issueNumber}#issuecomment-${comment.id}`),
    issue_url: urls.repoApi(full, `/issues/${comment.issueNumber}`),
    id: comment.id,
    node_id: nodeId('IssueComment', comment.id),
    user: userShape(urls, comment.user),
    created_at: isoTime(comment.createdAt),
    updated_at: isoTime(comment.updatedAt),
    author_association: authorAssociation(repo, comment.user),
    body: comment.body,
    reactions: reactionsShape(`${url}/reactions`),
    performed_via_github_app: comment.viaApp && app ? appShape(urls, app, 'webhook') : null,
  };
}

/** The issue side of a pull request, as the `issue_comment` webhook carries it. */
export function pullIssueShape(
  urls: Urls,
  repo: SandboxRepo,
  pull: SandboxPull,
  comments: number,
): Record<string, unknown> {
  const full = `${repo.owner.login}/${repo.name}`;
  const url = urls.repoApi(full, `/issues/${pull.number}`);
  return {
    url,
    repository_url: urls.repoApi(full),
    labels_url: `${url}/labels{/name}`,
    comments_url: `${url}/comments`,
    events_url: `${url}/events`,
    html_url: urls.repoHtml(full, `/pull/${pull.number}`),
    id: pull.issueId,
    node_id: nodeId('PullRequest', pull.id),
    number: pull.number,
    title: pull.title,
    user: userShape(urls, pull.user),
    labels: labelsShape(urls, repo, pull.labels, true),
    state: pull.state,
    locked: pull.locked,
    assignee: null,
    assignees: [],
    milestone: null,
    comments,
    created_at: isoTime(pull.createdAt),
    updated_at: isoTime(pull.updatedAt),
    closed_at: pull.closedAt ? isoTime(pull.closedAt) : null,
    author_association: authorAssociation(repo, pull.user),
    active_lock_reason: pull.activeLockReason,
    draft: pull.draft,
    pull_request: {
      url: urls.repoApi(full, `/pulls/${pull.number}`),
      html_url: urls.repoHtml(full, `/pull/${pull.number}`),
      diff_url: urls.repoHtml(full, `/pull/${pull.number}.diff`),
      patch_url: urls.repoHtml(full, `/pull/${pull.number}.patch`),
      merged_at: pull.mergedAt ? isoTime(pull.mergedAt) : null,
    },
    body: pull.body,
    reactions: reactionsShape(`${url}/reactions`),
    timeline_url: `${url}/timeline`,
    performed_via_github_app: null,
    state_reason: null,
  };
}
