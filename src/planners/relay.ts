import { createHmac } from 'node:crypto';
import { checkPathPattern, compilePathPattern, type CompiledPathPattern } from './path-pattern.js';

/**
 * Pure decisions of the relay to in-cluster agents (docs/relay.md): which targets a push goes to,
 * how payloads that arrive in one coalescing window merge, and the exact request each agent
 * type verifies. No I/O, no clock: times come in as arguments.
 */

/** The agent a target is: decides the headers and the signature. */
export type RelayTargetType = 'argocd' | 'flux-github' | 'flux-generic-hmac';

/** GitHub events the relay forwards. */
export type RelayEvent = 'push' | 'pull_request';

/** What selection needs to know about a target. */
export interface RelaySelectable {
  name: string;
  /** Globs over `owner/name`, matched without regard to case (GitHub names are case-insensitive). */
  repos: readonly string[];
  /** Globs over changed file paths; a pattern also matches every file below a directory it names. */
  paths: readonly string[];
  events: readonly RelayEvent[];
}

/** One target chosen for an event. */
export interface RelaySelection {
  target: string;
  /**
   * The payload's file list was truncated: the job asks the compare API for the changed files and
   * drops the delivery when none matches the target's paths.
   */
  narrowByCompare: boolean;
}

/** What signing needs to know about a target. */
export interface RelaySigner {
  type: RelayTargetType;
  url: string;
  secret: string;
  /** Also send `X-Hub-Signature` (HMAC-SHA1): Argo CD 2.12 and older verify only that one. */
  sha1Signature: boolean;
}

/** The request one agent receives: the URL exactly as configured, the original body bytes. */
export interface RelayRequest {
  url: string;
  method: 'POST';
  headers: Record<string, string>;
  body: Buffer;
}

/** A payload waiting in a target's coalescing window (kept in Redis until a job delivered it). */
export interface PendingRelay {
  deliveryId: string;
  event: RelayEvent;
  /** The original raw body as UTF-8: the bytes are re-signed, never re-serialized. */
  body: string;
  installationId?: number;
  repository: string;
  /** `null` when the payload's file list was truncated. */
  changedPaths: string[] | null;
  before?: string;
  after?: string;
  /** Arrival time, ISO 8601. */
  receivedAt: string;
}

/** Payloads of one window folded into one delivery. */
export interface MergedRelay {
  /** The newest payload: its body and delivery id are what the agent receives. */
  newest: PendingRelay;
  /** How many payloads were folded. */
  count: number;
  deliveryIds: string[];
  /** Union of the known changed paths, sorted. */
  changedPaths: string[];
  /** Payloads whose file list was truncated: the compare API fills them in, when it can. */
  unknown: Array<{ before?: string; after?: string; installationId?: number; deliveryId: string }>;
}

/** How an agent's answer is treated. */
export type AgentVerdict = 'delivered' | 'retry' | 'reject';

/** The longest Retry-After the relay honours; a larger one is cut to this. */
export const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;

/** A Git object id of zeros: `before` of a push that created a branch. */
const NULL_SHA = /^0+$/;

/**
 * Compile a glob of a relay target: a path pattern of the one dialect Escalator has for paths
 * (src/planners/path-pattern.ts, docs/configuration.md "Paths"): `*` (one or more characters) and
 * `?` stay within one path segment, `**` as a whole segment spans segments, `{a,b}` is either
 * name, `[abc]`/`[!abc]` a class; everything else is literal. `test` matches the whole text.
 */
export function compileGlob(pattern: string, options: { ignoreCase?: boolean } = {}): CompiledPathPattern {
  return compilePathPattern(pattern, options);
}

/**
 * Why a glob cannot be used, or undefined when it can: the path-pattern rules, each problem with
 * what to write instead. The configuration reports it with the file, line and column.
 */
export function checkGlob(pattern: string): string | undefined {
  if (pattern.length === 0) return 'is empty';
  const problem = checkPathPattern(pattern);
  if (!problem) return undefined;
  return problem.hint ? `${problem.message} (${problem.hint})` : problem.message;
}

/** True when `repository` (`owner/name`) matches any of the globs, whatever the case. */
export function matchesRepository(patterns: readonly string[], repository: string): boolean {
  return patterns.some((pattern) => compileGlob(pattern, { ignoreCase: true }).test(repository));
}

/**
 * True when any changed path matches any pattern. A pattern that names a directory matches the
 * files below it (`apps/*\/overlays/prod` matches `apps/web/overlays/prod/kustomization.yaml`).
 */
export function matchesPaths(patterns: readonly string[], changedPaths: readonly string[]): boolean {
  const compiled = patterns.map((pattern) => compileGlob(pattern));
  return changedPaths.some((path) => compiled.some((pattern) => pattern.match(path) !== null));
}

/**
 * Choose the targets of one event: the event kind is one the target takes, the repository
 * matches one of its globs, and — when the changed paths are known — one of them matches its
 * paths. Unknown paths (a truncated payload) select on the repository alone; the job narrows.
 */
export function selectRelayTargets(
  targets: readonly RelaySelectable[],
  input: { event: RelayEvent; repository: string; changedPaths: readonly string[] | null },
): RelaySelection[] {
  const selected: RelaySelection[] = [];
  for (const target of targets) {
    if (!target.events.includes(input.event)) continue;
    if (!matchesRepository(target.repos, input.repository)) continue;
    if (input.changedPaths === null) {
      selected.push({ target: target.name, narrowByCompare: true });
      continue;
    }
    if (matchesPaths(target.paths, input.changedPaths)) selected.push({ target: target.name, narrowByCompare: false });
  }
  return selected;
}

