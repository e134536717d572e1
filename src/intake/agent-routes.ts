import { createHmac } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RepoState } from '../adapters/store/repo-state.js';
import type { RepoIndex } from '../adapters/store/subscriptions.js';
import {
  agentNames,
  agentTable,
  MAX_OBJECT_CHARS,
  MAX_URL_CHARS,
  reportTime,
  type AgentName,
  type AgentReport,
} from '../events/agents/index.js';
import type { Logger } from '../observability/logger.js';
import { agentReports } from '../observability/metrics.js';
import type { HealthReport } from '../planners/health.js';
import { githubRepoOf, mapAgentReport, type HealthTarget } from '../events/agents/health-map.js';
import { enqueueHealth } from '../queue/enqueue.js';
import { QueueUnavailableError, type Producer } from '../queue/producer.js';
import { sendJson, type Handler } from '../web/server.js';
import { secretsEqual } from '../web/secrets.js';
import { HttpError, parseJson, readBody, requireContentType, requireMethod, sendRefusal } from './http.js';

/**
 * The largest agent report accepted. A Flux event's message may hold 39,000 characters
 * (fluxcd/pkg apis/event/v1beta1), which Go's JSON encoder may escape up to six bytes each.
 */
export const AGENT_MAX_BODY_BYTES = 256 * 1024;

export type AgentOutcome =
  | 'accepted'
  | 'duplicate'
  | 'unknown'
  | 'ignored'
  | 'invalid'
  | 'unauthorized'
  | 'too-large'
  | 'unsupported-media'
  | 'unavailable'
  | 'method'
  | 'not-found';

/** The routes in the 404 list: one pair per agent of the table. */
export const agentRouteList = agentNames.flatMap((name) => [
  `POST /agents/${name}`,
  `POST /agents/${name}/<owner>/<repo>`,
]);

export interface AgentRouteOptions {
  producer: Producer;
  store: RepoState;
  log: Logger;
  /** ESCALATOR_AGENT_TOKEN: the HMAC key (Flux) and bearer token (Argo CD). The routes answer 404 without it. */
  token?: string;
  /** GitHub's host, to read an Argo CD `repoURL` as `owner/repo` (github.com, or the Enterprise host). */
  githubHost?: string;
  now?: () => Date;
}

/** What became of one report: the jobs that record it, or why nothing is recorded. */
export interface AgentIntake {
  targets: Array<HealthTarget & { owner: string; repo: string }>;
  jobs: string[];
  duplicates: number;
}

/**
 * Enqueue one `health` job per (environment, app) of `index` the report is about. Shared by the
 * agent routes and the GitHub status, check run and deployment status events.
 */
export async function enqueueAgentReport(
  producer: Producer,
  index: RepoIndex,
  report: AgentReport & { revision: string },
  receivedAt: string,
): Promise<AgentIntake> {
  const intake: AgentIntake = { targets: [], jobs: [], duplicates: 0 };
  const object = (
    report.object.namespace ? `${report.object.namespace}/${report.object.name}` : report.object.name
  ).slice(0, MAX_OBJECT_CHARS);
  const url = report.url && report.url.length <= MAX_URL_CHARS ? report.url : undefined;
  for (const target of mapAgentReport(index, report)) {
    const health: HealthReport = {
      owner: index.owner,
      repo: index.repo,
      environment: target.environment,
      app: target.app,
      revision: report.revision,
      sync: report.sync,
      health: report.health,
      at: reportTime(report.at, receivedAt),
      source: { agent: report.agent, object, ...(url ? { url } : {}) },
      ...(report.message ? { message: report.message } : {}),
    };
    const added = await enqueueHealth(producer, {
      installationId: index.installationId,
      owner: index.owner,
      repo: index.repo,
      report: health,
    });
    intake.targets.push({ ...target, owner: index.owner, repo: index.repo });
    intake.jobs.push(added.id);
    if (added.duplicate) intake.duplicates++;
  }
  return intake;
}

