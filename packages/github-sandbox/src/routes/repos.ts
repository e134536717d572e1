import { fullName, type SandboxContext } from '../context.js';
import { HttpError, json, notFound, paginate, type ApiRequest, type Router } from '../http.js';
import type { SandboxRepo } from '../model.js';
import { commitShape, diffEntryShape } from '../shapes/git.js';
import { repoShape } from '../shapes/repos.js';
import { userShape } from '../shapes/users.js';
import { permissionOf, requireRepo } from './common.js';

/** Resolves a branch, tag or SHA, or answers 404 like GitHub ("No commit found for SHA"). */
export async function resolveOrFail(repo: SandboxRepo, ref: string): Promise<string> {
  const sha = await repo.git.resolveCommit(ref);
  if (!sha) throw new HttpError(404, `No commit found for SHA: ${ref}`);
  return sha;
}

/** The REST `commit` object, with `files` and `stats` against the first parent when asked. */
export async function commitResource(
  context: SandboxContext,
  repo: SandboxRepo,
  sha: string,
  withFiles: boolean,
): Promise<Record<string, unknown>> {
  const { urls, state } = context;
  const commit = await repo.git.readCommit(sha);
  const files = withFiles
    ? (await repo.git.diff(commit.parents[0] ?? EMPTY_TREE, sha)).map((change) =>
        diffEntryShape(urls, fullName(repo), sha, change),
      )
    : undefined;
  return commitShape(urls, fullName(repo), commit, {
    verified: context.verifiedCommits.has(sha),
    userByEmail: (email) => [...state.users.values()].find((user) => user.email === email),
    ...(files ? { files } : {}),
  });
}

const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/**
 * GET a commit lists its files page by page: 300 a page unless `per_page` (at most 100) says
 * otherwise, at most 3,000 in all, with `link` headers to the other pages; every page repeats the
 * commit (https://docs.github.com/en/rest/commits/commits#get-a-commit: "If there are more than
 * 300 files in the commit diff … pagination link headers for the remaining files, up to a limit of
 * 3000 files. Each page contains the static commit information, and the only changes are to the
 * file listing"; `per_page` and `page` are the operation's parameters in GitHub's OpenAPI description).
 */
const pageOfFiles = <T>(request: ApiRequest, files: T[]) =>
  paginate(request, files.slice(0, 3000), undefined, { defaultPerPage: 300 });

/**
 * `full-repository` as GET and PATCH answer it: with `organization` for an organization's
 * repository, and the caller's `permissions` for a person (get-repository and rename-repository
 * recordings).
 */
export function fullRepository(
  context: SandboxContext,
  repo: SandboxRepo,
  request: ApiRequest,
): Record<string, unknown> {
  const { state, urls } = context;
  const open = state.pullsOf(repo).filter((pull) => pull.state === 'open').length;
  const shape = repoShape(urls, repo, 'rest', open);
  if (request.principal?.kind === 'user') {
    const permission = permissionOf(repo, request.principal.user);
    const write = ['admin', 'maintain', 'write'].includes(permission);
    shape.permissions = {
      admin: permission === 'admin',
      maintain: write && permission !== 'write',
      push: write,
      triage: write,
      pull: true,
    };
  }
  if (repo.owner.type === 'Organization') shape.organization = userShape(urls, repo.owner);
  return shape;
}

