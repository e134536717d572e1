import { actorOf, fullName, type SandboxContext } from '../context.js';
import { bodyOf, field, json, notFound, paginate, validationFailed, type Router } from '../http.js';
import type { SandboxRepo, SandboxUser } from '../model.js';
import { pullCommits, summarizePull } from '../pull-view.js';
import { createRef } from '../refs.js';
import { userShape } from '../shapes/users.js';
import { isoTime, nodeId } from '../urls.js';
import { requireRepo } from './common.js';
import { resolveOrFail } from './repos.js';

/**
 * Releases (`GET`/`POST /repos/{owner}/{repo}/releases`, `GET …/releases/tags/{tag}`), tags and the pull
 * requests of a commit (`GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls`), as GitHub's REST
 * API describes them (https://docs.github.com/en/rest/releases/releases,
 * https://docs.github.com/en/rest/commits/commits#list-pull-requests-associated-with-a-commit).
 * Releases are kept beside the state, per simulator; a release's tag is a real git tag, created
 * at `target_commitish` when it does not exist yet.
 */

interface SandboxRelease {
  id: number;
  tagName: string;
  targetCommitish: string;
  name: string | null;
  body: string | null;
  draft: boolean;
  prerelease: boolean;
  author: SandboxUser;
  createdAt: Date;
  publishedAt: Date | null;
}

const releasesByContext = new WeakMap<SandboxContext, Map<number, SandboxRelease[]>>();

function releasesOf(context: SandboxContext, repo: SandboxRepo): SandboxRelease[] {
  let byRepo = releasesByContext.get(context);
  if (!byRepo) releasesByContext.set(context, (byRepo = new Map()));
  let list = byRepo.get(repo.id);
  if (!list) byRepo.set(repo.id, (list = []));
  return list;
}

function releaseShape(context: SandboxContext, repo: SandboxRepo, release: SandboxRelease): Record<string, unknown> {
  const { urls } = context;
  const name = fullName(repo);
  const api = urls.repoApi(name, `/releases/${release.id}`);
  return {
    url: api,
    html_url: urls.repoHtml(name, `/releases/tag/${encodeURIComponent(release.tagName)}`),
    assets_url: `${api}/assets`,
    upload_url: `${urls.origin}/api/uploads/repos/${name}/releases/${release.id}/assets{?name,label}`,
    tarball_url: urls.repoApi(name, `/tarball/${encodeURIComponent(release.tagName)}`),
    zipball_url: urls.repoApi(name, `/zipball/${encodeURIComponent(release.tagName)}`),
    id: release.id,
    node_id: nodeId('Release', release.id),
    tag_name: release.tagName,
    target_commitish: release.targetCommitish,
    name: release.name,
    body: release.body,
    draft: release.draft,
    prerelease: release.prerelease,
    created_at: isoTime(release.createdAt),
    published_at: release.publishedAt ? isoTime(release.publishedAt) : null,
    author: userShape(urls, release.author),
    assets: [],
  };
}

export function registerReleaseRoutes(router: Router, context: SandboxContext): void {
  const { state } = context;

  // Newest first, as GitHub lists them; drafts only for those who may push.
  router.add('GET', '/repos/:owner/:repo/releases', (request) => {
    const repo = requireRepo(context, request, 'read');
    const list = [...releasesOf(context, repo)].reverse();
    const page = paginate(request, list);
    return json(
      200,
      page.items.map((release) => releaseShape(context, repo, release)),
      page.headers,
    );
  });

  router.add('GET', '/repos/:owner/:repo/releases/tags/*tag', (request) => {
    const repo = requireRepo(context, request, 'read');
    const release = releasesOf(context, repo).find((r) => r.tagName === request.params.tag && !r.draft);
    if (!release) throw notFound();
    return json(200, releaseShape(context, repo, release));
  });

  router.add('POST', '/repos/:owner/:repo/releases', async (request) => {
    const repo = requireRepo(context, request, 'write');
    const body = bodyOf(request);
    const tagName = field(body, 'tag_name', { required: true });
    const target = field(body, 'target_commitish') ?? repo.defaultBranch;
    if (releasesOf(context, repo).some((release) => release.tagName === tagName))
      throw validationFailed([{ resource: 'Release', code: 'already_exists', field: 'tag_name' }]);
    const actor = actorOf(context, request.principal);
    if (!(await repo.git.readRef(`refs/tags/${tagName}`))) {
      const sha = await repo.git.resolveCommit(target);
      if (!sha) throw validationFailed([{ resource: 'Release', code: 'invalid', field: 'target_commitish' }]);
      await createRef(context, repo, `refs/tags/${tagName}`, sha, actor);
    }
    const now = state.clock();
    const draft = body.draft === true;
    const release: SandboxRelease = {
      id: state.nextId(),
      tagName,
      targetCommitish: target,
      name: field(body, 'name') ?? null,
      body: field(body, 'body') ?? null,
      draft,
      prerelease: body.prerelease === true,
      author: actor,
      createdAt: now,
      publishedAt: draft ? null : now,
    };
    releasesOf(context, repo).push(release);
    return json(201, releaseShape(context, repo, release), {
      location: context.urls.repoApi(fullName(repo), `/releases/${release.id}`),
    });
  });

  // Tags with the commit each points at (annotated tags peeled), newest name first as GitHub sorts them.
  router.add('GET', '/repos/:owner/:repo/tags', async (request) => {
    const repo = requireRepo(context, request, 'read');
    const name = fullName(repo);
    const refs = (await repo.git.listRefs('refs/tags/')).reverse();
    const page = paginate(request, refs);
    const tags = [];
    for (const { ref } of page.items) {
      const tag = ref.slice('refs/tags/'.length);
      const sha = (await repo.git.resolveCommit(ref)) ?? '';
      tags.push({
        name: tag,
        commit: { sha, url: context.urls.repoApi(name, `/commits/${sha}`) },
        zipball_url: context.urls.repoApi(name, `/zipball/refs/tags/${encodeURIComponent(tag)}`),
        tarball_url: context.urls.repoApi(name, `/tarball/refs/tags/${encodeURIComponent(tag)}`),
        node_id: nodeId('Ref', `${repo.id}:${ref}`),
      });
    }
    return json(200, tags, page.headers);
  });

  // The merged pull request that brought the commit into the default branch; for a commit not
  // on it, the open and closed pull requests whose commits hold it.
  router.add('GET', '/repos/:owner/:repo/commits/*ref/pulls', async (request) => {
    const repo = requireRepo(context, request, 'read');
    const sha = await resolveOrFail(repo, request.params.ref ?? '');
    const pulls = state.pullsOf(repo);
    const merged = pulls.filter((pull) => pull.mergedAt && pull.mergeCommitSha === sha);
    const found = [...merged];
    for (const pull of pulls) {
      if (found.includes(pull)) continue;
      if (pull.headSha === sha || (await pullCommits(repo, pull)).includes(sha)) found.push(pull);
    }
    const page = paginate(request, found);
    return json(200, await Promise.all(page.items.map((pull) => summarizePull(context, repo, pull))), page.headers);
  });
}