/**
 * The hash functions notification-controller's docs name for `X-Signature: <hash>=<hex>`
 * (docs/spec/v1beta3/providers.md, "Generic webhook with HMAC": sha256 today, "which may change").
 */
const SIGNATURE_HASHES = new Set(['sha224', 'sha256', 'sha384', 'sha512']);

/**
 * The key one owner's agents authenticate with: derived from ESCALATOR_AGENT_TOKEN and the owner
 * (a user or organization, as GitHub spells it, case-folded). Reports are recorded only for
 * repositories of the owner whose key signed them, so one tenant's agent can never report into
 * another tenant's repositories. `npx escalator agent-key <owner>` prints it.
 */
export function agentKey(secret: string, owner: string): string {
  return createHmac('sha256', secret).update(`escalator-agent-key:${owner.toLowerCase()}`).digest('hex');
}

/** What a request presents to prove who sent it, read before the body is parsed. */
type Credential = { kind: 'bearer'; token: string } | { kind: 'hmac'; algorithm: string; hex: string };

/** The bearer token (Argo CD) or the `X-Signature` (Flux generic-hmac, internal/notifier/forwarder.go). */
function credentialOf(req: IncomingMessage, auth: 'bearer' | 'hmac'): Credential {
  if (auth === 'bearer') {
    const header = req.headers.authorization ?? '';
    if (!header)
      throw new HttpError(
        401,
        "missing Authorization header; send Authorization: Bearer <the owner's agent key> (npx escalator agent-key <owner>; docs/health.md)",
        { 'www-authenticate': 'Bearer' },
      );
    return {
      kind: 'bearer',
      token: header.toLowerCase().startsWith('bearer ') ? header.slice(7).trim() : header.trim(),
    };
  }
  const header = req.headers['x-signature'];
  const given = Array.isArray(header) ? header[0] : header;
  if (!given)
    throw new HttpError(
      401,
      "missing X-Signature header; point a Flux Provider of type generic-hmac at this route, with the owner's agent key as its token (npx escalator agent-key <owner>; docs/health.md)",
    );
  const [algorithm = '', hex = ''] = given.split('=', 2);
  if (!SIGNATURE_HASHES.has(algorithm))
    // The header is not echoed: a misconfigured sender may have put the token itself there.
    throw new HttpError(401, 'X-Signature is not of the form sha256=<hex> (or sha224, sha384, sha512)');
  return { kind: 'hmac', algorithm, hex: hex.toLowerCase() };
}

/** Whether the credential is `owner`'s agent key (bearer), or a signature of the body with it (HMAC). */
function signedBy(credential: Credential, body: Buffer, secret: string, owner: string): boolean {
  const key = agentKey(secret, owner);
  return credential.kind === 'bearer'
    ? secretsEqual(credential.token, key)
    : secretsEqual(credential.hex, createHmac(credential.algorithm, key).update(body).digest('hex'));
}

function notSignedBy(credential: Credential, owners: string): HttpError {
  return new HttpError(
    401,
    `${credential.kind === 'bearer' ? 'the Authorization token is not' : 'X-Signature is not a signature of the body with'} the agent key of ${owners}; print it with npx escalator agent-key <owner> where ESCALATOR_AGENT_TOKEN is set (docs/health.md)`,
    credential.kind === 'bearer' ? { 'www-authenticate': 'Bearer' } : {},
  );
}

/**
 * `POST /agents/<agent>` and `POST /agents/<agent>/<owner>/<repo>`: sync and health reports from
 * Flux (`generic-hmac` Provider) and Argo CD (Notifications `webhook` service). Steps:
 * method (405) → content type (415) → a bearer token (Argo CD) or an `X-Signature` (Flux) at all
 * (401) → body size (413) → with an owner in the path, the token or signature must be that
 * owner's agent key (`agentKey`, 401) before the body is parsed → parse and validate (400) →
 * which repository (the path names it; else an Argo CD `repoURL` on GitHub; else the repositories
 * whose config listens to the object, kept only where the key is their owner's: 401 when none,
 * 400 when several) → which environments and apps (none: 202 `unknown`, counted, nothing
 * recorded) → one `health` job each (503 when Redis cannot take them) → 202 once Redis holds
 * them all; 200 when every one was taken before. Nothing is recorded for a request refused at any
 * step, and one owner's key never records a report in another owner's repository.
 */
