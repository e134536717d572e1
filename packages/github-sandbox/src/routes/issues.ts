import { createComment } from '../comments.js';
import { actorOf, fullName, type SandboxContext } from '../context.js';
import { emitIssueComment } from '../events.js';
import {
  bodyOf,
  field,
  HttpError,
  json,
  notFound,
  paginate,
  validationFailed,
  type ApiRequest,
  type Router,
} from '../http.js';
import {
  addTargetLabels,
  createIssue,
  findIssueTarget,
  removeTargetLabel,
  setLocked,
  updateIssue,
  type IssueTarget,
} from '../issues.js';
import { isPull, type IssueRecord, type SandboxComment, type SandboxIssue, type SandboxRepo } from '../model.js';
import { addLabels, removeLabel, updatePull } from '../pulls.js';
import { commentShape, issueShape, labelsShape, pullIssueShape } from '../shapes/issues.js';
import { listField, permissionOf, requireAppPermission, requireRepo } from './common.js';

/**
 * Issues (create, list, edit, lock), their labels, and comments. `/issues/{n}` names an issue or
 * the issue side of a pull request.
 */
export function registerIssueRoutes(router: Router, context: SandboxContext): void {
  const { state, urls } = context;
  const commentsOn = (repo: SandboxRepo, number: number) =>
    [...state.comments.values()]
      .filter((c) => c.repoId === repo.id && c.issueNumber === number)
      .sort((a, b) => a.id - b.id);
  const findComment = (repo: SandboxRepo, request: ApiRequest) => {
    const comment = state.comments.get(Number(request.params.comment_id));
    if (!comment || comment.repoId !== repo.id) throw notFound();
    return comment;
  };
  const recordOf = (repo: SandboxRepo, number: number): IssueRecord | undefined => {
    const target = findIssueTarget(context, repo, number);
    return target?.kind === 'issue' ? target.issue : target?.pull;
  };
  const shape = (repo: SandboxRepo, comment: SandboxComment) => {
    const record = recordOf(repo, comment.issueNumber);
    return commentShape(urls, repo, state.app, comment, !record || isPull(record));
  };
  const requireTarget = (repo: SandboxRepo, request: ApiRequest): IssueTarget => {
    const target = findIssueTarget(context, repo, Number(request.params.issue_number));
    if (!target) throw notFound();
    return target;
  };
  const requireRecord = (repo: SandboxRepo, request: ApiRequest): IssueRecord => {
    const target = requireTarget(repo, request);
    return target.kind === 'issue' ? target.issue : target.pull;
  };
  const assigneesOf = (repo: SandboxRepo, body: Record<string, unknown>) =>
    listField(body, 'assignees').map((login) => {
      const user = state.user(login);
      if (!user || permissionOf(repo, user) === 'none')
        throw validationFailed([{ resource: 'Issue', field: 'assignees', code: 'invalid', value: login }]);
      return user;
    });

  router.add('GET', '/repos/:owner/:repo/issues/:issue_number', (request) => {
    const repo = requireRepo(context, request, 'read');
    const target = requireTarget(repo, request);
    if (target.kind === 'issue')
      return json(200, issueShape(urls, repo, target.issue, commentsOn(repo, target.issue.number).length));
    return json(200, pullIssueShape(urls, repo, target.pull, commentsOn(repo, target.pull.number).length));
  });

  router.add('GET', '/repos/:owner/:repo/issues/:issue_number/comments', (request) => {
    const repo = requireRepo(context, request, 'read');
    const record = requireRecord(repo, request);
    const since = request.url.searchParams.get('since');
    const all = commentsOn(repo, record.number).filter((c) => !since || c.updatedAt >= new Date(since));
    const page = paginate(request, all);
    return json(
      200,
      page.items.map((c) => shape(repo, c)),
      page.headers,
    );
  });

  router.add('POST', '/repos/:owner/:repo/issues/:issue_number/comments', (request) => {
    const repo = requireRepo(context, request, 'read');
    const record = requireRecord(repo, request);
    const body = field(request.body, 'body', { required: true });
    const actor = actorOf(context, request.principal);
    const comment = createComment(context, repo, record, actor, body, request.principal?.kind === 'installation');
    return json(201, shape(repo, comment), {
      location: urls.repoApi(fullName(repo), `/issues/comments/${comment.id}`),
    });
  });

  router.add('GET', '/repos/:owner/:repo/issues/comments/:comment_id', (request) => {
    const repo = requireRepo(context, request, 'read');
    return json(200, shape(repo, findComment(repo, request)));
  });

  router.add('PATCH', '/repos/:owner/:repo/issues/comments/:comment_id', (request) => {
    const repo = requireRepo(context, request, 'read');
    const comment = findComment(repo, request);
    const actor = actorOf(context, request.principal);
    if (comment.user.id !== actor.id) throw new HttpError(403, 'Only the author of a comment can edit it.');
    const body = field(request.body, 'body', { required: true });
    const from = comment.body;
    comment.body = body;
    comment.updatedAt = state.clock();
    const record = recordOf(repo, comment.issueNumber);
    if (record && from !== body) emitIssueComment(context, repo, record, comment, 'edited', actor, { body: { from } });
    return json(200, shape(repo, comment));
  });

  router.add('DELETE', '/repos/:owner/:repo/issues/comments/:comment_id', (request) => {
    const repo = requireRepo(context, request, 'read');
    const comment = findComment(repo, request);
    const actor = actorOf(context, request.principal);
    if (comment.user.id !== actor.id) throw new HttpError(403, 'Only the author of a comment can delete it.');
    state.comments.delete(comment.id);
    const record = recordOf(repo, comment.issueNumber);
    if (record) emitIssueComment(context, repo, record, comment, 'deleted', actor);
    return { status: 204 };
  });

  router.add('GET', '/repos/:owner/:repo/issues/:issue_number/labels', (request) => {
    const repo = requireRepo(context, request, 'read');
    const target = requireTarget(repo, request);
    const names = target.kind === 'pull' ? target.pull.labels : target.issue.labels;
    const page = paginate(request, labelsShape(urls, repo, names));
    return json(200, page.items, page.headers);
  });

  router.add('POST', '/repos/:owner/:repo/issues/:issue_number/labels', async (request) => {
    const repo = requireRepo(context, request, 'write');
    const target = requireTarget(repo, request);
    const body = Array.isArray(request.body)
      ? { labels: request.body }
      : ((request.body as Record<string, unknown>) ?? {});
    const names = listField(body, 'labels');
    if (names.length === 0) throw new HttpError(422, 'Invalid request.\n\nNo labels given.');
    const labels = await addTargetLabels(context, repo, target, actorOf(context, request.principal), names);
    return json(200, labelsShape(urls, repo, labels));
  });

  router.add('DELETE', '/repos/:owner/:repo/issues/:issue_number/labels/:name', async (request) => {
    const repo = requireRepo(context, request, 'write');
    const target = requireTarget(repo, request);
    const actor = actorOf(context, request.principal);
    if (!(await removeTargetLabel(context, repo, target, actor, request.params.name ?? ''))) {
      throw new HttpError(404, 'Label does not exist');
    }
    return json(200, labelsShape(urls, repo, target.kind === 'pull' ? target.pull.labels : target.issue.labels));
  });

  router.add('PUT', '/repos/:owner/:repo/issues/:issue_number/lock', async (request) => {
    const repo = requireRepo(context, request, 'write');
    requireAppPermission(context, request, 'issues', 'write');
    const target = requireTarget(repo, request);
    const reason = field(request.body, 'lock_reason');
    await setLocked(context, repo, target, actorOf(context, request.principal), true, reason);
    return { status: 204 };
  });

  router.add('DELETE', '/repos/:owner/:repo/issues/:issue_number/lock', async (request) => {
    const repo = requireRepo(context, request, 'write');
    requireAppPermission(context, request, 'issues', 'write');
    const target = requireTarget(repo, request);
    await setLocked(context, repo, target, actorOf(context, request.principal), false, undefined);
    return { status: 204 };
  });

  router.add('POST', '/repos/:owner/:repo/issues', (request) => {
    const repo = requireRepo(context, request, 'read');
    requireAppPermission(context, request, 'issues', 'write');
    const body = bodyOf(request);
    const title = titleOf(body.title);
    const issue = createIssue(context, repo, actorOf(context, request.principal), {
      title,
      body: field(body, 'body') ?? null,
      labels: labelNames(body),
      assignees: assigneesOf(repo, body),
    });
    return json(201, issueShape(urls, repo, issue, 0));
  });

  router.add('GET', '/repos/:owner/:repo/issues', (request) => {
    const repo = requireRepo(context, request, 'read');
    const query = request.url.searchParams;
    const wantedState = query.get('state') ?? 'open';
    if (!['open', 'closed', 'all'].includes(wantedState))
      throw validationFailed([{ resource: 'Issue', field: 'state', code: 'invalid' }]);
    const wanted = (query.get('labels') ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean);
    const creator = query.get('creator')?.toLowerCase();
    const since = query.get('since');
    const sort = query.get('sort') ?? 'created';
    const ascending = query.get('direction') === 'asc';
    const entries = [
      ...state.issuesOf(repo).map((issue) => ({ kind: 'issue' as const, issue, record: issue })),
      ...state.pullsOf(repo).map((pull) => ({ kind: 'pull' as const, pull, record: pull })),
    ]
      .filter(({ record }) => wantedState === 'all' || record.state === wantedState)
      .filter(({ record }) => wanted.every((name) => record.labels.some((label) => label.toLowerCase() === name)))
      .filter(({ record }) => !creator || record.user.login.toLowerCase() === creator)
      .filter(({ record }) => !since || record.updatedAt >= new Date(since))
      .sort((a, b) => {
        const key = (entry: typeof a) => (sort === 'updated' ? entry.record.updatedAt.getTime() : entry.record.number);
        return ascending ? key(a) - key(b) : key(b) - key(a);
      });
    // GitHub's Link headers for repository lists point at /repositories/{id} (the paginate-issues recording).
    const page = paginate(request, entries, urls.api(`/repositories/${repo.id}/issues`));
    return json(
      200,
      page.items.map((entry) =>
        entry.kind === 'issue'
          ? issueShape(urls, repo, entry.issue, commentsOn(repo, entry.issue.number).length, 'list')
          : pullIssueShape(urls, repo, entry.pull, commentsOn(repo, entry.pull.number).length),
      ),
      page.headers,
    );
  });

  router.add('PATCH', '/repos/:owner/:repo/issues/:issue_number', async (request) => {
    const repo = requireRepo(context, request, 'write');
    requireAppPermission(context, request, 'issues', 'write');
    const target = requireTarget(repo, request);
    const body = bodyOf(request);
    const actor = actorOf(context, request.principal);
    const state = field(body, 'state');
    if (state !== undefined && state !== 'open' && state !== 'closed')
      throw validationFailed([{ resource: 'Issue', field: 'state', code: 'invalid' }]);
    const reason = field(body, 'state_reason');
    if (reason !== undefined && !['completed', 'not_planned', 'reopened', 'duplicate'].includes(reason))
      throw validationFailed([{ resource: 'Issue', field: 'state_reason', code: 'invalid' }]);
    const title = body.title === undefined ? undefined : titleOf(body.title);
    const text = body.body === null ? null : field(body, 'body');
    if (target.kind === 'pull') {
      await updatePull(context, repo, target.pull, actor, {
        ...(title !== undefined ? { title } : {}),
        ...(text !== undefined ? { body: text } : {}),
        ...(state !== undefined ? { state } : {}),
      });
      if (body.labels !== undefined) {
        const wanted = labelNames(body);
        for (const name of [...target.pull.labels])
          if (!wanted.some((w) => w.toLowerCase() === name.toLowerCase()))
            await removeLabel(context, repo, target.pull, actor, name);
        await addLabels(context, repo, target.pull, actor, wanted);
      }
      return json(200, pullIssueShape(urls, repo, target.pull, commentsOn(repo, target.pull.number).length));
    }
    updateIssue(context, repo, target.issue, actor, {
      ...(title !== undefined ? { title } : {}),
      ...(text !== undefined ? { body: text } : {}),
      ...(state !== undefined ? { state } : {}),
      ...(reason !== undefined ? { stateReason: reason as SandboxIssue['stateReason'] } : {}),
      ...(body.labels !== undefined ? { labels: labelNames(body) } : {}),
      ...(body.assignees !== undefined ? { assignees: assigneesOf(repo, body) } : {}),
    });
    return json(200, issueShape(urls, repo, target.issue, commentsOn(repo, target.issue.number).length));
  });
}

/** An issue title: a non-empty string (GitHub also takes a number). */
function titleOf(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string' || value.trim() === '')
    throw validationFailed([{ resource: 'Issue', field: 'title', code: 'missing_field' }]);
  return value;
}

/** `labels` as names or `{ name }` objects, as the create and update endpoints take them. */
function labelNames(body: Record<string, unknown>): string[] {
  const value = body.labels;
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value))
    throw new HttpError(422, `Invalid request.\n\nFor 'labels', ${JSON.stringify(value)} is not an array.`);
  return value.map((item: unknown) => {
    const name = typeof item === 'object' && item !== null ? (item as { name?: unknown }).name : item;
    if (typeof name !== 'string' || name === '')
      throw new HttpError(422, `Invalid request.\n\nFor 'labels', ${JSON.stringify(item)} is not a label name.`);
    return name;
  });
}
