import { actorOf, fullName, type SandboxContext } from '../context.js';
import { bodyOf, field, HttpError, json, notFound, type ApiRequest, type Router } from '../http.js';
import type { TreeEntry } from '../git.js';
import { commitFiles } from '../repositories.js';
import { contentShape, gitCommitShape } from '../shapes/git.js';
import { requireAppPermission, requireRepo } from './common.js';

type ContentType = 'file' | 'dir' | 'symlink' | 'submodule';

function contentType(entry: TreeEntry): ContentType {
  if (entry.type === 'tree') return 'dir';
  if (entry.type === 'commit') return 'submodule';
  return entry.mode === '120000' ? 'symlink' : 'file';
}

/**
 * `GET /repos/{owner}/{repo}/contents/{path}?ref=`: a file (base64, or raw bytes with
 * `Accept: application/vnd.github.raw`), or a directory listing. `PUT` creates (201) or, given
 * the current blob `sha`, updates (200) one file with a commit on a branch (create-file recording).
 */
export function registerContentRoutes(router: Router, context: SandboxContext): void {
  const { urls } = context;
  const handler = async (request: ApiRequest) => {
    const repo = requireRepo(context, request, 'read');
    const path = (request.params.path ?? '').replace(/^\/+|\/+$/g, '');
    const ref = request.url.searchParams.get('ref') || repo.defaultBranch;
    const sha = await repo.git.resolveCommit(ref);
    if (!sha) throw new HttpError(404, `No commit found for the ref ${ref}`);
    const full = fullName(repo);
    const listing = async (treeish: string, prefix: string) => {
      const entries = await repo.git.lsTree(treeish);
      return entries.map((entry) =>
        contentShape(urls, full, ref, {
          path: prefix ? `${prefix}/${entry.path}` : entry.path,
          sha: entry.sha,
          size: entry.size ?? 0,
          type: contentType(entry),
        }),
      );
    };
    if (path === '') return json(200, await listing(sha, ''));
    const [entry] = await repo.git.lsTree(sha, { path });
    if (!entry || entry.path !== path) throw notFound();
    if (entry.type === 'tree') return json(200, await listing(entry.sha, path));
    const type = contentType(entry);
    const content = type === 'submodule' ? undefined : await repo.git.readBlob(entry.sha);
    const raw = /application\/vnd\.github(\.v3)?\.raw/.exec(String(request.headers.accept ?? ''));
    if (content && raw) {
      // The media type echoes the one asked for (`vnd.github.v3.raw` in the get-content recording).
      return { status: 200, raw: content, headers: { 'content-type': `${raw[0]}; charset=utf-8` } };
    }
    const shape = contentShape(
      urls,
      full,
      ref,
      { path, sha: entry.sha, size: entry.size ?? 0, type },
      type === 'file' ? content : undefined,
    );
    if (type === 'symlink' && content) shape.target = content.toString('utf8');
    if (type === 'submodule') shape.submodule_git_url = urls.repoHtml(full, `/${path}.git`);
    return json(200, shape);
  };
  router.add('PUT', '/repos/:owner/:repo/contents/*path', async (request) => {
    const repo = requireRepo(context, request, 'write');
    requireAppPermission(context, request, 'contents', 'write');
    const body = bodyOf(request);
    const path = (request.params.path ?? '').replace(/^\/+|\/+$/g, '');
    const message = field(body, 'message', { required: true });
    const encoded = field(body, 'content', { required: true });
    if (!/^[A-Za-z0-9+/=\s]*$/.test(encoded)) throw new HttpError(422, 'content is not valid Base64');
    const branch = field(body, 'branch') ?? repo.defaultBranch;
    const head = await repo.git.readRef(`refs/heads/${branch}`);
    // An empty repository gets its default branch from the first file; any other branch must exist.
    if (!head && (branch !== repo.defaultBranch || (await repo.git.resolveCommit(repo.defaultBranch))))
      throw new HttpError(404, `Branch ${branch} not found`);
    const [existing] = head ? await repo.git.lsTree(head, { path }) : [];
    const current = existing?.path === path ? existing : undefined;
    if (current?.type === 'tree') throw new HttpError(422, `${path} is a directory.`);
    const sha = field(body, 'sha');
    if (current && sha === undefined) throw new HttpError(422, 'Invalid request.\n\n"sha" wasn\'t supplied.');
    if (sha !== undefined && sha !== current?.sha) throw new HttpError(409, `${path} does not match ${sha}`);
    const actor = actorOf(context, request.principal);
    const commit = await commitFiles(context, repo, actor, {
      branch,
      message,
      files: { [path]: Buffer.from(encoded, 'base64') },
      ...(head ? { expectedHead: head } : {}),
      // GitHub signs what an App commits through the API ("Verified").
      verified: request.principal?.kind === 'installation',
    });
    const [written] = await repo.git.lsTree(commit.sha, { path });
    const full = fullName(repo);
    return json(current ? 200 : 201, {
      content: contentShape(urls, full, branch, {
        path,
        sha: written?.sha ?? '',
        size: written?.size ?? 0,
        type: 'file',
      }),
      commit: gitCommitShape(
        urls,
        full,
        await repo.git.readCommit(commit.sha),
        context.verifiedCommits.has(commit.sha),
      ),
    });
  });
  router.add('GET', '/repos/:owner/:repo/contents', handler);
  router.add('GET', '/repos/:owner/:repo/contents/', handler);
  router.add('GET', '/repos/:owner/:repo/contents/*path', handler);
}
