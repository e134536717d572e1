import { fullName, type SandboxContext } from '../context.js';
import { emitDeployment, emitDeploymentStatus } from '../events.js';
import { bodyOf, field, HttpError, json, notFound, paginate, validationFailed, type Router } from '../http.js';
import type {
  DeploymentState,
  Principal,
  SandboxDeployment,
  SandboxDeploymentStatus,
  SandboxRepo,
  SandboxUser,
} from '../model.js';
import { appShape, userShape } from '../shapes/users.js';
import { isoTime, nodeId } from '../urls.js';
import { requireAppPermission, requireRepo } from './common.js';

const DEPLOYMENT_STATES: DeploymentState[] = [
  'error',
  'failure',
  'inactive',
  'in_progress',
  'queued',
  'pending',
  'success',
];

function invalid(message: string): HttpError {
  return validationFailed([], `Invalid request.\n\n${message}`);
}

function flag(body: Record<string, unknown>, name: string): boolean | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalid(`For '${name}', ${JSON.stringify(value)} is not a boolean.`);
  return value;
}

/**
 * Deployments and their statuses (`/repos/{owner}/{repo}/deployments…`), as GitHub's REST API
 * serves them: the ref is resolved to a commit when the deployment is created; `required_contexts`
 * (default: every context on that commit) must all be `success` or GitHub answers 409; a status
 * with `auto_inactive` (the default) marks earlier successful deployments of the same environment
 * inactive unless they are transient or production ones; `log_url` also sets `target_url`. Each
 * creation sends the `deployment` or `deployment_status` webhook.
 */
