import type { SandboxContext } from '../context.js';
import type { Router } from '../http.js';

/**
 * `GET /`: GitHub's hypermedia index of its endpoints, with the simulator's URLs (keys as
 * api.github.com answers them in the get-root recording of @octokit/fixtures).
 */
export function registerMetaRoutes(router: Router, context: SandboxContext): void {
  const api = (path: string) => context.urls.api(path);
  const html = (path: string) => context.urls.html(path);
  router.add('GET', '/', () => ({
    status: 200,
    lastModified: false,
    body: {
      current_user_url: api('/user'),
      current_user_authorizations_html_url: html('/settings/connections/applications{/client_id}'),
      authorizations_url: api('/authorizations'),
      code_search_url: api('/search/code?q={query}{&page,per_page,sort,order}'),
      commit_search_url: api('/search/commits?q={query}{&page,per_page,sort,order}'),
      emails_url: api('/user/emails'),
      emojis_url: api('/emojis'),
      events_url: api('/events'),
      feeds_url: api('/feeds'),
      followers_url: api('/user/followers'),
      following_url: api('/user/following{/target}'),
      gists_url: api('/gists{/gist_id}'),
      hub_url: api('/hub'),
      issue_search_url: api('/search/issues?q={query}{&page,per_page,sort,order}'),
      issues_url: api('/issues'),
      keys_url: api('/user/keys'),
      label_search_url: api('/search/labels?q={query}&repository_id={repository_id}{&page,per_page}'),
      notifications_url: api('/notifications'),
      organization_url: api('/orgs/{org}'),
      organization_repositories_url: api('/orgs/{org}/repos{?type,page,per_page,sort}'),
      organization_teams_url: api('/orgs/{org}/teams'),
      public_gists_url: api('/gists/public'),
      rate_limit_url: api('/rate_limit'),
      repository_url: api('/repos/{owner}/{repo}'),
      repository_search_url: api('/search/repositories?q={query}{&page,per_page,sort,order}'),
      current_user_repositories_url: api('/user/repos{?type,page,per_page,sort}'),
      starred_url: api('/user/starred{/owner}{/repo}'),
      starred_gists_url: api('/gists/starred'),
      topic_search_url: api('/search/topics?q={query}{&page,per_page}'),
      user_url: api('/users/{user}'),
      user_organizations_url: api('/user/orgs'),
      user_repositories_url: api('/users/{user}/repos{?type,page,per_page,sort}'),
      user_search_url: api('/search/users?q={query}{&page,per_page,sort,order}'),
    },
  }));
}
