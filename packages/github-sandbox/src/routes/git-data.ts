import { actorOf, fullName, type SandboxContext } from '../context.js';
import { bodyOf, field, json, notFound, validationFailed, type ApiRequest, type Router } from '../http.js';
import type { GitIdentity } from '../git.js';
import { createRef, deleteRef, updateRef } from '../refs.js';
import { gitCommitShape, refShape, treeShape } from '../shapes/git.js';
import { nodeId } from '../urls.js';
import { buildTree, InvalidTreePathError, type TreeChange } from '../trees.js';
import { requireRepo } from './common.js';

const MODES: Record<string, TreeChange['type']> = {
  '100644': 'blob',
  '100755': 'blob',
  '120000': 'blob',
  '040000': 'tree',
  '160000': 'commit',
};

function identity(value: unknown, fallback: GitIdentity): GitIdentity {
  if (!value || typeof value !== 'object') return fallback;
  const person = value as { name?: unknown; email?: unknown; date?: unknown };
  if (typeof person.name !== 'string' || typeof person.email !== 'string') {
    throw validationFailed([], 'Invalid request.\n\n"name" and "email" are required for author and committer.');
  }
  return {
    name: person.name,
    email: person.email,
    date: typeof person.date === 'string' ? new Date(person.date) : fallback.date,
  };
}

/** The Git Data API: blobs, trees (with `base_tree`), commits and refs, all written to real git. */
export function registerGitDataRoutes(router: Router, context: SandboxContext): void {
  const { urls } = context;

  router.add('POST', '/repos/:owner/:repo/git/blobs', async (request) => {
    const repo = requireRepo(context, request, 'write');
    const content = field(request.body, 'content', { required: true });
    const encoding = field(request.body, 'encoding') ?? 'utf-8';
    if (!['utf-8', 'utf8', 'base64'].includes(encoding))
      throw validationFailed([], `encoding must be "utf-8" or "base64", not "${encoding}"`);
    const sha = await repo.git.writeBlob(Buffer.from(content, encoding === 'base64' ? 'base64' : 'utf8'));
    return json(201, { url: urls.repoApi(fullName(repo), `/git/blobs/${sha}`), sha });
  });

  router.add('GET', '/repos/:owner/:repo/git/blobs/:file_sha', async (request) => {
    const repo = requireRepo(context, request, 'read');
    const sha = request.params.file_sha ?? '';
    if ((await repo.git.objectType(sha)) !== 'blob') throw notFound();
    const content = await repo.git.readBlob(sha);
    return json(200, {
      sha,
      node_id: nodeId('Blob', sha),
      size: content.length,
      url: urls.repoApi(fullName(repo), `/git/blobs/${sha}`),
      content: content.toString('base64').replace(/(.{60})/g, '$1\n'),
      encoding: 'base64',
    });
  });

  router.add('POST', '/repos/:owner/:repo/git/trees', async (request) => {
    const repo = requireRepo(context, request, 'write');
    const body = bodyOf(request);
    const baseTreeSha = field(body, 'base_tree');
    const baseTree = baseTreeSha ? await repo.git.resolveTree(baseTreeSha) : null;
    if (baseTreeSha && !baseTree) throw validationFailed([], 'base_tree is not a valid tree oid');
    if (!Array.isArray(body.tree)) throw validationFailed([], 'Invalid request.\n\n"tree" wasn\'t supplied.');
    const changes: TreeChange[] = [];
    for (const item of body.tree as Record<string, unknown>[]) {
      const path = String(item.path ?? '');
      const mode = String(item.mode ?? '');
      const type = MODES[mode];
      if (!type) throw validationFailed([], `tree.mode "${mode}" is not a valid mode for "${path}"`);
      let sha = item.sha === null ? null : typeof item.sha === 'string' ? item.sha : undefined;
      if (typeof item.content === 'string') sha = await repo.git.writeBlob(Buffer.from(item.content, 'utf8'));
      if (sha === undefined) throw validationFailed([], `Must supply tree.sha or tree.content for "${path}"`);
      if (sha !== null && type !== 'commit' && (await repo.git.objectType(sha)) !== type) {
        throw validationFailed([], `tree.sha ${sha} is not a valid ${type}`);
      }
      changes.push({ path, mode, type, sha });
    }
    try {
      const sha = await buildTree(repo.git, baseTree, changes);
      return json(201, treeShape(urls, fullName(repo), sha, await repo.git.lsTree(sha)));
    } catch (error) {
      if (error instanceof InvalidTreePathError) throw validationFailed([], error.message);
      throw error;
    }
  });

  router.add('GET', '/repos/:owner/:repo/git/trees/*tree_sha', async (request) => {
    const repo = requireRepo(context, request, 'read');
    const tree = await repo.git.resolveTree(request.params.tree_sha ?? '');
    if (!tree) throw notFound();
    const recursive = request.url.searchParams.has('recursive');
    return json(200, treeShape(urls, fullName(repo), tree, await repo.git.lsTree(tree, { recursive })));
  });

  router.add('POST', '/repos/:owner/:repo/git/commits', async (request) => {
    const repo = requireRepo(context, request, 'write');
    const body = bodyOf(request);
    const message = field(body, 'message', { required: true });
    const tree = field(body, 'tree', { required: true });
    if ((await repo.git.objectType(tree)) !== 'tree') throw validationFailed([], 'Tree SHA does not exist');
    const parents = Array.isArray(body.parents) ? body.parents.map(String) : [];
    for (const parent of parents) {
      if ((await repo.git.objectType(parent)) !== 'commit')
        throw validationFailed([], 'Parent SHA does not exist or is not a commit object');
    }
    const actor = actorOf(context, request.principal);
    const fallback = { name: actor.login, email: actor.email, date: context.state.clock() };
    const author = identity(body.author, fallback);
    const committer = identity(body.committer, body.author ? author : fallback);
    const sha = await repo.git.commitTree(tree, parents, message, author, committer);
    // GitHub signs App commits made with its default identity ("Verified").
    const verified = request.principal?.kind === 'installation' && !body.author && !body.committer;
    if (verified) context.verifiedCommits.add(sha);
    return json(
      201,
      gitCommitShape(urls, fullName(repo), await repo.git.readCommit(sha), context.verifiedCommits.has(sha)),
    );
  });

  router.add('GET', '/repos/:owner/:repo/git/commits/:commit_sha', async (request) => {
    const repo = requireRepo(context, request, 'read');
    const sha = request.params.commit_sha ?? '';
    if ((await repo.git.objectType(sha)) !== 'commit') throw notFound();
    return json(
      200,
      gitCommitShape(urls, fullName(repo), await repo.git.readCommit(sha), context.verifiedCommits.has(sha)),
    );
  });

  registerRefRoutes(router, context);
}