export function registerDeploymentRoutes(router: Router, context: SandboxContext): void {
  const { state, urls } = context;
  const deploymentUrl = (repo: SandboxRepo, id: number) => urls.repoApi(fullName(repo), `/deployments/${id}`);
  const creatorOf = (principal: Principal | null): SandboxUser =>
    principal?.kind === 'user' ? principal.user : state.requireApp().bot;
  const statusesOf = (deployment: SandboxDeployment): SandboxDeploymentStatus[] =>
    [...state.deploymentStatuses.values()].filter((status) => status.deploymentId === deployment.id);

  const deploymentShape = (repo: SandboxRepo, deployment: SandboxDeployment) => ({
    url: deploymentUrl(repo, deployment.id),
    id: deployment.id,
    node_id: nodeId('Deployment', deployment.id),
    sha: deployment.sha,
    ref: deployment.ref,
    task: deployment.task,
    payload: deployment.payload,
    original_environment: deployment.originalEnvironment,
    environment: deployment.environment,
    description: deployment.description,
    creator: userShape(urls, deployment.creator),
    created_at: isoTime(deployment.createdAt),
    updated_at: isoTime(deployment.updatedAt),
    statuses_url: `${deploymentUrl(repo, deployment.id)}/statuses`,
    repository_url: urls.repoApi(fullName(repo), ''),
    transient_environment: deployment.transient,
    production_environment: deployment.production,
    performed_via_github_app: deployment.viaApp ? appShape(urls, state.requireApp(), 'webhook') : null,
  });

  const statusShape = (repo: SandboxRepo, deployment: SandboxDeployment, status: SandboxDeploymentStatus) => ({
    url: `${deploymentUrl(repo, deployment.id)}/statuses/${status.id}`,
    id: status.id,
    node_id: nodeId('DeploymentStatus', status.id),
    state: status.state,
    creator: userShape(urls, status.creator),
    description: status.description,
    environment: status.environment,
    target_url: status.targetUrl,
    created_at: isoTime(status.createdAt),
    updated_at: isoTime(status.createdAt),
    deployment_url: deploymentUrl(repo, deployment.id),
    repository_url: urls.repoApi(fullName(repo), ''),
    // Given no URL, these two are left out (both are optional in GitHub's description).
    ...(status.environmentUrl ? { environment_url: status.environmentUrl } : {}),
    ...(status.logUrl ? { log_url: status.logUrl } : {}),
    performed_via_github_app: status.viaApp ? appShape(urls, state.requireApp(), 'webhook') : null,
  });

  const requireDeployment = (repo: SandboxRepo, id: string | undefined): SandboxDeployment => {
    const deployment = state.deployments.get(Number(id));
    if (!deployment || deployment.repoId !== repo.id) throw notFound();
    return deployment;
  };

  const addStatus = (
    repo: SandboxRepo,
    deployment: SandboxDeployment,
    status: Omit<SandboxDeploymentStatus, 'id' | 'deploymentId' | 'createdAt'>,
  ): SandboxDeploymentStatus => {
    const created: SandboxDeploymentStatus = {
      ...status,
      id: state.nextId(),
      deploymentId: deployment.id,
      createdAt: state.clock(),
    };
    state.deploymentStatuses.set(created.id, created);
    deployment.updatedAt = created.createdAt;
    // The `deployment_status` webhook knows no `inactive` state (@octokit/webhooks-schemas):
    // marking a deployment inactive sends nothing.
    if (created.state !== 'inactive')
      emitDeploymentStatus(
        context,
        repo,
        deploymentShape(repo, deployment),
        statusShape(repo, deployment, created),
        created.creator,
      );
    return created;
  };

  router.add('POST', '/repos/:owner/:repo/deployments', async (request) => {
    const repo = requireRepo(context, request, 'write');
    requireAppPermission(context, request, 'deployments', 'write');
    const body = bodyOf(request);
    const ref = field(body, 'ref', { required: true });
    const sha = await repo.git.resolveCommit(ref);
    if (!sha) throw validationFailed([], `No ref found for: ${ref}`);
    const environment = field(body, 'environment') ?? 'production';
    const autoMerge = flag(body, 'auto_merge') ?? true;
    if (autoMerge && ref !== sha && (await repo.git.readRef(`refs/heads/${ref}`))) {
      const base = await repo.git.readRef(`refs/heads/${repo.defaultBranch}`);
      if (base && base !== sha && !(await repo.git.isAncestor(base, sha)))
        throw new HttpError(
          409,
          `The sandbox does not merge ${repo.defaultBranch} into ${ref} on deployment (GitHub would); pass auto_merge: false or deploy a ref that contains ${repo.defaultBranch}.`,
        );
    }
    const latest = [...state.statuses.values()]
      .filter((status) => status.repoId === repo.id && status.sha === sha)
      .sort((a, b) => b.id - a.id)
      .filter((status, index, all) => all.findIndex((other) => other.context === status.context) === index);
    let required: string[];
    if (body.required_contexts === undefined || body.required_contexts === null)
      required = latest.map((status) => status.context);
    else if (
      Array.isArray(body.required_contexts) &&
      body.required_contexts.every((item: unknown) => typeof item === 'string')
    )
      required = body.required_contexts as string[];
    else
      throw invalid(`For 'required_contexts', ${JSON.stringify(body.required_contexts)} is not an array of strings.`);
    const failing = required.filter((name) => latest.find((status) => status.context === name)?.state !== 'success');
    if (failing.length > 0)
      throw new HttpError(409, `Conflict: Commit status checks failed for ${ref}.`, {
        errors: failing.map((contextName) => ({
          contexts: latest
            .filter((status) => status.context === contextName)
            .map((status) => ({ context: status.context, state: status.state })),
          resource: 'Deployment',
          field: 'required_contexts',
        })),
      });
    // GitHub keeps the payload as a JSON object: none is `{}`, a string is read as JSON.
    let payload: unknown = body.payload ?? {};
    if (typeof payload === 'string') {
      try {
        payload = payload === '' ? {} : (JSON.parse(payload) as unknown);
      } catch {
        throw invalid(`For 'payload', the string is not JSON.`);
      }
    }
    if (!payload || typeof payload !== 'object' || Array.isArray(payload))
      throw invalid(`For 'payload', ${JSON.stringify(body.payload)} is not a JSON object.`);
    const now = state.clock();
    const deployment: SandboxDeployment = {
      id: state.nextId(),
      repoId: repo.id,
      sha,
      ref,
      task: field(body, 'task') ?? 'deploy',
      payload: payload as Record<string, unknown>,
      environment,
      originalEnvironment: environment,
      description: field(body, 'description') ?? '',
      transient: flag(body, 'transient_environment') ?? false,
      production: flag(body, 'production_environment') ?? environment === 'production',
      creator: creatorOf(request.principal),
      viaApp: request.principal?.kind === 'installation',
      createdAt: now,
      updatedAt: now,
    };
    state.deployments.set(deployment.id, deployment);
    const shape = deploymentShape(repo, deployment);
    emitDeployment(context, repo, shape, deployment.creator);
    return json(201, shape);
  });

  router.add('GET', '/repos/:owner/:repo/deployments', (request) => {
    const repo = requireRepo(context, request, 'read');
    requireAppPermission(context, request, 'deployments', 'read');
    const query = request.url.searchParams;
    const filters: Array<[string, (deployment: SandboxDeployment) => string]> = [
      ['sha', (deployment) => deployment.sha],
      ['ref', (deployment) => deployment.ref],
      ['task', (deployment) => deployment.task],
      ['environment', (deployment) => deployment.environment],
    ];
    const all = [...state.deployments.values()]
      .filter((deployment) => deployment.repoId === repo.id)
      .filter((deployment) =>
        filters.every(([name, value]) => {
          const wanted = query.get(name);
          return wanted === null || wanted === 'none' || value(deployment) === wanted;
        }),
      )
      .sort((a, b) => b.id - a.id);
    const page = paginate(request, all);
    return json(
      200,
      page.items.map((deployment) => deploymentShape(repo, deployment)),
      page.headers,
    );
  });

  router.add('GET', '/repos/:owner/:repo/deployments/:deployment_id', (request) => {
    const repo = requireRepo(context, request, 'read');
    requireAppPermission(context, request, 'deployments', 'read');
    return json(200, deploymentShape(repo, requireDeployment(repo, request.params.deployment_id)));
  });

  router.add('POST', '/repos/:owner/:repo/deployments/:deployment_id/statuses', (request) => {
    const repo = requireRepo(context, request, 'write');
    requireAppPermission(context, request, 'deployments', 'write');
    const deployment = requireDeployment(repo, request.params.deployment_id);
    const body = bodyOf(request);
    const stateValue = field(body, 'state', { required: true });
    if (!DEPLOYMENT_STATES.includes(stateValue as DeploymentState))
      throw invalid(`For 'state', "${stateValue}" is not one of ${DEPLOYMENT_STATES.join(', ')}.`);
    const description = field(body, 'description') ?? '';
    if (description.length > 140)
      throw validationFailed(
        [
          {
            resource: 'DeploymentStatus',
            field: 'description',
            code: 'custom',
            message: 'description is too long (maximum is 140 characters)',
          },
        ],
        'Validation Failed',
      );
    const logUrl = field(body, 'log_url') ?? '';
    const previous = statusesOf(deployment).at(-1);
    const environment = field(body, 'environment') ?? previous?.environment ?? deployment.environment;
    deployment.environment = environment;
    const creator = creatorOf(request.principal);
    const viaApp = request.principal?.kind === 'installation';
    const status = addStatus(repo, deployment, {
      state: stateValue as DeploymentState,
      description,
      environment,
      logUrl,
      targetUrl: logUrl || (field(body, 'target_url') ?? ''),
      environmentUrl: field(body, 'environment_url') ?? '',
      creator,
      viaApp,
    });
    if (status.state === 'success' && (flag(body, 'auto_inactive') ?? true)) {
      for (const other of state.deployments.values()) {
        if (other.id === deployment.id || other.repoId !== repo.id || other.environment !== environment) continue;
        if (other.transient || other.production || other.id > deployment.id) continue;
        const last = statusesOf(other).at(-1);
        if (last?.state !== 'success') continue;
        addStatus(repo, other, {
          state: 'inactive',
          description: '',
          environment,
          logUrl: '',
          targetUrl: '',
          environmentUrl: '',
          creator,
          viaApp,
        });
      }
    }
    return json(201, statusShape(repo, deployment, status));
  });

  router.add('GET', '/repos/:owner/:repo/deployments/:deployment_id/statuses', (request) => {
    const repo = requireRepo(context, request, 'read');
    requireAppPermission(context, request, 'deployments', 'read');
    const deployment = requireDeployment(repo, request.params.deployment_id);
    const page = paginate(request, statusesOf(deployment).reverse());
    return json(
      200,
      page.items.map((status) => statusShape(repo, deployment, status)),
      page.headers,
    );
  });

  router.add('GET', '/repos/:owner/:repo/deployments/:deployment_id/statuses/:status_id', (request) => {
    const repo = requireRepo(context, request, 'read');
    requireAppPermission(context, request, 'deployments', 'read');
    const deployment = requireDeployment(repo, request.params.deployment_id);
    const status = state.deploymentStatuses.get(Number(request.params.status_id));
    if (!status || status.deploymentId !== deployment.id) throw notFound();
    return json(200, statusShape(repo, deployment, status));
  });
}
