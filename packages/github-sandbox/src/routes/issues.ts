import { createComment } from '../comments.js';
import { actorOf, fullName, type SandboxContext } from '../context.js';
import { emitIssueComment } from '../events.js';
import { field, HttpError, json, notFound, paginate, type ApiRequest, type Router } from '../http.js';
import type { SandboxComment, SandboxRepo } from '../model.js';
import { addLabels, removeLabel } from '../pulls.js';
import { commentShape, labelShape, pullIssueShape } from '../shapes/issues.js';
import { listField, requirePull, requireRepo } from './common.js';

/** Issue comments and labels. Issues here are the issue side of pull requests. */
export function registerIssueRoutes(router: Router, context: SandboxContext): Router {
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
  const shape = (repo: SandboxRepo, comment: SandboxComment) => commentShape(urls, repo, state.app, comment);
  const labelsOf = (repo: SandboxRepo, names: string[]) =>
    names
      .flatMap((name) => repo.labels.get(name.toLowerCase()) ?? [])
      .map((label) => labelShape(urls, fullName(repo), label));

  router.add('GET', '/repos/:owner/:repo/issues/:issue_number', (request) => {
    const repo = requireRepo(context, request, 'read');
    const pull = requirePull(context, repo, request, 'issue_number');
    return json(200, pullIssueShape(urls, repo, pull, commentsOn(repo, pull.number).length));
  });

  router.add('GET', '/repos/:owner/:repo/issues/:issue_number/comments', (request) => {
    const repo = requireRepo(context, request, 'read');
    const pull = requirePull(context, repo, request, 'issue_number');
    const since = request.url.searchParams.get('since');
    const all = commentsOn(repo, pull.number).filter((c) => !since || c.updatedAt >= new Date(since));
    const page = paginate(request, all);
    return json(
      200,
      page.items.map((c) => shape(repo, c)),
      page.headers,
    );
  });

  router.add('POST', '/repos/:owner/:repo/issues/:issue_number/comments', (request) => {
    const repo = requireRepo(context, request, 'read');
    const pull = requirePull(context, repo, request, 'issue_number');
    const body = field(request.body, 'body', { required: true });
    const actor = actorOf(context, request.principal);
    const comment = createComment(context, repo, pull, actor, body, request.principal?.kind === 'installation');
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
    const pull = state.pull(repo, comment.issueNumber);
    if (pull && from !== body) emitIssueComment(context, repo, pull, comment, 'edited', actor, { body: { from } });
    return json(200, shape(repo, comment));
  });

  router.add('DELETE', '/repos/:owner/:repo/issues/comments/:comment_id', (request) => {
    const repo = requireRepo(context, request, 'read');
    const comment = findComment(repo, request);
    const actor = actorOf(context, request.principal);
    if (comment.user.id !== actor.id) throw new HttpError(403, 'Only the author of a comment can delete it.');
    state.comments.delete(comment.id);
    const pull = state.pull(repo, comment.issueNumber);
    if (pull) emitIssueComment(context, repo, pull, comment, 'deleted', actor);
    return { status: 204 };
  });

  router.add('GET', '/repos/:owner/:repo/issues/:issue_number/labels', (request) => {
    const repo = requireRepo(context, request, 'read');
    const page = paginate(request, labelsOf(repo, requirePull(context, repo, request, 'issue_number').labels));
    return json(200, page.items, page.headers);
  });

  router.add('POST', '/repos/:owner/:repo/issues/:issue_number/labels', async (request) => {
    const repo = requireRepo(context, request, 'write');
    const pull = requirePull(context, repo, request, 'issue_number');
    const body = Array.isArray(request.body)
      ? { labels: request.body }
      : ((request.body as Record<string, unknown>) ?? {});
    const names = listField(body, 'labels');
    if (names.length === 0) throw new HttpError(422, 'Invalid request.\n\nNo labels given.');
    await addLabels(context, repo, pull, actorOf(context, request.principal), names);
    return json(200, labelsOf(repo, pull.labels));
  });

  router.add('DELETE', '/repos/:owner/:repo/issues/:issue_number/labels/:name', async (request) => {
    const repo = requireRepo(context, request, 'write');
    const pull = requirePull(context, repo, request, 'issue_number');
    if (!(await removeLabel(context, repo, pull, actorOf(context, request.principal), request.params.name ?? ''))) {
      throw new HttpError(404, 'Label does not exist');
    }
    return json(200, labelsOf(repo, pull.labels));
  });
  return router;
}
