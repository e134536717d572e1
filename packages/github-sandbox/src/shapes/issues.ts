import type { SandboxApp, SandboxComment, SandboxLabel, SandboxPull, SandboxRepo, SandboxUser } from '../model.js';
import { isoTime, nodeId, type Urls } from '../urls.js';
import { appShape, userShape } from './users.js';

/** How an author relates to a repository, as GitHub's `author_association` says. */
export function authorAssociation(repo: SandboxRepo, user: SandboxUser): string {
  if (user.id === repo.owner.id) return 'OWNER';
  if (repo.collaborators.has(user.login.toLowerCase())) return 'COLLABORATOR';
  return 'NONE';
}

export function labelShape(urls: Urls, fullName: string, label: SandboxLabel): Record<string, unknown> {
  return {
    id: label.id,
    node_id: nodeId('Label', label.id),
    url: urls.repoApi(fullName, `/labels/${encodeURIComponent(label.name)}`),
    name: label.name,
    color: label.color,
    default: false,
    description: label.description,
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
): Record<string, unknown> {
  const full = `${repo.owner.login}/${repo.name}`;
  const url = urls.repoApi(full, `/issues/comments/${comment.id}`);
  return {
    url,
    html_url: urls.repoHtml(full, `/pull/${comment.issueNumber}#issuecomment-${comment.id}`),
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
    labels: pull.labels.flatMap((name) => {
      const label = repo.labels.get(name.toLowerCase());
      return label ? [labelShape(urls, full, label)] : [];
    }),
    state: pull.state,
    locked: false,
    assignee: null,
    assignees: [],
    milestone: null,
    comments,
    created_at: isoTime(pull.createdAt),
    updated_at: isoTime(pull.updatedAt),
    closed_at: pull.closedAt ? isoTime(pull.closedAt) : null,
    author_association: authorAssociation(repo, pull.user),
    active_lock_reason: null,
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
