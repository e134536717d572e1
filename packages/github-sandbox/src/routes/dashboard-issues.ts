/**
 * Issues that are not pull requests, as far as a dashboard issue needs them: create, get, list
 * (`creator`, `state`), edit (with the `issues` webhook, `edited` and `changes.body.from`),
 * comments on them, and GraphQL `pinIssue`. Shapes follow GitHub's OpenAPI description
 * (`@octokit/openapi`, schemas `issue` and `webhook-issues-edited`); routes it does not know go to
 * the pull request issue routes (`fallback`).
 */
import type { SandboxContext } from '../context.js';
import { actorOf, fullName } from '../context.js';
import { field, HttpError, json, notFound, paginate, type ApiRequest, type ApiResponse, type Router } from '../http.js';
import type { SandboxComment, SandboxRepo, SandboxUser } from '../model.js';
import { repoShape } from '../shapes/repos.js';
import { authorAssociation, commentShape } from '../shapes/issues.js';
import { userShape } from '../shapes/users.js';
import { isoTime, nodeId } from '../urls.js';
import { permissionOf, requireRepo } from './common.js';

interface SandboxIssue {
  id: number;
  number: number;
  title: string;
  body: string;
  user: SandboxUser;
  state: 'open' | 'closed';
  pinned: boolean;
  createdAt: Date;
  updatedAt: Date;
  closedAt: Date | null;
}

const issuesByState = new WeakMap<object, Map<number, SandboxIssue[]>>();

function issuesOf(context: SandboxContext, repo: SandboxRepo): SandboxIssue[] {
  let byRepo = issuesByState.get(context.state);
  if (!byRepo) issuesByState.set(context.state, (byRepo = new Map()));
  let list = byRepo.get(repo.id);
  if (!list) byRepo.set(repo.id, (list = []));
  return list;
}

/** The issue of `number` in `repo` when it is one of these (not a pull request). */
export function findIssue(context: SandboxContext, repo: SandboxRepo, number: number): SandboxIssue | undefined {
  return issuesOf(context, repo).find((issue) => issue.number === number);
}

function issueShape(context: SandboxContext, repo: SandboxRepo, issue: SandboxIssue): Record<string, unknown> {
  const { urls } = context;
  const full = fullName(repo);
  const url = urls.repoApi(full, `/issues/${issue.number}`);
  const comments = [...context.state.comments.values()].filter(
    (c) => c.repoId === repo.id && c.issueNumber === issue.number,
  ).length;
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
    labels: [],
    state: issue.state,
    locked: false,
    assignee: null,
    assignees: [],
    milestone: null,
    comments,
    created_at: isoTime(issue.createdAt),
    updated_at: isoTime(issue.updatedAt),
    closed_at: issue.closedAt ? isoTime(issue.closedAt) : null,
    author_association: authorAssociation(repo, issue.user),
    active_lock_reason: null,
    body: issue.body,
    reactions: {
      url: `${url}/reactions`,
      total_count: 0,
      '+1': 0,
      '-1': 0,
      laugh: 0,
      hooray: 0,
      confused: 0,
      heart: 0,
      rocket: 0,
      eyes: 0,
    },
    timeline_url: `${url}/timeline`,
    performed_via_github_app: null,
    state_reason: issue.state === 'closed' ? 'completed' : null,
  };
}

function emitIssues(
  context: SandboxContext,
  repo: SandboxRepo,
  issue: SandboxIssue,
  action: 'opened' | 'edited' | 'pinned',
  sender: SandboxUser,
  changes?: Record<string, unknown>,
): void {
  const installation = context.state.installationForRepo(repo);
  if (!installation) return;
  context.webhooks.send('issues', {
    action,
    issue: issueShape(context, repo, issue),
    ...(changes ? { changes } : {}),
    repository: repoShape(context.urls, repo, 'nested'),
    sender: userShape(context.urls, sender),
    installation: { id: installation.id, node_id: nodeId('Installation', installation.id) },
  });
}

/** GraphQL `pinIssue(input: {issueId})`: the issue's node id; at most three pinned per repository. */
export function pinIssue(
  context: SandboxContext,
  issueNodeId: string,
): { ok: true; id: string } | { ok: false; message: string } {
  for (const repo of context.state.repos.values()) {
    const issue = issuesOf(context, repo).find((i) => nodeId('Issue', i.id) === issueNodeId);
    if (!issue) continue;
    if (!issue.pinned && issuesOf(context, repo).filter((i) => i.pinned).length >= 3)
      return { ok: false, message: 'Repository already has 3 pinned issues' };
    issue.pinned = true;
    emitIssues(context, repo, issue, 'pinned', context.state.requireApp().bot);
    return { ok: true, id: issueNodeId };
  }
  return { ok: false, message: `Could not resolve to a node with the global id of '${issueNodeId}'` };
}

/** Whether an issue is pinned (for tests, through the control API). */
export function isPinned(context: SandboxContext, repo: SandboxRepo, number: number): boolean {
  return findIssue(context, repo, number)?.pinned ?? false;
}

