import { settleAutoMerges } from '../auto-merge.js';
import { fullName, type SandboxContext } from '../context.js';
import { emitStatus } from '../events.js';
import { activeRulesets, protectionOf } from '../gates.js';
import {
  bodyOf,
  field,
  HttpError,
  json,
  notFound,
  paginate,
  validationFailed,
  type ApiRequest,
  type Router,
} from '../http.js';
import type {
  CommitState,
  RequiredCheck,
  SandboxCommitStatus,
  SandboxProtection,
  SandboxRepo,
  SandboxRuleset,
} from '../model.js';
import { renameRepository } from '../repositories.js';
import { repoShape } from '../shapes/repos.js';
import { userShape } from '../shapes/users.js';
import { isoTime, nodeId } from '../urls.js';
import { requireAdmin, requireAppPermission, requireRepo } from './common.js';
import { commitResource, fullRepository, resolveOrFail } from './repos.js';

const COMMIT_STATES: CommitState[] = ['error', 'failure', 'pending', 'success'];

function invalid(message: string): HttpError {
  return validationFailed([], `Invalid request.\n\n${message}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

function stringList(value: unknown, name: string): string[] {
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string'))
    throw invalid(`For '${name}', ${JSON.stringify(value)} is not an array of strings.`);
  return value as string[];
}

/** `checks: [{context, app_id?}]` (app_id -1 or omitted: any source) or the older `contexts: [name]`. */
function protectionChecks(input: Record<string, unknown>): RequiredCheck[] {
  if (input.checks !== undefined && input.checks !== null) {
    if (!Array.isArray(input.checks)) throw invalid(`For 'checks', ${JSON.stringify(input.checks)} is not an array.`);
    return input.checks.map((item: unknown) => {
      if (!isObject(item) || typeof item.context !== 'string')
        throw invalid(`For 'items', ${JSON.stringify(item)} is not an object with a string "context".`);
      const appId = item.app_id;
      if (appId !== undefined && appId !== null && (typeof appId !== 'number' || !Number.isInteger(appId)))
        throw invalid(`For 'app_id', ${JSON.stringify(appId)} is not an integer.`);
      return { context: item.context, appId: typeof appId === 'number' && appId !== -1 ? appId : null };
    });
  }
  return stringList(input.contexts, 'contexts').map((context) => ({ context, appId: null }));
}

/** Parts of classic protection the simulator does not enforce: refused rather than silently ignored. */
const UNSIMULATED_PROTECTION = [
  'required_linear_history',
  'block_creations',
  'required_conversation_resolution',
  'lock_branch',
];

function parseProtection(body: Record<string, unknown>): SandboxProtection {
  const missing = ['required_status_checks', 'enforce_admins', 'required_pull_request_reviews', 'restrictions'].filter(
    (name) => !(name in body),
  );
  if (missing.length)
    throw invalid(
      `${missing.map((name) => `"${name}"`).join(', ')} ${missing.length === 1 ? "wasn't" : "weren't"} supplied.`,
    );
  for (const name of ['required_pull_request_reviews', 'restrictions']) {
    if (body[name] !== null)
      throw validationFailed(
        [],
        `The sandbox does not simulate ${name}: pass null (it enforces required status checks only).`,
      );
  }
  for (const name of UNSIMULATED_PROTECTION) {
    if (body[name] === true)
      throw validationFailed([], `The sandbox does not simulate ${name}: leave it out or false.`);
  }
  if (body.enforce_admins !== null && typeof body.enforce_admins !== 'boolean')
    throw invalid(`For 'enforce_admins', ${JSON.stringify(body.enforce_admins)} is not a boolean or null.`);
  const checks = body.required_status_checks;
  if (checks !== null && !isObject(checks))
    throw invalid(`For 'required_status_checks', ${JSON.stringify(checks)} is not an object or null.`);
  if (checks && typeof checks.strict !== 'boolean')
    throw invalid(`For 'strict', ${JSON.stringify(checks.strict)} is not a boolean.`);
  if (checks && checks.contexts === undefined) throw invalid('"contexts" wasn\'t supplied.');
  return {
    requiredStatusChecks: checks ? { strict: checks.strict === true, checks: protectionChecks(checks) } : null,
    enforceAdmins: body.enforce_admins === true,
  };
}

function refPatterns(value: unknown, name: string): string[] {
  if (value === undefined) return [];
  const patterns = stringList(value, name);
  for (const pattern of patterns) {
    if (pattern !== '~ALL' && pattern !== '~DEFAULT_BRANCH' && !pattern.startsWith('refs/heads/'))
      throw validationFailed(
        [],
        `Invalid target patterns: '${pattern}' (use refs/heads/<pattern>, ~DEFAULT_BRANCH or ~ALL)`,
      );
  }
  return patterns;
}

/** `POST /rulesets`: branch rulesets with `required_status_checks` rules only, no bypass actors. */
function parseRuleset(
  body: Record<string, unknown>,
  repo: SandboxRepo,
): Omit<SandboxRuleset, 'id' | 'createdAt' | 'updatedAt'> {
  const name = field(body, 'name', { required: true });
  const enforcement = field(body, 'enforcement', { required: true });
  if (!['disabled', 'active', 'evaluate'].includes(enforcement))
    throw invalid(`For 'enforcement', "${enforcement}" is not one of disabled, active, evaluate.`);
  if (enforcement === 'evaluate')
    throw validationFailed([], 'Invalid property /enforcement: evaluate is not available for repository rulesets');
  if ((field(body, 'target') ?? 'branch') !== 'branch')
    throw validationFailed([], 'The sandbox simulates branch rulesets only (target: branch).');
  if (repo.rulesets.some((ruleset) => ruleset.name === name)) throw validationFailed([], 'Name must be unique');
  if (Array.isArray(body.bypass_actors) ? body.bypass_actors.length > 0 : body.bypass_actors !== undefined)
    throw validationFailed([], 'The sandbox does not simulate bypass_actors: leave it out or empty.');
  const conditions = body.conditions;
  if (conditions !== undefined && conditions !== null && !isObject(conditions))
    throw invalid(`For 'conditions', ${JSON.stringify(conditions)} is not an object.`);
  const refName = isObject(conditions) ? conditions.ref_name : undefined;
  if (refName !== undefined && !isObject(refName))
    throw invalid(`For 'ref_name', ${JSON.stringify(refName)} is not an object.`);
  const rules = body.rules ?? [];
  if (!Array.isArray(rules)) throw invalid(`For 'rules', ${JSON.stringify(rules)} is not an array.`);
  let requiredStatusChecks: SandboxRuleset['requiredStatusChecks'] = null;
  for (const rule of rules as unknown[]) {
    if (!isObject(rule) || rule.type !== 'required_status_checks')
      throw validationFailed(
        [],
        `The sandbox simulates only required_status_checks rules, not ${JSON.stringify(isObject(rule) ? rule.type : rule)}.`,
      );
    const parameters = rule.parameters;
    if (!isObject(parameters) || !Array.isArray(parameters.required_status_checks))
      throw invalid('"required_status_checks" wasn\'t supplied.');
    if (typeof parameters.strict_required_status_checks_policy !== 'boolean')
      throw invalid('"strict_required_status_checks_policy" wasn\'t supplied.');
    const checks = parameters.required_status_checks.map((item: unknown) => {
      if (!isObject(item) || typeof item.context !== 'string')
        throw invalid(`For 'items', ${JSON.stringify(item)} is not an object with a string "context".`);
      const id = item.integration_id;
      if (id !== undefined && (typeof id !== 'number' || !Number.isInteger(id)))
        throw invalid(`For 'integration_id', ${JSON.stringify(id)} is not an integer.`);
      return { context: item.context, appId: typeof id === 'number' ? id : null };
    });
    if (requiredStatusChecks) throw validationFailed([], 'Rule type required_status_checks may appear only once.');
    requiredStatusChecks = {
      strict: parameters.strict_required_status_checks_policy,
      checks,
      doNotEnforceOnCreate: parameters.do_not_enforce_on_create === true,
    };
  }
  return {
    name,
    enforcement: enforcement as SandboxRuleset['enforcement'],
    include: refPatterns(isObject(refName) ? refName.include : undefined, 'include'),
    exclude: refPatterns(isObject(refName) ? refName.exclude : undefined, 'exclude'),
    requiredStatusChecks,
  };
}

function ruleParameters(ruleset: SandboxRuleset): Record<string, unknown> | null {
  const checks = ruleset.requiredStatusChecks;
  if (!checks) return null;
  return {
    type: 'required_status_checks',
    parameters: {
      do_not_enforce_on_create: checks.doNotEnforceOnCreate,
      required_status_checks: checks.checks.map((check) => ({
        context: check.context,
        ...(check.appId !== null ? { integration_id: check.appId } : {}),
      })),
      strict_required_status_checks_policy: checks.strict,
    },
  };
}

/**
 * Branch protection, rulesets, commit statuses and the repository's auto-merge setting: what
 * decides whether a pull request may merge (`gates.ts`), with GitHub's permission rules.
 */
export function registerGateRoutes(router: Router, context: SandboxContext): void {
  const { state, urls } = context;
  const protectionUrl = (repo: SandboxRepo, branch: string) =>
    urls.repoApi(fullName(repo), `/branches/${encodeURIComponent(branch)}/protection`);
  const requireBranch = async (repo: SandboxRepo, branch: string) => {
    if (!(await repo.git.readRef(`refs/heads/${branch}`))) throw new HttpError(404, 'Branch not found');
  };
  const statusPolicy = (repo: SandboxRepo, branch: string, checks: { strict: boolean; checks: RequiredCheck[] }) => ({
    url: `${protectionUrl(repo, branch)}/required_status_checks`,
    strict: checks.strict,
    contexts: checks.checks.map((check) => check.context),
    contexts_url: `${protectionUrl(repo, branch)}/required_status_checks/contexts`,
    checks: checks.checks.map((check) => ({ context: check.context, app_id: check.appId })),
  });
  const protectionBody = (repo: SandboxRepo, branch: string, protection: SandboxProtection) => ({
    url: protectionUrl(repo, branch),
    ...(protection.requiredStatusChecks
      ? { required_status_checks: statusPolicy(repo, branch, protection.requiredStatusChecks) }
      : {}),
    required_signatures: { url: `${protectionUrl(repo, branch)}/required_signatures`, enabled: false },
    enforce_admins: { url: `${protectionUrl(repo, branch)}/enforce_admins`, enabled: protection.enforceAdmins },
    required_linear_history: { enabled: false },
    allow_force_pushes: { enabled: false },
    allow_deletions: { enabled: false },
    block_creations: { enabled: false },
    required_conversation_resolution: { enabled: false },
    lock_branch: { enabled: false },
    allow_fork_syncing: { enabled: false },
  });
  const rulesetShape = (repo: SandboxRepo, ruleset: SandboxRuleset) => {
    const rule = ruleParameters(ruleset);
    return {
      id: ruleset.id,
      name: ruleset.name,
      target: 'branch',
      source_type: 'Repository',
      source: fullName(repo),
      enforcement: ruleset.enforcement,
      bypass_actors: [],
      current_user_can_bypass: 'never',
      node_id: nodeId('RepositoryRuleset', ruleset.id),
      _links: {
        self: { href: urls.repoApi(fullName(repo), `/rulesets/${ruleset.id}`) },
        html: { href: urls.repoHtml(fullName(repo), `/rules/${ruleset.id}`) },
      },
      conditions: { ref_name: { include: ruleset.include, exclude: ruleset.exclude } },
      rules: rule ? [rule] : [],
      created_at: isoTime(ruleset.createdAt),
      updated_at: isoTime(ruleset.updatedAt),
    };
  };

  router.add('PUT', '/repos/:owner/:repo/branches/*branch/protection', async (request) => {
    const repo = requireRepo(context, request, 'read');
    requireAdmin(context, request, repo, 'write');
    const branch = request.params.branch ?? '';
    await requireBranch(repo, branch);
    const protection = parseProtection(bodyOf(request));
    repo.protections.set(branch, protection);
    await settleAutoMerges(context, repo);
    return json(200, protectionBody(repo, branch, protection));
  });

  router.add('GET', '/repos/:owner/:repo/branches/*branch/protection', async (request) => {
    const repo = requireRepo(context, request, 'read');
    requireAdmin(context, request, repo, 'read');
    const branch = request.params.branch ?? '';
    await requireBranch(repo, branch);
    const protection = protectionOf(repo, branch);
    if (!protection) throw new HttpError(404, 'Branch not protected');
    return json(200, protectionBody(repo, branch, protection));
  });

  router.add('DELETE', '/repos/:owner/:repo/branches/*branch/protection', async (request) => {
    const repo = requireRepo(context, request, 'read');
    requireAdmin(context, request, repo, 'write');
    const branch = request.params.branch ?? '';
    await requireBranch(repo, branch);
    if (!repo.protections.delete(branch)) throw new HttpError(404, 'Branch not protected');
    await settleAutoMerges(context, repo);
    return { status: 204 };
  });

  router.add('GET', '/repos/:owner/:repo/branches/*branch/protection/required_status_checks', async (request) => {
    const repo = requireRepo(context, request, 'read');
    requireAdmin(context, request, repo, 'read');
    const branch = request.params.branch ?? '';
    await requireBranch(repo, branch);
    const protection = protectionOf(repo, branch);
    if (!protection) throw new HttpError(404, 'Branch not protected');
    if (!protection.requiredStatusChecks) throw new HttpError(404, 'Required status checks not enabled');
    return json(200, statusPolicy(repo, branch, protection.requiredStatusChecks));
  });

  // Readable with Contents or Metadata read: the required status checks of classic protection
  // (`protection.required_status_checks`), and `protected` when protection or a ruleset applies.
  router.add('GET', '/repos/:owner/:repo/branches/*branch', async (request) => {
    const repo = requireRepo(context, request, 'read');
    const branch = request.params.branch ?? '';
    const sha = await repo.git.readRef(`refs/heads/${branch}`);
    if (!sha) throw new HttpError(404, 'Branch not found');
    const protection = protectionOf(repo, branch);
    const checks = protection?.requiredStatusChecks;
    return json(200, {
      name: branch,
      commit: await commitResource(context, repo, sha, false),
      _links: {
        self: urls.repoApi(fullName(repo), `/branches/${encodeURIComponent(branch)}`),
        html: urls.repoHtml(fullName(repo), `/tree/${branch}`),
      },
      protected: !!protection || activeRulesets(repo, branch).length > 0,
      protection: {
        enabled: !!protection,
        required_status_checks: {
          enforcement_level: !checks ? 'off' : protection?.enforceAdmins ? 'everyone' : 'non_admins',
          contexts: checks?.checks.map((check) => check.context) ?? [],
          checks: checks?.checks.map((check) => ({ context: check.context, app_id: check.appId })) ?? [],
        },
      },
      protection_url: protectionUrl(repo, branch),
    });
  });

  router.add('POST', '/repos/:owner/:repo/rulesets', async (request) => {
    const repo = requireRepo(context, request, 'read');
    requireAdmin(context, request, repo, 'write');
    const now = state.clock();
    const ruleset: SandboxRuleset = {
      id: state.nextId(),
      ...parseRuleset(bodyOf(request), repo),
      createdAt: now,
      updatedAt: now,
    };
    repo.rulesets.push(ruleset);
    await settleAutoMerges(context, repo);
    return json(201, rulesetShape(repo, ruleset));
  });

  router.add('GET', '/repos/:owner/:repo/rulesets/:ruleset_id', (request) => {
    const repo = requireRepo(context, request, 'read');
    const ruleset = repo.rulesets.find((candidate) => candidate.id === Number(request.params.ruleset_id));
    if (!ruleset) throw notFound();
    return json(200, rulesetShape(repo, ruleset));
  });

  router.add('DELETE', '/repos/:owner/:repo/rulesets/:ruleset_id', async (request) => {
    const repo = requireRepo(context, request, 'read');
    requireAdmin(context, request, repo, 'write');
    const index = repo.rulesets.findIndex((candidate) => candidate.id === Number(request.params.ruleset_id));
    if (index === -1) throw notFound();
    repo.rulesets.splice(index, 1);
    await settleAutoMerges(context, repo);
    return { status: 204 };
  });

  // The rules that apply to a branch, for anyone who can read the repository (Metadata read).
  router.add('GET', '/repos/:owner/:repo/rules/branches/*branch', (request) => {
    const repo = requireRepo(context, request, 'read');
    const rules = activeRulesets(repo, request.params.branch ?? '').flatMap((ruleset) => {
      const rule = ruleParameters(ruleset);
      return rule
        ? [{ ...rule, ruleset_source_type: 'Repository', ruleset_source: fullName(repo), ruleset_id: ruleset.id }]
        : [];
    });
    const page = paginate(request, rules);
    return json(200, page.items, page.headers);
  });

  const statusShape = (repo: SandboxRepo, status: SandboxCommitStatus) => ({
    url: urls.repoApi(fullName(repo), `/statuses/${status.sha}`),
    avatar_url: userShape(urls, status.creator).avatar_url,
    id: status.id,
    node_id: nodeId('StatusContext', status.id),
    state: status.state,
    description: status.description,
    target_url: status.targetUrl,
    context: status.context,
    created_at: isoTime(status.createdAt),
    updated_at: isoTime(status.createdAt),
  });

  router.add('POST', '/repos/:owner/:repo/statuses/:sha', async (request) => {
    const repo = requireRepo(context, request, 'write');
    requireAppPermission(context, request, 'statuses', 'write');
    const sha = request.params.sha ?? '';
    if ((await repo.git.objectType(sha)) !== 'commit') throw validationFailed([], `No commit found for SHA: ${sha}`);
    const body = bodyOf(request);
    const stateValue = field(body, 'state', { required: true });
    if (!COMMIT_STATES.includes(stateValue as CommitState))
      throw invalid(`For 'state', "${stateValue}" is not one of ${COMMIT_STATES.join(', ')}.`);
    const status: SandboxCommitStatus = {
      id: state.nextId(),
      repoId: repo.id,
      sha,
      context: field(body, 'context') ?? 'default',
      state: stateValue as CommitState,
      description: field(body, 'description') ?? null,
      targetUrl: field(body, 'target_url') ?? null,
      creator: request.principal?.kind === 'user' ? request.principal.user : state.requireApp().bot,
      viaApp: request.principal?.kind === 'installation',
      createdAt: state.clock(),
    };
    state.statuses.set(status.id, status);
    await emitStatus(context, repo, status, await commitResource(context, repo, sha, false), status.creator);
    await settleAutoMerges(context, repo);
    return json(201, { ...statusShape(repo, status), creator: userShape(urls, status.creator) });
  });

  router.add('GET', '/repos/:owner/:repo/commits/*ref/status', async (request: ApiRequest) => {
    const repo = requireRepo(context, request, 'read');
    requireAppPermission(context, request, 'statuses', 'read');
    const sha = await resolveOrFail(repo, request.params.ref ?? '');
    const all = [...state.statuses.values()]
      .filter((status) => status.repoId === repo.id && status.sha === sha)
      .sort((a, b) => b.id - a.id);
    // The latest status per context, oldest first, as GitHub's recorded exchange lists them
    // (octokit/fixtures scenarios/api.github.com/create-status/normalized-fixture.json).
    const latest = all
      .filter((status, index) => all.findIndex((other) => other.context === status.context) === index)
      .reverse();
    const combined = latest.some((status) => status.state === 'error' || status.state === 'failure')
      ? 'failure'
      : latest.length === 0 || latest.some((status) => status.state === 'pending')
        ? 'pending'
        : 'success';
    const page = paginate(request, latest);
    return json(
      200,
      {
        state: combined,
        statuses: page.items.map((status) => statusShape(repo, status)),
        sha,
        total_count: latest.length,
        repository: repoShape(urls, repo, 'nested'),
        commit_url: urls.repoApi(fullName(repo), `/commits/${sha}`),
        url: urls.repoApi(fullName(repo), `/commits/${sha}/status`),
      },
      page.headers,
    );
  });

  // Every status of a ref, newest first (the same recorded exchange).
  router.add('GET', '/repos/:owner/:repo/commits/*ref/statuses', async (request: ApiRequest) => {
    const repo = requireRepo(context, request, 'read');
    requireAppPermission(context, request, 'statuses', 'read');
    const sha = await resolveOrFail(repo, request.params.ref ?? '');
    const all = [...state.statuses.values()]
      .filter((status) => status.repoId === repo.id && status.sha === sha)
      .sort((a, b) => b.id - a.id);
    const page = paginate(request, all);
    return json(
      200,
      page.items.map((status) => ({ ...statusShape(repo, status), creator: userShape(urls, status.creator) })),
      page.headers,
    );
  });

  router.add('PATCH', '/repos/:owner/:repo', (request) => {
    const repo = requireRepo(context, request, 'read');
    requireAdmin(context, request, repo, 'write');
    const body = bodyOf(request);
    const unsupported = Object.keys(body).filter((name) => !['allow_auto_merge', 'description', 'name'].includes(name));
    if (unsupported.length)
      throw validationFailed(
        [],
        `The sandbox changes only allow_auto_merge, description and name of a repository, not ${unsupported.join(', ')}.`,
      );
    const name = field(body, 'name');
    if (name !== undefined) renameRepository(context, repo, name);
    if (body.allow_auto_merge !== undefined) {
      if (typeof body.allow_auto_merge !== 'boolean')
        throw invalid(`For 'allow_auto_merge', ${JSON.stringify(body.allow_auto_merge)} is not a boolean.`);
      repo.allowAutoMerge = body.allow_auto_merge;
    }
    if (body.description !== undefined) repo.description = field(body, 'description') ?? null;
    return json(200, fullRepository(context, repo, request));
  });
}