function registerRefRoutes(router: Router, context: SandboxContext): void {
  const { urls } = context;
  const describe = async (request: ApiRequest, ref: string) => {
    const repo = requireRepo(context, request, 'read');
    const sha = await repo.git.readRef(ref);
    if (!sha) throw notFound();
    return refShape(urls, fullName(repo), ref, sha, (await repo.git.objectType(sha)) ?? 'commit');
  };

  router.add('GET', '/repos/:owner/:repo/git/ref/*ref', async (request) =>
    json(200, await describe(request, `refs/${request.params.ref}`)),
  );

  const matchingRefs = async (request: ApiRequest) => {
    const repo = requireRepo(context, request, 'read');
    const refs = await repo.git.listRefs('refs/');
    const prefix = `refs/${request.params.ref ?? ''}`;
    return json(
      200,
      await Promise.all(
        refs
          .filter((r) => r.ref.startsWith(prefix) && !r.ref.startsWith('refs/pull/'))
          .map(async (r) =>
            refShape(urls, fullName(repo), r.ref, r.sha, (await repo.git.objectType(r.sha)) ?? 'commit'),
          ),
      ),
    );
  };
  router.add('GET', '/repos/:owner/:repo/git/matching-refs/*ref', matchingRefs);
  // Every ref: GitHub still answers it (the git-refs recording of @octokit/fixtures), though its
  // description now only documents matching-refs, of which this is the empty prefix.
  router.add('GET', '/repos/:owner/:repo/git/refs', matchingRefs);
  router.add('GET', '/repos/:owner/:repo/git/refs/', matchingRefs);

  router.add('POST', '/repos/:owner/:repo/git/refs', async (request) => {
    const repo = requireRepo(context, request, 'write');
    const ref = field(request.body, 'ref', { required: true });
    const sha = field(request.body, 'sha', { required: true });
    await createRef(context, repo, ref, sha, actorOf(context, request.principal));
    return json(201, await describe(request, ref));
  });

  router.add('PATCH', '/repos/:owner/:repo/git/refs/*ref', async (request) => {
    const repo = requireRepo(context, request, 'write');
    const sha = field(request.body, 'sha', { required: true });
    const force = bodyOf(request).force === true;
    const ref = `refs/${request.params.ref}`;
    await updateRef(context, repo, ref, sha, { force, actor: actorOf(context, request.principal) });
    return json(200, await describe(request, ref));
  });

  router.add('DELETE', '/repos/:owner/:repo/git/refs/*ref', async (request) => {
    const repo = requireRepo(context, request, 'write');
    await deleteRef(context, repo, `refs/${request.params.ref}`, actorOf(context, request.principal));
    return { status: 204 };
  });
}
