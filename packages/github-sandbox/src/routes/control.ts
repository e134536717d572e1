import { resolve } from 'node:path';
import { fullName, type SandboxContext } from '../context.js';
import { createComment } from '../comments.js';
import { emitCheckRun } from '../events.js';
import { bodyOf, field, HttpError, json, notFound, type ApiRequest, type Router } from '../http.js';
import type { Permission, SandboxRepo, SandboxUser } from '../model.js';
import { describePull } from '../pull-view.js';
import { mergePull, openPull, type MergeMethod } from '../pulls.js';
import { commitFiles, createRepository, type FileMap } from '../repositories.js';
import { commentShape } from '../shapes/issues.js';
import { repoShape } from '../shapes/repos.js';
import { isoTime } from '../urls.js';
import { requirePull } from './common.js';

/**
 * The control API under `/_sandbox`: what a person does in GitHub's UI or with `git push`,
 * plus test switches. Every call needs a user token and acts as that user.
 */
export function registerControlRoutes(router: Router, context: SandboxContext): void {
  const { state, urls, webhooks, controls } = context;
  const caller = (request: ApiRequest): SandboxUser => {
    if (request.principal?.kind !== 'user')
      throw new HttpError(401, 'The control API needs a user token: Authorization: token ghp_…');
    return request.principal.user;
  };
  const repoOf = (request: ApiRequest): SandboxRepo => {
    const repo = state.repo(request.params.owner ?? '', request.params.repo ?? '');
    if (!repo) throw notFound();
    return repo;
  };

  router.add('GET', '/_sandbox/info', (request) => {
    caller(request);
    const app = state.requireApp();
    return json(200, {
      api_url: urls.apiBase,
      app: { id: app.id, slug: app.slug, webhook_url: app.webhookUrl },
      repositories: [...state.repos.values()].map(fullName),
      now: isoTime(state.clock()),
    });
  });

  router.add('POST', '/_sandbox/users', (request) => {
    caller(request);
    const body = bodyOf(request);
    const login = field(body, 'login', { required: true });
    const type = field(body, 'type') === 'Organization' ? 'Organization' : 'User';
    const user = state.createUser(login, type, field(body, 'name') ?? login);
    return json(201, {
      login: user.login,
      id: user.id,
      type: user.type,
      token: type === 'User' ? state.issueUserToken(user) : null,
    });
  });

  router.add('POST', '/_sandbox/repos', async (request) => {
    const user = caller(request);
    const body = bodyOf(request);
    const folder = field(body, 'folder');
    const repo = await createRepository(context, user, {
      owner: field(body, 'owner') ?? user.login,
      name: field(body, 'name', { required: true }),
      ...(folder ? { folder: resolve(folder) } : {}),
      files: (body.files as FileMap | undefined) ?? {},
      defaultBranch: field(body, 'default_branch') ?? 'main',
      description: field(body, 'description') ?? null,
      install: body.install !== false,
      collaborators: (body.collaborators as Record<string, Permission> | undefined) ?? {},
      teams: Array.isArray(body.teams) ? body.teams.map(String) : [],
      topics: Array.isArray(body.topics) ? body.topics.map(String) : [],
      visibility: visibilityOf(field(body, 'visibility')),
    });
    const installation = state.installationForRepo(repo);
    return json(201, { ...repoShape(urls, repo, 'rest'), installation_id: installation?.id ?? null });
  });

  router.add('POST', '/_sandbox/repos/:owner/:repo/commits', async (request) => {
    const user = caller(request);
    const body = bodyOf(request);
    const files = body.files;
    if (!files || typeof files !== 'object')
      throw new HttpError(422, 'files must be an object of path → content (null deletes)');
    const from = field(body, 'from');
    const result = await commitFiles(context, repoOf(request), user, {
      branch: field(body, 'branch', { required: true }),
      message: field(body, 'message') ?? 'Update files',
      files: files as FileMap,
      ...(from ? { from } : {}),
    });
    return json(201, result);
  });

  router.add('POST', '/_sandbox/repos/:owner/:repo/pulls', async (request) => {
    const user = caller(request);
    const repo = repoOf(request);
    const body = bodyOf(request);
    const pull = await openPull(context, repo, user, {
      title: field(body, 'title', { required: true }),
      head: field(body, 'head', { required: true }),
      base: field(body, 'base') ?? repo.defaultBranch,
      body: field(body, 'body') ?? null,
    });
    return json(201, await describePull(context, repo, pull));
  });

  router.add('PUT', '/_sandbox/repos/:owner/:repo/pulls/:pull_number/merge', async (request) => {
    const user = caller(request);
    const repo = repoOf(request);
    const pull = requirePull(context, repo, request);
    const body = bodyOf(request);
    const sha = field(body, 'sha');
    const result = await mergePull(context, repo, pull, user, {
      method: (field(body, 'merge_method') ?? 'merge') as MergeMethod,
      ...(sha ? { sha } : {}),
    });
    return json(200, { sha: result.sha, merged: true });
  });

  router.add('POST', '/_sandbox/repos/:owner/:repo/issues/:pull_number/comments', (request) => {
    const user = caller(request);
    const repo = repoOf(request);
    const comment = createComment(
      context,
      repo,
      requirePull(context, repo, request),
      user,
      field(request.body, 'body', { required: true }),
      false,
    );
    return json(201, commentShape(urls, repo, state.app, comment));
  });

  router.add('POST', '/_sandbox/repos/:owner/:repo/check-runs/:check_run_id/rerequest', (request) => {
    const user = caller(request);
    const repo = repoOf(request);
    const run = state.checkRuns.get(Number(request.params.check_run_id));
    if (!run || run.repoId !== repo.id) throw notFound();
    emitCheckRun(context, repo, run, 'rerequested', user);
    return json(202, {});
  });

  router.add('PUT', '/_sandbox/rate-limit', (request) => {
    caller(request);
    const body = bodyOf(request);
    const mode = field(body, 'mode') ?? 'secondary';
    if (!['secondary', 'secondary-429', 'primary'].includes(mode))
      throw new HttpError(422, 'mode must be secondary, secondary-429 or primary');
    const count = Number(body.count ?? 1);
    controls.throttle =
      count > 0 ? { mode: mode as 'secondary', remaining: count, retryAfter: Number(body.retry_after ?? 1) } : null;
    return json(200, { throttle: controls.throttle });
  });

  router.add('PUT', '/_sandbox/app', (request) => {
    caller(request);
    const url = field(request.body, 'webhook_url');
    state.requireApp().webhookUrl = url ?? null;
    return json(200, { webhook_url: state.requireApp().webhookUrl });
  });

  router.add('POST', '/_sandbox/clock', (request) => {
    caller(request);
    controls.clockOffsetMs += Number(bodyOf(request).advance_seconds ?? 0) * 1000;
    return json(200, { now: isoTime(state.clock()), offset_seconds: controls.clockOffsetMs / 1000 });
  });

  router.add('GET', '/_sandbox/deliveries', async (request) => {
    caller(request);
    if (request.url.searchParams.get('wait') !== 'false') await webhooks.idle();
    const event = request.url.searchParams.get('event');
    const deliveries = webhooks.deliveries.filter((d) => !event || d.event === event);
    // `payload=false` leaves the bodies out: a summary a person can read in a terminal.
    const withPayload = request.url.searchParams.get('payload') !== 'false';
    return json(
      200,
      deliveries.map((d) => ({
        id: d.id,
        guid: d.guid,
        event: d.event,
        action: d.action,
        status: d.status,
        status_code: d.statusCode,
        redelivery: d.redelivery,
        delivered_at: isoTime(d.deliveredAt),
        ...(withPayload ? { payload: d.request.payload } : {}),
      })),
    );
  });
}

/** `visibility` of `POST /_sandbox/repos`, as `POST /orgs/{org}/repos` takes it: public (default), private or internal. */
function visibilityOf(value: string | undefined): 'public' | 'private' | 'internal' {
  if (value === undefined || value === 'public' || value === 'private' || value === 'internal')
    return value ?? 'public';
  throw new HttpError(422, `visibility must be public, private or internal, not ${JSON.stringify(value)}.`);
}
