import { actorOf, fullName, type SandboxContext } from '../context.js';
import { bodyOf, field, HttpError, json, notFound, paginate, type Router } from '../http.js';
import type { SandboxPull } from '../model.js';
import { describePull, pullCommits, pullFiles, summarizePull } from '../pull-view.js';
import { mergePull, openPull, requestReviewers, updatePull, type MergeMethod } from '../pulls.js';
import { diffEntryShape } from '../shapes/git.js';
import { teamShape, userShape } from '../shapes/users.js';
import { listField, requirePull, requireRepo } from './common.js';
import { commitResource } from './repos.js';

/** Pull requests: create, list with filters, get, update, files, commits, merge, reviewers. */
export function registerPullRoutes(router: Router, context: SandboxContext): void {
  const { state, urls } = context;

  router.add('GET', '/repos/:owner/:repo/pulls', async (request) => {
    const repo = requireRepo(context, request, 'read');
    const query = request.url.searchParams;
    const wanted = query.get('state') ?? 'open';
    const head = query.get('head');
    const base = query.get('base');
    const sort = query.get('sort') ?? 'created';
    const direction = query.get('direction') ?? (sort === 'created' || sort === 'updated' ? 'desc' : 'asc');
    const matches = state.pullsOf(repo).filter((pull) => {
      if (wanted !== 'all' && pull.state !== wanted) return false;
      if (base && pull.baseRef !== base) return false;
      if (head) {
        const [owner, branch] = head.includes(':') ? head.split(/:(.*)/s) : [repo.owner.login, head];
        if ((owner ?? '').toLowerCase() !== repo.owner.login.toLowerCase() || pull.headRef !== branch) return false;
      }
      return true;
    });
    const key = (pull: SandboxPull) =>
      sort === 'updated' ? pull.updatedAt.getTime() : pull.createdAt.getTime() * 1e4 + pull.number;
    matches.sort((a, b) => (direction === 'asc' ? key(a) - key(b) : key(b) - key(a)));
    const page = paginate(request, matches);
    return json(200, await Promise.all(page.items.map((pull) => summarizePull(context, repo, pull))), page.headers);
  });

  router.add('POST', '/repos/:owner/:repo/pulls', async (request) => {
    const repo = requireRepo(context, request, 'write');
    const body = bodyOf(request);
    const pull = await openPull(context, repo, actorOf(context, request.principal), {
      title: field(body, 'title', { required: true }),
      head: field(body, 'head', { required: true }),
      base: field(body, 'base', { required: true }),
      body: field(body, 'body') ?? null,
      draft: body.draft === true,
      maintainerCanModify: body.maintainer_can_modify === true,
    });
    return json(201, await describePull(context, repo, pull), {
      location: urls.repoApi(fullName(repo), `/pulls/${pull.number}`),
    });
  });

  router.add('GET', '/repos/:owner/:repo/pulls/:pull_number', async (request) => {
    const repo = requireRepo(context, request, 'read');
    return json(200, await describePull(context, repo, requirePull(context, repo, request)));
  });

  router.add('PATCH', '/repos/:owner/:repo/pulls/:pull_number', async (request) => {
    const repo = requireRepo(context, request, 'write');
    const pull = requirePull(context, repo, request);
    const body = bodyOf(request);
    const update: Parameters<typeof updatePull>[4] = {};
    const title = field(body, 'title');
    const text = field(body, 'body');
    const stateValue = field(body, 'state');
    const base = field(body, 'base');
    if (title !== undefined) update.title = title;
    if (text !== undefined) update.body = text;
    if (stateValue !== undefined) update.state = stateValue;
    if (base !== undefined) update.base = base;
    await updatePull(context, repo, pull, actorOf(context, request.principal), update);
    return json(200, await describePull(context, repo, pull));
  });

  router.add('GET', '/repos/:owner/:repo/pulls/:pull_number/files', async (request) => {
    const repo = requireRepo(context, request, 'read');
    const pull = requirePull(context, repo, request);
    const files = (await pullFiles(repo, pull)).map((change) =>
      diffEntryShape(urls, fullName(repo), pull.headSha, change),
    );
    const page = paginate(request, files);
    return json(200, page.items, page.headers);
  });

  router.add('GET', '/repos/:owner/:repo/pulls/:pull_number/commits', async (request) => {
    const repo = requireRepo(context, request, 'read');
    const page = paginate(request, await pullCommits(repo, requirePull(context, repo, request)));
    return json(
      200,
      await Promise.all(page.items.map((sha) => commitResource(context, repo, sha, false))),
      page.headers,
    );
  });

  router.add('GET', '/repos/:owner/:repo/pulls/:pull_number/merge', (request) => {
    const repo = requireRepo(context, request, 'read');
    if (!requirePull(context, repo, request).mergedAt) throw notFound();
    return { status: 204 };
  });

  router.add('PUT', '/repos/:owner/:repo/pulls/:pull_number/merge', async (request) => {
    const repo = requireRepo(context, request, 'write');
    const pull = requirePull(context, repo, request);
    const body = bodyOf(request);
    const method = field(body, 'merge_method') ?? 'merge';
    if (!['merge', 'squash', 'rebase'].includes(method))
      throw new HttpError(422, `merge_method must be merge, squash or rebase, not "${method}"`);
    const input: Parameters<typeof mergePull>[4] = { method: method as MergeMethod };
    const sha = field(body, 'sha');
    const title = field(body, 'commit_title');
    const message = field(body, 'commit_message');
    if (sha !== undefined) input.sha = sha;
    if (title !== undefined) input.title = title;
    if (message !== undefined) input.message = message;
    const result = await mergePull(context, repo, pull, actorOf(context, request.principal), input);
    return json(200, { sha: result.sha, merged: true, message: 'Pull Request successfully merged' });
  });

  router.add('GET', '/repos/:owner/:repo/pulls/:pull_number/requested_reviewers', (request) => {
    const repo = requireRepo(context, request, 'read');
    const pull = requirePull(context, repo, request);
    return json(200, {
      users: pull.requestedReviewers.flatMap((login) => state.user(login) ?? []).map((user) => userShape(urls, user)),
      teams: pull.requestedTeams
        .flatMap((key) => state.team(...(key.split('/') as [string, string])) ?? [])
        .map((team) => teamShape(urls, team)),
    });
  });

  router.add('POST', '/repos/:owner/:repo/pulls/:pull_number/requested_reviewers', async (request) => {
    const repo = requireRepo(context, request, 'write');
    const pull = requirePull(context, repo, request);
    const body = bodyOf(request);
    await requestReviewers(context, repo, pull, actorOf(context, request.principal), {
      reviewers: listField(body, 'reviewers'),
      teams: listField(body, 'team_reviewers'),
    });
    return json(201, await summarizePull(context, repo, pull));
  });

  router.add('DELETE', '/repos/:owner/:repo/pulls/:pull_number/requested_reviewers', async (request) => {
    const repo = requireRepo(context, request, 'write');
    const pull = requirePull(context, repo, request);
    const body = bodyOf(request);
    const users = listField(body, 'reviewers').map((login) => login.toLowerCase());
    const teams = listField(body, 'team_reviewers').map((slug) => `${repo.owner.login}/${slug}`.toLowerCase());
    pull.requestedReviewers = pull.requestedReviewers.filter((login) => !users.includes(login.toLowerCase()));
    pull.requestedTeams = pull.requestedTeams.filter((key) => !teams.includes(key.toLowerCase()));
    return json(200, await summarizePull(context, repo, pull));
  });
}
