import { settleAutoMerges } from '../auto-merge.js';
import { actorOf, type SandboxContext } from '../context.js';
import { emitCheckRun } from '../events.js';
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
import type { CheckConclusion, CheckStatus, SandboxCheckRun, SandboxRepo } from '../model.js';
import { checkRunShape } from '../shapes/checks.js';
import { requireRepo } from './common.js';
import { resolveOrFail } from './repos.js';

const STATUSES: CheckStatus[] = ['queued', 'in_progress', 'completed', 'waiting', 'requested', 'pending'];
const CONCLUSIONS: CheckConclusion[] = [
  'success',
  'failure',
  'neutral',
  'cancelled',
  'skipped',
  'timed_out',
  'action_required',
];

/**
 * A completed check run keeps its status and its conclusion for good. GitHub answers the update
 * 200 with the run as it stands: the run does not go back to `in_progress` (or `queued`), and its
 * conclusion stays (GitHub staff, github.com/orgs/community/discussions/24761#discussioncomment-3245360,
 * quoted in taskcluster/taskcluster#5085: "Once a check run transitions from the in_progress state
 * to completed state, it's not possible to modify its status nor its conclusion further"; the call
 * "succeeded" and nothing changed in tektoncd/pipelines-as-code#998; the same seen by
 * Mergifyio/mergify#1989 and lyft/atlantis#265, which create a new check run instead). Clearing
 * the conclusion with `null` is refused with 422 and GitHub's schema message (recorded in
 * flutter/cocoon#5130: "For 'properties/conclusion', nil is not a string"; Mergifyio/mergify#444:
 * "we can't set 'null' ourself (Github returns a 4XX)"). What else an update carries (name,
 * output, details_url, external_id) still applies.
 */
function refuseReopening(run: SandboxCheckRun, body: Record<string, unknown>): Record<string, unknown> {
  if (run.status !== 'completed') return body;
  // The request is validated against the schema first, as any other update is.
  const status = field(body, 'status');
  const conclusion = field(body, 'conclusion');
  if (status !== undefined && !STATUSES.includes(status as CheckStatus))
    throw validationFailed([], `status "${status}" is not one of ${STATUSES.join(', ')}`);
  if (conclusion !== undefined && !CONCLUSIONS.includes(conclusion as CheckConclusion))
    throw validationFailed([], `conclusion "${conclusion}" is not one of ${CONCLUSIONS.join(', ')}`);
  if ('conclusion' in body && body.conclusion === null)
    throw validationFailed(
      [],
      `Invalid request.\n\nFor 'properties/conclusion', nil is not a string.\nFor 'properties/conclusion', nil is not a member of [${CONCLUSIONS.map((c) => `"${c}"`).join(', ')}].`,
    );
  const { status: _status, conclusion: _conclusion, completed_at: _completedAt, ...rest } = body;
  return rest;
}

/** Applies the fields of a create/update body; `completed` needs a conclusion and vice versa. */
function applyCheckFields(run: SandboxCheckRun, body: Record<string, unknown>, now: Date): void {
  const status = field(body, 'status');
  const conclusion = field(body, 'conclusion');
  if (status !== undefined && !STATUSES.includes(status as CheckStatus))
    throw validationFailed([], `status "${status}" is not one of ${STATUSES.join(', ')}`);
  if (conclusion !== undefined && !CONCLUSIONS.includes(conclusion as CheckConclusion)) {
    throw validationFailed([], `conclusion "${conclusion}" is not one of ${CONCLUSIONS.join(', ')}`);
  }
  const name = field(body, 'name');
  if (name !== undefined) run.name = name;
  const detailsUrl = field(body, 'details_url');
  if (detailsUrl !== undefined) run.detailsUrl = detailsUrl;
  const externalId = field(body, 'external_id');
  if (externalId !== undefined) run.externalId = externalId;
  const startedAt = field(body, 'started_at');
  if (startedAt !== undefined) run.startedAt = new Date(startedAt);
  if (conclusion !== undefined) {
    run.conclusion = conclusion as CheckConclusion;
    run.status = 'completed';
  } else if (status !== undefined) {
    run.status = status as CheckStatus;
  }
  if (run.status === 'completed' && !run.conclusion)
    throw validationFailed([], 'conclusion is required when status is completed');
  if (run.status === 'in_progress' && !run.startedAt) run.startedAt = now;
  const completedAt = field(body, 'completed_at');
  if (run.status === 'completed') run.completedAt = completedAt ? new Date(completedAt) : (run.completedAt ?? now);
  const output = body.output as Record<string, unknown> | undefined;
  if (output && typeof output === 'object') {
    const title = field(output, 'title');
    const summary = field(output, 'summary');
    const text = field(output, 'text');
    run.output = {
      title: title ?? run.output.title,
      summary: summary ?? run.output.summary,
      text: text ?? run.output.text,
    };
  }
}

