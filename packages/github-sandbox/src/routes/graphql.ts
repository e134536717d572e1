import { actorOf, fullName, type SandboxContext } from '../context.js';
import { bodyOf, json, type ApiRequest, type ApiResponse, type Router } from '../http.js';
import type { SandboxRepo } from '../model.js';
import { commitFiles, StaleBranchError, type FileMap } from '../repositories.js';
import { permissionOf } from './common.js';

interface CommitOnBranchInput {
  branch?: { repositoryNameWithOwner?: string; branchName?: string };
  message?: { headline?: string; body?: string };
  fileChanges?: { additions?: { path: string; contents: string }[]; deletions?: { path: string }[] };
  expectedHeadOid?: string;
}

const UNSUPPORTED =
  "The sandbox's GraphQL endpoint implements only the createCommitOnBranch mutation, with its input passed as a variable.";

function graphqlError(type: string | undefined, message: string): ApiResponse {
  return json(200, {
    data: { createCommitOnBranch: null },
    errors: [{ ...(type ? { type } : {}), path: ['createCommitOnBranch'], message }],
  });
}

/**
 * `POST /api/graphql`, GitHub Enterprise style (octokit derives it from the `/api/v3` base URL).
 * Only `createCommitOnBranch` is implemented: one commit from base64 file additions and
 * deletions, compare-and-swap on `expectedHeadOid` (`STALE_DATA` otherwise), signed by GitHub
 * for Apps. The answer carries the usual `commit` and `ref` fields whatever the selection set.
 */
export function registerGraphqlRoutes(router: Router, context: SandboxContext): void {
  router.add('POST', '/api/graphql', async (request: ApiRequest) => {
    if (!request.principal)
      return json(401, {
        message: 'This endpoint requires you to be authenticated.',
        documentation_url: 'https://docs.github.com/graphql',
      });
    const body = bodyOf(request);
    const variables = (body.variables ?? {}) as Record<string, unknown>;
    const input = Object.values(variables).find(
      (value): value is CommitOnBranchInput => !!value && typeof value === 'object' && 'branch' in value,
    );
    if (typeof body.query !== 'string' || !body.query.includes('createCommitOnBranch') || !input) {
      return json(200, { errors: [{ message: UNSUPPORTED }] });
    }
    const [owner = '', name = ''] = (input.branch?.repositoryNameWithOwner ?? '').split('/');
    const repo = context.state.repo(owner, name);
    if (!repo || !canWrite(context, request, repo)) {
      return graphqlError(
        'NOT_FOUND',
        `Could not resolve to a Repository with the name '${input.branch?.repositoryNameWithOwner ?? ''}'.`,
      );
    }
    const branch = input.branch?.branchName ?? '';
    if (!(await repo.git.readRef(`refs/heads/${branch}`)))
      return graphqlError('NOT_FOUND', `A ref named "refs/heads/${branch}" does not exist.`);
    if (!input.expectedHeadOid)
      return graphqlError(
        undefined,
        'Variable $input of type CreateCommitOnBranchInput! was provided invalid value for expectedHeadOid (Expected value to not be null)',
      );
    const files: FileMap = {};
    for (const addition of input.fileChanges?.additions ?? [])
      files[addition.path] = Buffer.from(addition.contents, 'base64');
    for (const deletion of input.fileChanges?.deletions ?? []) files[deletion.path] = null;
    const message = [input.message?.headline ?? '', input.message?.body].filter(Boolean).join('\n\n');
    try {
      const { sha } = await commitFiles(context, repo, actorOf(context, request.principal), {
        branch,
        message,
        files,
        expectedHead: input.expectedHeadOid,
        verified: request.principal.kind === 'installation',
      });
      const url = context.urls.repoHtml(fullName(repo), `/commit/${sha}`);
      return json(200, {
        data: {
          createCommitOnBranch: {
            clientMutationId: null,
            commit: { oid: sha, abbreviatedOid: sha.slice(0, 7), url, message },
            ref: { name: `refs/heads/${branch}`, target: { oid: sha } },
          },
        },
      });
    } catch (error) {
      if (error instanceof StaleBranchError) return graphqlError('STALE_DATA', error.message);
      throw error;
    }
  });
}

function canWrite(context: SandboxContext, request: ApiRequest, repo: SandboxRepo): boolean {
  const principal = request.principal;
  if (principal?.kind === 'installation') {
    const token = context.state.installationTokens.get(principal.token);
    return (
      principal.installation.repositoryIds.has(repo.id) && (!token?.repositoryIds || token.repositoryIds.has(repo.id))
    );
  }
  if (principal?.kind === 'user') return ['admin', 'maintain', 'write'].includes(permissionOf(repo, principal.user));
  return false;
}
