import type { SandboxApp, SandboxInstallation, SandboxTeam, SandboxUser } from '../model.js';
import { isoTime, nodeId, type Urls } from '../urls.js';

/** `simple-user` (REST) and `user` (webhooks): the same fields, valid for both schemas. */
export function userShape(urls: Urls, user: SandboxUser): Record<string, unknown> {
  // Bot logins carry brackets (`escalator[bot]`); GitHub percent-encodes them in URLs.
  const api = urls.api(`/users/${encodeURIComponent(user.login)}`);
  const html =
    user.type === 'Bot'
      ? urls.html(`/apps/${encodeURIComponent(user.login.replace(/\[bot\]$/, ''))}`)
      : urls.html(`/${user.login}`);
  return {
    login: user.login,
    id: user.id,
    node_id: nodeId('User', user.id),
    avatar_url: urls.html(`/avatars/u/${user.id}`),
    gravatar_id: '',
    url: api,
    html_url: html,
    followers_url: `${api}/followers`,
    following_url: `${api}/following{/other_user}`,
    gists_url: `${api}/gists{/gist_id}`,
    starred_url: `${api}/starred{/owner}{/repo}`,
    subscriptions_url: `${api}/subscriptions`,
    organizations_url: `${api}/orgs`,
    repos_url: `${api}/repos`,
    events_url: `${api}/events{/privacy}`,
    received_events_url: `${api}/received_events`,
    type: user.type,
    site_admin: false,
  };
}

/** `integration` (REST `GET /app`) and `app` (webhooks `performed_via_github_app`). */
export function appShape(urls: Urls, app: SandboxApp, target: 'rest' | 'webhook' = 'rest'): Record<string, unknown> {
  const shape: Record<string, unknown> = {
    id: app.id,
    slug: app.slug,
    node_id: nodeId('Integration', app.id),
    owner: userShape(urls, app.owner),
    name: app.name,
    description: 'Carries container images up through GitOps environments.',
    external_url: urls.html('/'),
    html_url: urls.html(`/apps/${app.slug}`),
    created_at: isoTime(app.createdAt),
    updated_at: isoTime(app.createdAt),
    permissions: app.permissions,
    events: app.events,
  };
  if (target === 'rest') shape.client_id = app.clientId;
  return shape;
}

/** `installation` as REST returns it and as the `installation` webhook carries it. */
export function installationShape(
  urls: Urls,
  app: SandboxApp,
  installation: SandboxInstallation,
): Record<string, unknown> {
  return {
    id: installation.id,
    account: userShape(urls, installation.account),
    repository_selection: 'selected',
    access_tokens_url: urls.api(`/app/installations/${installation.id}/access_tokens`),
    repositories_url: urls.api('/installation/repositories'),
    html_url: urls.html(`/settings/installations/${installation.id}`),
    app_id: app.id,
    app_slug: app.slug,
    target_id: installation.account.id,
    target_type: installation.account.type === 'Organization' ? 'Organization' : 'User',
    permissions: app.permissions,
    events: app.events,
    created_at: isoTime(installation.createdAt),
    updated_at: isoTime(installation.createdAt),
    single_file_name: null,
    has_multiple_single_files: false,
    single_file_paths: [],
    suspended_by: null,
    suspended_at: null,
  };
}

/** `team` in REST shape, or in the (closed) webhook shape, which has no `type`. */
export function teamShape(urls: Urls, team: SandboxTeam, target: 'rest' | 'webhook' = 'rest'): Record<string, unknown> {
  const api = urls.api(`/orgs/${team.org}/teams/${team.slug}`);
  return {
    id: team.id,
    node_id: nodeId('Team', team.id),
    url: api,
    html_url: urls.html(`/orgs/${team.org}/teams/${team.slug}`),
    name: team.name,
    slug: team.slug,
    description: null,
    privacy: 'closed',
    notification_setting: 'notifications_enabled',
    permission: 'pull',
    members_url: `${api}/members{/member}`,
    repositories_url: `${api}/repos`,
    parent: null,
    ...(target === 'rest' ? { type: 'organization' } : {}),
  };
}
