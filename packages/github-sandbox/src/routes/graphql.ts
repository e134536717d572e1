import { pinIssue } from './pins.js';
import { AutoMergeRefused, disableAutoMerge, enableAutoMerge } from '../auto-merge.js';
import { actorOf, fullName, type SandboxContext } from '../context.js';
import { bodyOf, json, type ApiRequest, type ApiResponse, type Router } from '../http.js';
import type { SandboxPull, SandboxRepo } from '../model.js';
import { commitFiles, StaleBranchError, type FileMap } from '../repositories.js';
import { isoTime, nodeId } from '../urls.js';
import { permissionOf } from './common.js';

interface CommitOnBranchInput {
  branch?: { repositoryNameWithOwner?: string; branchName?: string };
  message?: { headline?: string; body?: string };
  fileChanges?: { additions?: { path: string; contents: string }[]; deletions?: { path: string }[] };
  expectedHeadOid?: string;
}

interface AutoMergeInput {
  pullRequestId?: string;
  mergeMethod?: string;
  expectedHeadOid?: string;
  commitHeadline?: string;
  commitBody?: string;
}

const UNSUPPORTED =
  "The sandbox's GraphQL endpoint implements only the createCommitOnBranch, enablePullRequestAutoMerge, disablePullRequestAutoMerge and pinIssue mutations, with their input passed as a variable.";

type Mutation = 'createCommitOnBranch' | 'enablePullRequestAutoMerge' | 'disablePullRequestAutoMerge' | 'pinIssue';

function graphqlErrorOf(mutation: Mutation, type: string | undefined, message: string): ApiResponse {
  return json(200, {
    data: { [mutation]: null },
    errors: [{ ...(type ? { type } : {}), path: [mutation], message }],
  });
}

/** The first field of a `mutation` operation (`mutation ($input: …) { name(input: $input) { … } }`). */
function mutationOf(query: unknown): string | null {
  if (typeof query !== 'string') return null;
  return /^\s*mutation\b[^{]*\{\s*(?:\w+\s*:\s*)?(\w+)/.exec(query)?.[1] ?? null;
}

/**
 * `POST /api/graphql`, GitHub Enterprise style (octokit derives it from the `/api/v3` base URL).
 * Two mutations are implemented, each with its input passed as a variable; anything else is a
 * GraphQL error. The answers carry the usual fields whatever the selection set.
 * - `createCommitOnBranch`: one commit from base64 file additions and deletions,
 *   compare-and-swap on `expectedHeadOid` (`STALE_DATA` otherwise), signed by GitHub for Apps.
 * - `enablePullRequestAutoMerge`, `disablePullRequestAutoMerge`: native auto-merge
 *   (`auto-merge.ts`), refused with GitHub's `UNPROCESSABLE` messages.
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
    const objects = Object.values(variables).filter(
      (value): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value),
    );
    const mutation = mutationOf(body.query);
    if (mutation === 'enablePullRequestAutoMerge' || mutation === 'disablePullRequestAutoMerge') {
      const input = objects.find((value) => 'pullRequestId' in value);
      if (input) return autoMerge(context, request, mutation, input as AutoMergeInput);
    }
    if (mutation === 'pinIssue') {
      const pin = objects.find((value) => 'issueId' in value);
      if (pin) {
        const pinned = pinIssue(context, String(pin.issueId));
        return pinned.ok
          ? json(200, { data: { pinIssue: { issue: { id: pinned.id } } } })
          : graphqlErrorOf('pinIssue', 'NOT_FOUND', pinned.message);
      }
    }
    const input = objects.find((value) => 'branch' in value) as CommitOnBranchInput | undefined;
    if (mutation !== 'createCommitOnBranch' || !input) {
      return json(200, { errors: [{ message: UNSUPPORTED }] });
    }
    const graphqlError = (type: string | undefined, message: string) =>
      graphqlErrorOf('createCommitOnBranch', type, message);
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

const MERGE_METHODS: Record<string, 'merge' | 'squash' | 'rebase'> = {
  MERGE: 'merge',
  SQUASH: 'squash',
  REBASE: 'rebase',
};

/** Finds a pull request by its `node_id` among the repositories the caller may see. */
function pullByNodeId(context: SandboxContext, id: string): { repo: SandboxRepo; pull: SandboxPull } | null {
  for (const repo of context.state.repos.values()) {
    const pull = context.state.pullsOf(repo).find((candidate) => nodeId('PullRequest', candidate.id) === id);
    if (pull) return { repo, pull };
  }
  return null;
}

async function autoMerge(
  context: SandboxContext,
  request: ApiRequest,
  mutation: 'enablePullRequestAutoMerge' | 'disablePullRequestAutoMerge',
  input: AutoMergeInput,
): Promise<ApiResponse> {
  const fail = (type: string | undefined, message: string) => graphqlErrorOf(mutation, type, message);
  const id = input.pullRequestId ?? '';
  const found = pullByNodeId(context, id);
  if (!found || !canWrite(context, request, found.repo)) {
    return fail('NOT_FOUND', `Could not resolve to a node with the global id of '${id}'`);
  }
  const actor = actorOf(context, request.principal);
  if (mutation === 'disablePullRequestAutoMerge') {
    try {
      await disableAutoMerge(context, found.repo, found.pull, actor);
    } catch (error) {
      if (error instanceof AutoMergeRefused) return fail('UNPROCESSABLE', error.message);
      throw error;
    }
    return json(200, {
      data: {
        disablePullRequestAutoMerge: {
          clientMutationId: null,
          pullRequest: { id: nodeId('PullRequest', found.pull.id), number: found.pull.number, autoMergeRequest: null },
        },
      },
    });
  }
  const method = input.mergeMethod === undefined ? 'merge' : MERGE_METHODS[input.mergeMethod];
  if (!method) {
    return fail(
      undefined,
      `Variable $input of type EnablePullRequestAutoMergeInput! was provided invalid value for mergeMethod (Expected "${String(input.mergeMethod)}" to be one of: MERGE, SQUASH, REBASE)`,
    );
  }
  try {
    await enableAutoMerge(context, found.repo, found.pull, actor, {
      method,
      ...(input.expectedHeadOid ? { expectedHeadOid: input.expectedHeadOid } : {}),
      ...(input.commitHeadline !== undefined ? { title: input.commitHeadline } : {}),
      ...(input.commitBody !== undefined ? { body: input.commitBody } : {}),
    });
  } catch (error) {
    if (error instanceof AutoMergeRefused) return fail('UNPROCESSABLE', error.message);
    throw error;
  }
  const { pull } = found;
  const auto = pull.autoMerge;
  return json(200, {
    data: {
      enablePullRequestAutoMerge: {
        clientMutationId: null,
        pullRequest: {
          id: nodeId('PullRequest', pull.id),
          number: pull.number,
          autoMergeRequest: auto && {
            enabledAt: isoTime(auto.enabledAt),
            mergeMethod: auto.method.toUpperCase(),
            enabledBy: { login: auto.enabledBy.login },
            commitHeadline: auto.commitTitle,
            commitBody: auto.commitMessage,
          },
        },
      },
    },
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