export function agentRoutes(options: AgentRouteOptions): Handler {
  const now = options.now ?? (() => new Date());
  const count = (agent: string, outcome: AgentOutcome): void => {
    agentReports.inc({ agent: agent in agentTable ? agent : 'other', outcome });
  };
  return async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (!/^\/agents(?:\/|$)/.test(path)) return false;
    const match = /^\/agents\/([a-z]+)(?:\/([^/]+)\/([^/]+))?\/?$/.exec(path);
    const agent = match?.[1] ?? '';
    let bodyRead = false;
    try {
      if (!match || !(agent in agentTable)) throw new HttpError(404, noAgentRoute(path));
      const descriptor = agentTable[agent as AgentName];
      if (!options.token)
        throw new HttpError(
          404,
          `agent reports are off; set ESCALATOR_AGENT_TOKEN on the web role and give the same secret to ${agent === 'flux' ? 'the Flux Provider' : 'Argo CD Notifications'} to enable them (docs/health.md)`,
        );
      requireMethod(req, 'POST');
      requireContentType(req, ['application/json']);
      const credential = credentialOf(req, descriptor.auth);
      const body = await readBody(req, AGENT_MAX_BODY_BYTES, '');
      bodyRead = true;
      // The path names the owner: nothing of an unauthenticated body is read.
      if (match[2] && !signedBy(credential, body, options.token, match[2])) throw notSignedBy(credential, match[2]);
      const result = descriptor.normalize(parseJson(body));
      if (result.kind === 'invalid') throw new HttpError(400, result.message);
      // Without an owner in the path, an Argo CD report names its repository (repoURL): the key
      // must be that owner's before anything else is looked at.
      if (!match[2]) {
        const named = repositoryOf(
          agent,
          result.kind === 'report' ? result.report : undefined,
          undefined,
          undefined,
          options,
        );
        if (!signedBy(credential, body, options.token, named.owner)) throw notSignedBy(credential, named.owner);
      }
      const receivedAt = now().toISOString();
      const log = options.log.child({ agent });
      if (result.kind === 'ignored') {
        count(agent, 'ignored');
        log.info({ reason: result.reason }, 'Agent report not recorded');
        return sendJson(res, 200, { ignored: result.reason });
      }
      const { report } = result;
      const object = report.object.namespace ? `${report.object.namespace}/${report.object.name}` : report.object.name;
      if (!report.revision) {
        const reason = `the report about ${object} names no Git commit (a chart version or an OCI digest): nothing to compare with a merge`;
        count(agent, 'ignored');
        log.info({ object, reason }, 'Agent report not recorded');
        return sendJson(res, 200, { ignored: reason });
      }
      const withRevision = { ...report, revision: report.revision };
      const named = repositoryOf(agent, withRevision, match[2], match[3], options);
      const found = await options.store.subscriptions.loadRepo(named.owner, named.repo);
      const targets = found ? mapAgentReport(found, withRevision) : [];
      if (!found || targets.length === 0) {
        count(agent, 'unknown');
        const reason = !found
          ? `Escalator does not know ${named.owner}/${named.repo}: install the App on it, or wait until it is indexed`
          : `no repository ${named.owner}/${named.repo} listens to ${agent} object ${object}: add it to an environment's health setting in .github/escalator.yml (docs/health.md)`;
        log.debug({ object, revision: report.revision, reason }, 'Agent report about an unknown application');
        return sendJson(res, 202, { unknown: reason });
      }
      const index = found;
      const intake = await enqueueAgentReport(options.producer, index, withRevision, receivedAt);
      const answer = {
        repository: `${index.owner}/${index.repo}`,
        revision: report.revision,
        targets: intake.targets.map((target) => `${target.environment}/${target.app || '*'}`),
        jobs: intake.jobs,
        ...(intake.duplicates ? { duplicate: intake.duplicates } : {}),
      };
      const fields = { object, repo: answer.repository, revision: report.revision, targets: answer.targets };
      if (intake.duplicates === intake.jobs.length) {
        count(agent, 'duplicate');
        log.info(fields, 'Agent report taken before: no new work');
        return sendJson(res, 200, answer);
      }
      count(agent, 'accepted');
      log.info({ ...fields, sync: report.sync, health: report.health }, 'Agent report accepted');
      return sendJson(res, 202, answer);
    } catch (error) {
      if (error instanceof QueueUnavailableError) {
        count(agent, 'unavailable');
        options.log.warn({ agent, err: { message: error.message } }, 'Agent report not accepted: queue unavailable');
        return sendJson(res, 503, { error: `cannot accept the report now: ${error.message}` }, { 'retry-after': '5' });
      }
      if (error instanceof HttpError) {
        count(agent, outcomeOf(error));
        // Authenticated senders' mistakes at info; anyone's knocking (401, 404, 413…) at debug, counted.
        const level = error.status === 400 ? 'info' : 'debug';
        options.log[level]({ agent, status: error.status, reason: error.message }, 'Agent report refused');
        return sendRefusal(req, res, error, bodyRead);
      }
      throw error;
    }
  };
}

