import type { SandboxPull, SandboxRepo, SandboxTeam, SandboxUser } from '../model.js';
import { isoTime, nodeId, type Urls } from '../urls.js';
import { authorAssociation, labelsShape } from './issues.js';
import { repoShape } from './repos.js';
import { teamShape, userShape } from './users.js';

/** What a full pull request object reports beyond the stored record, computed from git. */
export interface PullDetails {
  mergeable: boolean | null;
  mergeableState: 'clean' | 'dirty' | 'blocked' | 'behind' | 'unstable' | 'unknown';
  commits: number;
  additions: number;
  deletions: number;
  changedFiles: number;
  comments: number;
}

/**
 * `pull-request` (with `details`) or `pull-request-simple` (list, without). The full form is
 * also what `pull_request` webhooks carry.
 */
export function pullShape(
  urls: Urls,
  repo: SandboxRepo,
  pull: SandboxPull,
  baseSha: string,
  people: { reviewers: SandboxUser[]; teams: SandboxTeam[] },
  details?: PullDetails,
  target: 'rest' | 'webhook' = 'rest',
): Record<string, unknown> {
  const full = `${repo.owner.login}/${repo.name}`;
  const api = urls.repoApi(full, `/pulls/${pull.number}`);
  const html = urls.repoHtml(full, `/pull/${pull.number}`);
  const issue = urls.repoApi(full, `/issues/${pull.number}`);
  const statuses = urls.repoApi(full, `/statuses/${pull.headSha}`);
  const side = (ref: string, sha: string) => ({
    label: `${repo.owner.login}:${ref}`,
    ref,
    sha,
    user: userShape(urls, repo.owner),
    repo: repoShape(urls, repo, 'nested'),
  });
  const shape: Record<string, unknown> = {
    url: api,
    id: pull.id,
    node_id: nodeId('PullRequest', pull.id),
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: issue,
    number: pull.number,
    state: pull.state,
    locked: pull.locked,
    title: pull.title,
    user: userShape(urls, pull.user),
    body: pull.body,
    created_at: isoTime(pull.createdAt),
    updated_at: isoTime(pull.updatedAt),
    closed_at: pull.closedAt ? isoTime(pull.closedAt) : null,
    merged_at: pull.mergedAt ? isoTime(pull.mergedAt) : null,
    merge_commit_sha: pull.mergeCommitSha,
    assignee: null,
    assignees: [],
    requested_reviewers: people.reviewers.map((user) => userShape(urls, user)),
    requested_teams: people.teams.map((team) => teamShape(urls, team, target)),
    labels: labelsShape(urls, repo, pull.labels, true),
    milestone: null,
    draft: pull.draft,
    commits_url: `${api}/commits`,
    review_comments_url: `${api}/comments`,
    review_comment_url: urls.repoApi(full, '/pulls/comments{/number}'),
    comments_url: `${issue}/comments`,
    statuses_url: statuses,
    head: side(pull.headRef, pull.headSha),
    base: side(pull.baseRef, baseSha),
    _links: {
      self: { href: api },
      html: { href: html },
      issue: { href: issue },
      comments: { href: `${issue}/comments` },
      review_comments: { href: `${api}/comments` },
      review_comment: { href: urls.repoApi(full, '/pulls/comments{/number}') },
      commits: { href: `${api}/commits` },
      statuses: { href: statuses },
    },
    author_association: authorAssociation(repo, pull.user),
    auto_merge: pull.autoMerge
      ? {
          enabled_by: userShape(urls, pull.autoMerge.enabledBy),
          merge_method: pull.autoMerge.method,
          commit_title: pull.autoMerge.commitTitle,
          commit_message: pull.autoMerge.commitMessage,
        }
      : null,
    active_lock_reason: null,
  };
  if (details) {
    Object.assign(shape, {
      merged: pull.mergedAt !== null,
      mergeable: details.mergeable,
      rebaseable: false,
      mergeable_state: details.mergeableState,
      merged_by: pull.mergedBy ? userShape(urls, pull.mergedBy) : null,
      comments: details.comments,
      review_comments: 0,
      maintainer_can_modify: pull.maintainerCanModify,
      commits: details.commits,
      additions: details.additions,
      deletions: details.deletions,
      changed_files: details.changedFiles,
    });
  }
  return shape;
}
