import type { SandboxRepo } from '../model.js';
import { isoTime, nodeId, type Urls } from '../urls.js';
import { userShape } from './users.js';

/**
 * Which variant of a repository object to build:
 * - `rest`: `full-repository` (`GET /repos/{owner}/{repo}`),
 * - `nested`: `repository` inside pulls and installation lists, and webhook `repository`,
 * - `push`: the push webhook's legacy variant (epoch `created_at`/`pushed_at`, `master_branch`).
 */
export type RepoVariant = 'rest' | 'nested' | 'push';

/** A repository object valid for both GitHub's REST schema and its webhook schema. */
export function repoShape(
  urls: Urls,
  repo: SandboxRepo,
  variant: RepoVariant = 'nested',
  openIssues = 0,
): Record<string, unknown> {
  const full = `${repo.owner.login}/${repo.name}`;
  const api = (path = '') => urls.repoApi(full, path);
  const html = urls.repoHtml(full);
  const host = new URL(urls.origin).host;
  const shape: Record<string, unknown> = {
    id: repo.id,
    node_id: nodeId('Repository', repo.id),
    name: repo.name,
    full_name: full,
    // GET /repos/{owner}/{repo} (full-repository in GitHub's OpenAPI description): `private` is
    // required, `visibility` is "public, private, or internal".
    private: repo.visibility !== 'public',
    owner: userShape(urls, repo.owner),
    html_url: html,
    description: repo.description,
    fork: false,
    url: api(),
    forks_url: api('/forks'),
    keys_url: api('/keys{/key_id}'),
    collaborators_url: api('/collaborators{/collaborator}'),
    teams_url: api('/teams'),
    hooks_url: api('/hooks'),
    issue_events_url: api('/issues/events{/number}'),
    events_url: api('/events'),
    assignees_url: api('/assignees{/user}'),
    branches_url: api('/branches{/branch}'),
    tags_url: api('/tags'),
    blobs_url: api('/git/blobs{/sha}'),
    git_tags_url: api('/git/tags{/sha}'),
    git_refs_url: api('/git/refs{/sha}'),
    trees_url: api('/git/trees{/sha}'),
    statuses_url: api('/statuses/{sha}'),
    languages_url: api('/languages'),
    stargazers_url: api('/stargazers'),
    contributors_url: api('/contributors'),
    subscribers_url: api('/subscribers'),
    subscription_url: api('/subscription'),
    commits_url: api('/commits{/sha}'),
    git_commits_url: api('/git/commits{/sha}'),
    comments_url: api('/comments{/number}'),
    issue_comment_url: api('/issues/comments{/number}'),
    contents_url: api('/contents/{+path}'),
    compare_url: api('/compare/{base}...{head}'),
    merges_url: api('/merges'),
    archive_url: api('/{archive_format}{/ref}'),
    downloads_url: api('/downloads'),
    issues_url: api('/issues{/number}'),
    pulls_url: api('/pulls{/number}'),
    milestones_url: api('/milestones{/number}'),
    notifications_url: api('/notifications{?since,all,participating}'),
    labels_url: api('/labels{/name}'),
    releases_url: api('/releases{/id}'),
    deployments_url: api('/deployments'),
    created_at: isoTime(repo.createdAt),
    updated_at: isoTime(repo.pushedAt),
    pushed_at: isoTime(repo.pushedAt),
    git_url: `git://${host}/${full}.git`,
    ssh_url: `git@${host}:${full}.git`,
    clone_url: `${html}.git`,
    svn_url: html,
    homepage: null,
    size: 0,
    stargazers_count: 0,
    watchers_count: 0,
    language: null,
    has_issues: true,
    has_projects: false,
    has_downloads: true,
    has_wiki: false,
    has_pages: false,
    has_discussions: false,
    forks_count: 0,
    mirror_url: null,
    archived: false,
    disabled: false,
    open_issues_count: openIssues,
    license: null,
    allow_forking: true,
    is_template: false,
    web_commit_signoff_required: false,
    topics: repo.topics,
    visibility: repo.visibility,
    forks: 0,
    open_issues: openIssues,
    watchers: 0,
    default_branch: repo.defaultBranch,
    custom_properties: {},
  };
  if (variant === 'rest') {
    Object.assign(shape, {
      allow_squash_merge: true,
      allow_merge_commit: true,
      allow_rebase_merge: false,
      allow_auto_merge: repo.allowAutoMerge,
      delete_branch_on_merge: false,
      allow_update_branch: false,
      use_squash_pr_title_as_default: false,
      network_count: 0,
      subscribers_count: 0,
    });
  }
  if (variant === 'push') {
    // The push event keeps GitHub's legacy encoding: epoch seconds and `master_branch`.
    Object.assign(shape, {
      created_at: Math.floor(repo.createdAt.getTime() / 1000),
      pushed_at: Math.floor(repo.pushedAt.getTime() / 1000),
      stargazers: 0,
      master_branch: repo.defaultBranch,
      owner: { name: repo.owner.login, email: repo.owner.email, ...userShape(urls, repo.owner) },
    });
  }
  return shape;
}