/** Check runs: only an App installation may create or update them, as on GitHub. */
export function registerCheckRoutes(router: Router, context: SandboxContext): void {
  const { state, urls } = context;
  const shape = (repo: SandboxRepo, run: SandboxCheckRun) =>
    checkRunShape(
      urls,
      repo,
      state.requireApp(),
      run,
      state.pullsOf(repo).filter((pull) => pull.state === 'open' && pull.headSha === run.headSha),
    );
  const requireInstallation = (request: ApiRequest) => {
    if (request.principal?.kind !== 'installation') throw new HttpError(403, 'You must authenticate via a GitHub App.');
  };
  const findRun = (repo: SandboxRepo, request: ApiRequest) => {
    const run = state.checkRuns.get(Number(request.params.check_run_id));
    if (!run || run.repoId !== repo.id) throw notFound();
    return run;
  };

  router.add('POST', '/repos/:owner/:repo/check-runs', async (request) => {
    const repo = requireRepo(context, request, 'write');
    requireInstallation(request);
    const body = bodyOf(request);
    const name = field(body, 'name', { required: true });
    const headSha = field(body, 'head_sha', { required: true });
    if ((await repo.git.objectType(headSha)) !== 'commit')
      throw validationFailed([], 'No commit found for SHA: ' + headSha);
    const suite = [...state.checkRuns.values()].find((run) => run.repoId === repo.id && run.headSha === headSha);
    const now = state.clock();
    const run: SandboxCheckRun = {
      id: state.nextId(),
      suiteId: suite?.suiteId ?? state.nextId(),
      repoId: repo.id,
      headSha,
      name,
      status: 'queued',
      conclusion: null,
      startedAt: now,
      completedAt: null,
      externalId: null,
      detailsUrl: null,
      output: { title: null, summary: null, text: null },
    };
    applyCheckFields(run, body, now);
    state.checkRuns.set(run.id, run);
    const answer = shape(repo, run);
    await settleAutoMerges(context, repo);
    return json(201, answer);
  });

  router.add('PATCH', '/repos/:owner/:repo/check-runs/:check_run_id', async (request) => {
    const repo = requireRepo(context, request, 'write');
    requireInstallation(request);
    const run = findRun(repo, request);
    applyCheckFields(run, refuseReopening(run, bodyOf(request)), state.clock());
    const answer = shape(repo, run);
    await settleAutoMerges(context, repo);
    return json(200, answer);
  });

  router.add('GET', '/repos/:owner/:repo/check-runs/:check_run_id', (request) => {
    const repo = requireRepo(context, request, 'read');
    return json(200, shape(repo, findRun(repo, request)));
  });

  router.add('POST', '/repos/:owner/:repo/check-runs/:check_run_id/rerequest', (request) => {
    const repo = requireRepo(context, request, 'write');
    const run = findRun(repo, request);
    if (run.status !== 'completed') throw new HttpError(422, 'This check run is not rerequestable');
    emitCheckRun(context, repo, run, 'rerequested', actorOf(context, request.principal));
    return json(201, {});
  });

  router.add('GET', '/repos/:owner/:repo/commits/*ref/check-runs', async (request) => {
    const repo = requireRepo(context, request, 'read');
    const sha = await resolveOrFail(repo, request.params.ref ?? '');
    const query = request.url.searchParams;
    const name = query.get('check_name');
    const status = query.get('status');
    let runs = [...state.checkRuns.values()]
      .filter((run) => run.repoId === repo.id && run.headSha === sha)
      .filter((run) => (!name || run.name === name) && (!status || run.status === status))
      .sort((a, b) => b.id - a.id);
    if ((query.get('filter') ?? 'latest') === 'latest') {
      runs = runs.filter((run, index) => runs.findIndex((other) => other.name === run.name) === index);
    }
    const page = paginate(request, runs);
    return json(200, { total_count: runs.length, check_runs: page.items.map((run) => shape(repo, run)) }, page.headers);
  });
}