export function registerDashboardIssueRoutes(router: Router, context: SandboxContext, fallback: Router): void {
  const { state } = context;
  const orFallback =
    (handler: (request: ApiRequest, repo: SandboxRepo, issue: SandboxIssue) => ApiResponse | Promise<ApiResponse>) =>
    (request: ApiRequest): ApiResponse | Promise<ApiResponse> => {
      const repo = requireRepo(context, request, 'read');
      const issue = findIssue(context, repo, Number(request.params.issue_number));
      if (issue) return handler(request, repo, issue);
      const match = fallback.match(request.method, request.url.pathname.replace(/^\/api\/v3/, ''));
      if (!match) throw notFound();
      return match.handler({ ...request, params: match.params });
    };

  router.add('POST', '/repos/:owner/:repo/issues', (request) => {
    const repo = requireRepo(context, request, 'read');
    const title = field(request.body, 'title', { required: true });
    const author = actorOf(context, request.principal);
    const now = state.clock();
    const issue: SandboxIssue = {
      id: state.nextId(),
      number: repo.nextNumber++,
      title,
      body: field(request.body, 'body') ?? '',
      user: author,
      state: 'open',
      pinned: false,
      createdAt: now,
      updatedAt: now,
      closedAt: null,
    };
    issuesOf(context, repo).push(issue);
    emitIssues(context, repo, issue, 'opened', author);
    return json(201, issueShape(context, repo, issue), {
      location: context.urls.repoApi(fullName(repo), `/issues/${issue.number}`),
    });
  });

  router.add('GET', '/repos/:owner/:repo/issues', (request) => {
    const repo = requireRepo(context, request, 'read');
    const params = request.url.searchParams;
    const wanted = params.get('state') ?? 'open';
    const creator = params.get('creator')?.toLowerCase();
    // Pull requests are issues too in this list; only these standalone ones are served here.
    const all = issuesOf(context, repo)
      .filter((i) => wanted === 'all' || i.state === wanted)
      .filter((i) => !creator || i.user.login.toLowerCase() === creator)
      .sort((a, b) => b.number - a.number);
    const page = paginate(request, all);
    return json(
      200,
      page.items.map((i) => issueShape(context, repo, i)),
      page.headers,
    );
  });

  router.add(
    'GET',
    '/repos/:owner/:repo/issues/:issue_number',
    orFallback((_request, repo, issue) => json(200, issueShape(context, repo, issue))),
  );

  router.add(
    'PATCH',
    '/repos/:owner/:repo/issues/:issue_number',
    orFallback((request, repo, issue) => {
      const actor = actorOf(context, request.principal);
      const permission = request.principal?.kind === 'installation' ? 'write' : permissionOf(repo, actor);
      // The author and people who manage issues (triage and above) may edit an issue.
      if (issue.user.id !== actor.id && !['admin', 'maintain', 'write', 'triage'].includes(permission))
        throw new HttpError(403, 'Must have triage access to edit this issue.');
      const changes: Record<string, { from: string }> = {};
      const title = field(request.body, 'title');
      const body = field(request.body, 'body');
      const wanted = field(request.body, 'state');
      if (title !== undefined && title !== issue.title) {
        changes.title = { from: issue.title };
        issue.title = title;
      }
      if (body !== undefined && body !== issue.body) {
        changes.body = { from: issue.body };
        issue.body = body;
      }
      if (wanted === 'open' || wanted === 'closed') {
        if (wanted !== issue.state) issue.closedAt = wanted === 'closed' ? state.clock() : null;
        issue.state = wanted;
      }
      issue.updatedAt = state.clock();
      if (Object.keys(changes).length > 0) emitIssues(context, repo, issue, 'edited', actor, changes);
      return json(200, issueShape(context, repo, issue));
    }),
  );

  router.add(
    'GET',
    '/repos/:owner/:repo/issues/:issue_number/comments',
    orFallback((request, repo, issue) => {
      const all = [...state.comments.values()]
        .filter((c) => c.repoId === repo.id && c.issueNumber === issue.number)
        .sort((a, b) => a.id - b.id);
      const page = paginate(request, all);
      return json(
        200,
        page.items.map((c) => commentShape(context.urls, repo, state.app, c)),
        page.headers,
      );
    }),
  );

  router.add(
    'POST',
    '/repos/:owner/:repo/issues/:issue_number/comments',
    orFallback((request, repo, issue) => {
      const body = field(request.body, 'body', { required: true });
      const author = actorOf(context, request.principal);
      const now = state.clock();
      const comment: SandboxComment = {
        id: state.nextId(),
        repoId: repo.id,
        issueNumber: issue.number,
        body,
        user: author,
        viaApp: request.principal?.kind === 'installation',
        createdAt: now,
        updatedAt: now,
      };
      state.comments.set(comment.id, comment);
      return json(201, commentShape(context.urls, repo, state.app, comment), {
        location: context.urls.repoApi(fullName(repo), `/issues/comments/${comment.id}`),
      });
    }),
  );
}