/**
 * Why a path under `/agents/` is no route, without repeating the path: a mistyped URL often
 * carries the agent key where the owner belongs (`/agents/argocd/<token>`), and the reason is
 * both answered and logged. Only a known agent's name is named.
 */
export function noAgentRoute(path: string): string {
  const first = /^\/agents\/([^/]*)/.exec(path)?.[1] ?? '';
  const where = agentNames.includes(first as AgentName)
    ? `/agents/${first}/ takes nothing, or <owner>/<repo>, after the agent's name`
    : `there is no agent of that name under /agents/`;
  return `no agent route at this path (not repeated here: it may hold a secret); ${where}; use one of ${agentRouteList.join(', ')}`;
}

/**
 * The repository a report is about: the one the path names; else the GitHub repository of an
 * Argo CD `repoURL` (a Flux event names none: 400, asking for the path form). A path and a
 * `repoURL` on GitHub that disagree are refused: the report was sent to the wrong URL.
 */
function repositoryOf(
  agent: string,
  report: AgentReport | undefined,
  owner: string | undefined,
  repo: string | undefined,
  options: AgentRouteOptions,
): { owner: string; repo: string } {
  const fromBody = report?.repoURL ? githubRepoOf(report.repoURL, options.githubHost) : undefined;
  if (owner && repo) {
    if (fromBody && `${fromBody.owner}/${fromBody.repo}`.toLowerCase() !== `${owner}/${repo}`.toLowerCase())
      throw new HttpError(
        400,
        `the report's repoURL ${report?.repoURL} is not ${owner}/${repo}, the repository in the URL; post it to /agents/${agent}/${fromBody.owner}/${fromBody.repo}`,
      );
    return { owner, repo };
  }
  if (fromBody) return fromBody;
  throw new HttpError(
    400,
    `name the repository in the URL, /agents/${agent}/<owner>/<repo>: each owner's agents authenticate with the owner's own key (docs/health.md)`,
  );
}

function outcomeOf(error: HttpError): AgentOutcome {
  switch (error.status) {
    case 400:
      return 'invalid';
    case 401:
      return 'unauthorized';
    case 404:
      return 'not-found';
    case 405:
      return 'method';
    case 413:
      return 'too-large';
    case 415:
      return 'unsupported-media';
    case 503:
      return 'unavailable';
    default:
      return 'invalid';
  }
}