/**
 * What payloads may fold into one delivery besides the target and repository: the ref of a push
 * (Argo CD refreshes the applications that track the pushed ref, so a push to a feature branch
 * must never hide one to `main`) or the number of a pull request.
 */
export function coalesceKey(event: RelayEvent, body: string): string {
  let payload: unknown;
  try {
    payload = JSON.parse(body);
  } catch {
    return 'unparsed';
  }
  if (typeof payload !== 'object' || payload === null) return 'unparsed';
  const record = payload as Record<string, unknown>;
  if (event === 'push') return typeof record.ref === 'string' ? record.ref : 'no-ref';
  const number = record.number ?? (record.pull_request as Record<string, unknown> | undefined)?.number;
  return typeof number === 'number' ? `pull-${number}` : 'no-number';
}

/** Fold the payloads of one window: the newest (last to arrive) wins, the changed paths unite. */
export function mergePending(entries: readonly PendingRelay[]): MergedRelay | null {
  const newest = entries.at(-1);
  if (!newest) return null;
  const paths = new Set<string>();
  const unknown: MergedRelay['unknown'] = [];
  for (const entry of entries) {
    if (entry.changedPaths === null) {
      unknown.push({
        deliveryId: entry.deliveryId,
        ...(entry.before !== undefined ? { before: entry.before } : {}),
        ...(entry.after !== undefined ? { after: entry.after } : {}),
        ...(entry.installationId !== undefined ? { installationId: entry.installationId } : {}),
      });
    } else for (const path of entry.changedPaths) paths.add(path);
  }
  return {
    newest,
    count: entries.length,
    deliveryIds: entries.map((entry) => entry.deliveryId),
    changedPaths: [...paths].sort(),
    unknown,
  };
}

/** True when the compare API can tell what a push changed: both ends known, the branch not new or deleted. */
export function canCompare(range: {
  before?: string;
  after?: string;
  installationId?: number;
}): range is { before: string; after: string; installationId: number } {
  return Boolean(
    range.before &&
    range.after &&
    range.installationId !== undefined &&
    !NULL_SHA.test(range.before) &&
    !NULL_SHA.test(range.after),
  );
}

/** `sha256=<hex>` (or another algorithm) of the exact body bytes. */
export function signBody(algorithm: 'sha1' | 'sha256', secret: string, body: Buffer): string {
  return `${algorithm}=${createHmac(algorithm, secret).update(body).digest('hex')}`;
}

/**
 * The request one agent verifies, with the original body bytes re-signed with the target's
 * secret. The URL is used exactly: Flux finds a receiver by the request URI, so a query string
 * or a rewritten path would answer 404.
 *
 * - `argocd` (`/api/webhook`, go-playground/webhooks): `X-GitHub-Event`, `X-Hub-Signature-256`
 *   over the raw body; 2.12 and older read `X-Hub-Signature` (SHA-1) instead.
 * - `flux-github` (go-github `ValidatePayload`): `Content-Type: application/json`, then
 *   `X-Hub-Signature-256` (or `X-Hub-Signature`), `X-GitHub-Event` checked against the
 *   receiver's `events`.
 * - `flux-generic-hmac` (go-github `ValidateSignature`): `X-Signature: sha256=<hex>`.
 */
export function buildRelayRequest(
  target: RelaySigner,
  payload: { event: RelayEvent; deliveryId: string; body: string },
): RelayRequest {
  const body = Buffer.from(payload.body, 'utf8');
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'Escalator-Relay',
    'x-github-event': payload.event,
    'x-github-delivery': payload.deliveryId,
  };
  if (target.type === 'flux-generic-hmac') {
    headers['x-signature'] = signBody('sha256', target.secret, body);
  } else {
    headers['x-hub-signature-256'] = signBody('sha256', target.secret, body);
    if (target.sha1Signature) headers['x-hub-signature'] = signBody('sha1', target.secret, body);
  }
  return { url: target.url, method: 'POST', headers, body };
}

/**
 * How the relay treats an agent's status: 2xx delivered; 5xx, 429 and 408 are worth another
 * attempt; every other answer (a wrong secret is 400 from Argo CD and Flux, 401/403 from a proxy,
 * 404 an unknown Flux receiver, 3xx a URL that moved) will not change by retrying.
 */
export function classifyAgentStatus(status: number): AgentVerdict {
  if (status >= 200 && status < 300) return 'delivered';
  if (status >= 500 || status === 429 || status === 408) return 'retry';
  return 'reject';
}

/**
 * The time (ms since epoch) a `Retry-After` asks to wait until: delta-seconds or an HTTP date
 * (RFC 9110 §10.2.3). Undefined when absent or unreadable; never later than `MAX_RETRY_AFTER_MS`.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  let at: number;
  if (/^\d+$/.test(text)) at = nowMs + Number(text) * 1000;
  else {
    // IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`; Date.parse alone would read `-5` as a year.
    if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) return undefined;
    const date = Date.parse(text);
    if (Number.isNaN(date)) return undefined;
    at = date;
  }
  return Math.min(Math.max(at, nowMs), nowMs + MAX_RETRY_AFTER_MS);
}
