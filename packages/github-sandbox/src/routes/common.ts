import type { SandboxContext } from '../context.js';
import { HttpError, notFound, type ApiRequest } from '../http.js';
import type { Permission, SandboxPull, SandboxRepo, SandboxUser } from '../model.js';

/** What a user may do in a repository: owner and organization repos' creator are admins. */
export function permissionOf(repo: SandboxRepo, user: SandboxUser): Permission | 'none' {
  if (user.id === repo.owner.id) return 'admin';
  return repo.collaborators.get(user.login.toLowerCase()) ?? 'none';
}

const CAN_WRITE: (Permission | 'none')[] = ['admin', 'maintain', 'write'];

/**
 * Finds `:owner/:repo` and checks the caller may use it: an installation token must cover the
 * repository (404 otherwise, as GitHub hides what a token cannot see), a user needs push
 * access to write, and the App's JWT only opens `/app` endpoints.
 */
export function requireRepo(context: SandboxContext, request: ApiRequest, access: 'read' | 'write'): SandboxRepo {
  const repo = context.state.repo(request.params.owner ?? '', request.params.repo ?? '');
  const principal = request.principal;
  if (!principal) throw new HttpError(401, 'Requires authentication');
  if (principal.kind === 'app') {
    throw new HttpError(
      403,
      'This endpoint needs an installation access token; the App JWT only works for /app endpoints and installation lookups.',
    );
  }
  if (!repo) throw movedOrNotFound(context, request);
  if (principal.kind === 'installation') {
    const token = context.state.installationTokens.get(principal.token);
    const covered =
      principal.installation.repositoryIds.has(repo.id) && (!token?.repositoryIds || token.repositoryIds.has(repo.id));
    if (!covered) throw notFound();
    return repo;
  }
  // A repository that is not public does not exist for a user without a permission on it.
  if (repo.visibility !== 'public' && permissionOf(repo, principal.user) === 'none') throw notFound();
  if (access === 'write' && !CAN_WRITE.includes(permissionOf(repo, principal.user))) {
    throw new HttpError(403, `Must have push access to ${repo.owner.login}/${repo.name}.`);
  }
  return repo;
}

/**
 * A renamed repository's former name answers with a redirect to `/repositories/{id}`: 301 for
 * GET, 307 for other methods (the rename-repository recording of @octokit/fixtures).
 */
function movedOrNotFound(context: SandboxContext, request: ApiRequest): HttpError {
  const former = `${request.params.owner ?? ''}/${request.params.repo ?? ''}`.toLowerCase();
  const id = context.state.formerNames.get(former);
  if (id === undefined || !context.state.repoById(id)) return notFound();
  const rest = request.url.pathname.replace(/^\/api\/v3\/repos\/[^/]+\/[^/]+/, '');
  const url = context.urls.api(`/repositories/${id}${rest}`) + request.url.search;
  const status = request.method === 'GET' || request.method === 'HEAD' ? 301 : 307;
  return new HttpError(
    status,
    'Moved Permanently',
    {
      url,
      documentation_url: 'https://docs.github.com/rest/guides/best-practices-for-using-the-rest-api#follow-redirects',
    },
    { location: url },
  );
}

/** Only the App (JWT) may call `/app/...` endpoints. */
export function requireApp(request: ApiRequest): void {
  if (!request.principal) throw new HttpError(401, 'Requires authentication');
  if (request.principal.kind !== 'app') throw new HttpError(401, 'A JSON web token could not be decoded');
}

export function requirePull(
  context: SandboxContext,
  repo: SandboxRepo,
  request: ApiRequest,
  param = 'pull_number',
): SandboxPull {
  const pull = context.state.pull(repo, Number(request.params[param]));
  if (!pull) throw notFound();
  return pull;
}

/** Reads a boolean or string list field of a JSON body. */
export function listField(body: Record<string, unknown>, name: string): string[] {
  const value = body[name];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    throw new HttpError(422, `Invalid request.\n\nFor '${name}', ${JSON.stringify(value)} is not an array of strings.`);
  }
  return value as string[];
}

/** What an App installation may do per permission (`contents`, `statuses`, `administration`, …). */
const LEVELS = { read: 1, write: 2 } as const;

/**
 * An installation needs the App permission `name` at `level`; GitHub answers 403 "Resource not
 * accessible by integration" otherwise. Users are judged by their repository role elsewhere.
 */
export function requireAppPermission(
  context: SandboxContext,
  request: ApiRequest,
  name: string,
  level: 'read' | 'write',
): void {
  if (request.principal?.kind !== 'installation') return;
  const granted = context.state.requireApp().permissions[name];
  const have = granted === 'write' ? 2 : granted === 'read' ? 1 : 0;
  if (have < LEVELS[level]) throw new HttpError(403, 'Resource not accessible by integration');
}

/**
 * Settings and protection need admin: an installation needs the `administration` permission, a
 * user the admin role (GitHub hides the endpoint from people who cannot push, and says what is
 * missing to those who can).
 */
export function requireAdmin(
  context: SandboxContext,
  request: ApiRequest,
  repo: SandboxRepo,
  level: 'read' | 'write',
): void {
  requireAppPermission(context, request, 'administration', level);
  const principal = request.principal;
  if (principal?.kind !== 'user') return;
  const permission = permissionOf(repo, principal.user);
  if (permission === 'admin') return;
  if (CAN_WRITE.includes(permission)) throw new HttpError(403, 'Must have admin rights to Repository.');
  throw notFound();
}