/** Repository metadata, collaborators, commits, compare, and archive downloads. */
export function registerRepoRoutes(router: Router, context: SandboxContext): void {
  const { state, urls } = context;
  const commitOf = (repo: SandboxRepo, sha: string, withFiles: boolean) =>
    commitResource(context, repo, sha, withFiles);

  router.add('GET', '/repos/:owner/:repo', (request) => {
    const repo = requireRepo(context, request, 'read');
    const shape = fullRepository(context, repo, request);
    // GitHub adds a clone token for people (empty for public repositories; get-repository recording).
    if (request.principal?.kind === 'user') shape.temp_clone_token = '';
    return json(200, shape);
  });

  router.add('GET', '/repos/:owner/:repo/collaborators/:username/permission', (request) => {
    const repo = requireRepo(context, request, 'read');
    const user = state.user(request.params.username ?? '');
    if (!user) throw notFound();
    const permission = permissionOf(repo, user);
    const legacy = permission === 'maintain' ? 'write' : permission === 'triage' ? 'read' : permission;
    // Public repositories grant everyone read access.
    const effective = legacy === 'none' ? 'read' : legacy;
    const write = ['admin', 'write'].includes(effective);
    return json(200, {
      permission: effective,
      role_name: permission === 'none' ? 'read' : permission,
      user: {
        ...userShape(urls, user),
        permissions: {
          admin: effective === 'admin',
          maintain: permission === 'maintain' || effective === 'admin',
          push: write,
          triage: write,
          pull: true,
        },
        role_name: permission === 'none' ? 'read' : permission,
      },
    });
  });

  router.add('GET', '/repos/:owner/:repo/commits', async (request) => {
    const repo = requireRepo(context, request, 'read');
    const head = await resolveOrFail(repo, request.url.searchParams.get('sha') ?? repo.defaultBranch);
    const path = request.url.searchParams.get('path') ?? undefined;
    const shas = await repo.git.revList(head, path ? { path } : {});
    const page = paginate(request, shas);
    return json(200, await Promise.all(page.items.map((sha) => commitOf(repo, sha, false))), page.headers);
  });

  router.add('GET', '/repos/:owner/:repo/commits/*ref', async (request) => {
    const repo = requireRepo(context, request, 'read');
    const commit = await commitOf(repo, await resolveOrFail(repo, request.params.ref ?? ''), true);
    const page = pageOfFiles(request, (commit.files as unknown[] | undefined) ?? []);
    return json(200, { ...commit, files: page.items }, page.headers);
  });

  router.add('GET', '/repos/:owner/:repo/compare/*basehead', async (request) => {
    const repo = requireRepo(context, request, 'read');
    const match = /^(.+?)\.\.\.?(.+)$/.exec(request.params.basehead ?? '');
    if (!match) throw notFound();
    const base = await resolveOrFail(repo, match[1] ?? '');
    const head = await resolveOrFail(repo, match[2] ?? '');
    const result = await compare(context, repo, request, base, head, commitOf);
    return json(200, result.body, result.headers);
  });

  const archive = (format: 'tarball' | 'zipball') => async (request: ApiRequest) => {
    const repo = requireRepo(context, request, 'read');
    const ref = request.params.ref || repo.defaultBranch;
    const sha = await resolveOrFail(repo, ref);
    const kind = format === 'tarball' ? 'legacy.tar.gz' : 'legacy.zip';
    // GitHub redirects a branch to codeload by its full ref name, anything else by SHA (get-archive recording).
    const target = (await repo.git.readRef(`refs/heads/${ref}`)) ? `refs/heads/${ref}` : sha;
    return {
      status: 302,
      raw: '',
      headers: {
        location: urls.html(`/_codeload/${fullName(repo)}/${kind}/${target}`),
        'content-type': 'text/html;charset=utf-8',
        'cache-control': 'public, must-revalidate, max-age=0',
      },
    };
  };
  router.add('GET', '/repos/:owner/:repo/tarball/*ref', archive('tarball'));
  router.add('GET', '/repos/:owner/:repo/tarball', archive('tarball'));
  router.add('GET', '/repos/:owner/:repo/zipball/*ref', archive('zipball'));
  router.add('GET', '/repos/:owner/:repo/zipball', archive('zipball'));
}

async function compare(
  context: SandboxContext,
  repo: SandboxRepo,
  request: ApiRequest,
  base: string,
  head: string,
  commitOf: (repo: SandboxRepo, sha: string, files: boolean) => Promise<Record<string, unknown>>,
): Promise<{ body: Record<string, unknown>; headers: Record<string, string> }> {
  const { urls } = context;
  const full = fullName(repo);
  const mergeBase = (await repo.git.mergeBase(base, head)) ?? base;
  const ahead = (await repo.git.revList(head, { exclude: base })).reverse();
  const behind = await repo.git.revList(base, { exclude: head });
  const status =
    ahead.length && behind.length ? 'diverged' : ahead.length ? 'ahead' : behind.length ? 'behind' : 'identical';
  const page = paginate(request, ahead);
  const files = (await repo.git.diff(mergeBase, head)).map((change) => diffEntryShape(urls, full, head, change));
  const spec = `${request.params.basehead ?? ''}`;
  const body = {
    url: urls.repoApi(full, `/compare/${spec}`),
    html_url: urls.repoHtml(full, `/compare/${spec}`),
    permalink_url: urls.repoHtml(full, `/compare/${repo.owner.login}:${base}...${repo.owner.login}:${head}`),
    diff_url: urls.repoHtml(full, `/compare/${spec}.diff`),
    patch_url: urls.repoHtml(full, `/compare/${spec}.patch`),
    base_commit: await commitOf(repo, base, false),
    merge_base_commit: await commitOf(repo, mergeBase, false),
    status,
    ahead_by: ahead.length,
    behind_by: behind.length,
    total_commits: ahead.length,
    commits: await Promise.all(page.items.map((sha) => commitOf(repo, sha, false))),
    files,
  };
  return { body, headers: page.headers };
}
