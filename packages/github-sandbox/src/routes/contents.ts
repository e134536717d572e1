import { fullName, type SandboxContext } from '../context.js';
import { HttpError, json, notFound, type ApiRequest, type Router } from '../http.js';
import type { TreeEntry } from '../git.js';
import { contentShape } from '../shapes/git.js';
import { requireRepo } from './common.js';

type ContentType = 'file' | 'dir' | 'symlink' | 'submodule';

function contentType(entry: TreeEntry): ContentType {
  if (entry.type === 'tree') return 'dir';
  if (entry.type === 'commit') return 'submodule';
  return entry.mode === '120000' ? 'symlink' : 'file';
}

/**
 * `GET /repos/{owner}/{repo}/contents/{path}?ref=`: a file (base64, or raw bytes with
 * `Accept: application/vnd.github.raw`), or a directory listing.
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
  router.add('GET', '/repos/:owner/:repo/contents', handler);
  router.add('GET', '/repos/:owner/:repo/contents/', handler);
  router.add('GET', '/repos/:owner/:repo/contents/*path', handler);
}
