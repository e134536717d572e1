import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  isRegistrySource,
  JSON_CONTENT_TYPES,
  normalizeCiImage,
  registryOf,
  registrySources,
  type NormalizeResult,
  type RegistryAuth,
} from '../events/index.js';
import { REFUSED_FOR_SENDER } from '../events/outcome.js';
import type { Logger } from '../observability/logger.js';
import { intakeRequests } from '../observability/metrics.js';
import { enqueueImage } from '../queue/enqueue.js';
import { QueueUnavailableError, type DuplicateJob, type Producer } from '../queue/producer.js';
import { sendJson, type Handler } from '../web/server.js';
import { imageAllowed, IntakeCredentials, type Authenticated } from './credentials.js';
import { HttpError, parseJson, readBody, requireContentType, requireMethod, sendRefusal } from './http.js';
import { bearerToken, looksLikeJwt } from './jwt.js';

export type IntakeOutcome =
  | 'accepted'
  | 'duplicate'
  | 'ignored'
  | 'invalid'
  | 'unauthorized'
  | 'forbidden'
  | 'too-large'
  | 'unsupported-media'
  | 'unavailable'
  | 'method'
  | 'not-found';

export interface RegistryRouteOptions {
  producer: Producer;
  log: Logger;
  maxBodyBytes: number;
  /** Legacy global token for registry routes (every owner); a route answers 404 while no credential is accepted on it. */
  registryToken?: string;
  /** Legacy global bearer token for the CI API (every owner). */
  ciToken?: string;
  /** Scoped tokens (src/intake/credentials.ts): each bound to GitHub owners, optionally images and sources. */
  credentials?: IntakeCredentials['entries'];
  /** Verifies the Google-signed OIDC token of Pub/Sub push deliveries (gar). */
  verifyGoogleToken?: (authorization: string | undefined) => Promise<void>;
  /** Verifies a GitHub Actions OIDC token on the CI API and says whose repositories its events may change. */
  verifyGitHubToken?: (token: string) => Promise<Authenticated>;
  onOutcome?: (source: string, outcome: IntakeOutcome, detail?: string) => void;
  now?: () => Date;
}

/**
 * `POST /registry/<source>` and `POST /api/v1/images`. Each request goes through the same steps:
 * method → content type (415) → authentication (401; 403 for a credential not allowed on the
 * route) → size (413) → parse and validate (400) → normalize → images within the credential's
 * prefixes (403) → enqueue with the credential's scope (503 when Redis cannot take it) → 202
 * only once Redis holds every job; 200 `duplicate` when every event was seen already (with when,
 * and what it led to). The answer names the owners the events may change.
 * What differs between registries (authentication, content types, normalizer) is read from the
 * registry table (src/events/registries/index.ts).
 */
export function registryRoutes(options: RegistryRouteOptions): Handler {
  const now = options.now ?? (() => new Date());
  const credentials = new IntakeCredentials(options.credentials ?? [], {
    ...(options.registryToken ? { registryToken: options.registryToken } : {}),
    ...(options.ciToken ? { ciToken: options.ciToken } : {}),
  });
  const count = (source: string, outcome: IntakeOutcome, detail?: string): void => {
    intakeRequests.inc({ source: source === 'ci' || isRegistrySource(source) ? source : 'unknown', outcome });
    options.onOutcome?.(source, outcome, detail);
  };
  return async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    let source: string;
    let pathToken: string | undefined;
    let bodyRead = false;
    if (path === '/api/v1/images') source = 'ci';
    else {
      const match = /^\/registry\/([a-z]+)(?:\/([^/]+))?\/?$/.exec(path);
      if (!match) return false;
      source = match[1] as string;
      pathToken = match[2];
    }
    try {
      const registry = source === 'ci' ? undefined : registryOf(source);
      if (source !== 'ci' && !registry)
        throw new HttpError(404, `unknown registry "${source}"; use one of ${registrySources.join(', ')}`);
      const auth: RegistryAuth = registry?.auth ?? 'bearer';
      if (
        source === 'ci'
          ? !options.verifyGitHubToken && !credentials.enabled('ci', false)
          : auth !== 'google-oidc' && !credentials.enabled(source, auth === 'path-token')
      ) {
        throw new HttpError(
          404,
          source === 'ci'
            ? 'the CI API is disabled; set ESCALATOR_CI_OIDC_AUDIENCE (GitHub Actions OIDC) or add an ESCALATOR_INTAKE_TOKENS entry for ci to enable it'
            : `${source} intake is disabled; add an ESCALATOR_INTAKE_TOKENS entry${auth === 'path-token' ? ` with sources: ["${source}"]` : ''} to enable it`,
        );
      }
      requireMethod(req, 'POST');
      requireContentType(req, registry?.contentTypes ?? JSON_CONTENT_TYPES);
      // Credentials come from the path and headers, so a sender without them is refused before
      // Escalator holds any of its body (the GitHub route must read first: its signature is over the body).
      const authenticated = await authenticate(req, source, auth, pathToken, options, credentials);
      const body = await readBody(req, options.maxBodyBytes);
      bodyRead = true;
      const payload = parseJson(body);
      const context = {
        deliveryId: headerOf(req, 'x-request-id') ?? headerOf(req, 'x-delivery-id') ?? randomUUID(),
        receivedAt: now().toISOString(),
      };
      const result: NormalizeResult = registry
        ? registry.normalize(payload, context)
        : normalizeCiImage(payload, context);
      if (result.kind === 'invalid') throw new HttpError(400, result.message);
      if (result.kind === 'ignored') {
        count(source, 'ignored', result.reason);
        return sendJson(res, 200, { ignored: result.reason, detail: result.detail });
      }
      const prefixes = authenticated.images;
      const outside = prefixes ? result.events.filter((event) => !imageAllowed(prefixes, event.repository)) : [];
      if (prefixes && outside.length > 0) {
        // Nothing of the request is kept: a sender announcing images it may not is misconfigured or hostile.
        throw new HttpError(
          403,
          `${authenticated.scope.by} may announce images under ${prefixes.join(', ')} only, not ${[...new Set(outside.map((event) => event.repository))].slice(0, 5).join(', ')}; nothing of this request was accepted. Ask an operator to add the prefix to the token's images`,
        );
      }
      const jobs: string[] = [];
      const duplicates: Array<{ image: string; job: string; firstSeenAt: string; state: string; outcome: string }> = [];
      const retried: string[] = [];
      for (const event of result.events) {
        const added = await enqueueImage(options.producer, event, authenticated.scope);
        jobs.push(added.id);
        const image = `${event.repository}:${event.tag}${event.digest ? `@${event.digest}` : ''}`;
        if (added.retried) retried.push(image);
        if (added.duplicate)
          duplicates.push({
            image,
            job: added.id,
            firstSeenAt: added.duplicate.firstSeenAt,
            state: added.duplicate.state,
            outcome: duplicateOutcome(added.duplicate),
          });
      }
      const accepted = result.events.length - duplicates.length;
      const { scope } = authenticated;
      // What the events may change: a sender learns here, not from silence, that they apply only to these owners.
      const answer = {
        accepted,
        jobs,
        scope: { credential: scope.by, owners: scope.owners },
        ...(duplicates.length ? { duplicate: duplicates.length, duplicates } : {}),
        ...(retried.length ? { retried } : {}),
        ...(result.ignored?.length ? { ignored: result.ignored } : {}),
      };
      if (accepted === 0) {
        count(source, 'duplicate');
        options.log.info(
          { source, deliveryId: context.deliveryId, by: scope.by, duplicates },
          'Registry event already seen: no new work',
        );
        return sendJson(res, 200, answer);
      }
      count(source, 'accepted');
      options.log.info(
        {
          source,
          deliveryId: context.deliveryId,
          by: scope.by,
          owners: scope.owners,
          images: result.events.map((e) => `${e.repository}:${e.tag}`),
          ...(duplicates.length ? { duplicates } : {}),
          ...(retried.length ? { retried } : {}),
        },
        'Registry event accepted',
      );
      return sendJson(res, 202, answer);
    } catch (error) {
      if (error instanceof QueueUnavailableError) {
        count(source, 'unavailable');
        options.log.warn({ source, err: { message: error.message } }, 'Registry event not accepted: queue unavailable');
        return sendJson(res, 503, { error: `cannot accept the event now: ${error.message}` }, { 'retry-after': '5' });
      }
      if (error instanceof HttpError) {
        count(source, outcomeOf(error.status));
        return sendRefusal(req, res, error, bodyRead);
      }
      throw error;
    }
  };
}

/** What became of the first delivery of an event sent again, in words for the sender. */
function duplicateOutcome(duplicate: DuplicateJob): string {
  switch (duplicate.state) {
    case 'completed':
      // The stored reason is never replayed: a job stored by an earlier version held the digest a
      // tag points at, which the sender did not send (the worker's log keeps the reason).
      if (isRefusal(duplicate.result)) return `it was refused: ${REFUSED_FOR_SENDER}`;
      return typeof duplicate.result === 'number'
        ? duplicate.result === 0
          ? "it changed nothing: no environment in the credential's scope takes this image with this tag (the log of that delivery says why)"
          : `it scheduled ${duplicate.result} bump${duplicate.result === 1 ? '' : 's'}`
        : 'it was processed';
    case 'active':
      return 'it is being processed now';
    default:
      return `it is ${duplicate.state}, not processed yet`;
  }
}

/** An image job's answer when the registry contradicted the event (src/jobs/shared/verify-image.ts). */
function isRefusal(result: unknown): result is { refused: string } {
  return typeof result === 'object' && result !== null && typeof (result as { refused?: unknown }).refused === 'string';
}

/** The mechanism behind each {@link RegistryAuth} a registry descriptor names (the CI API: `bearer`, or GitHub Actions OIDC). */
async function authenticate(
  req: IncomingMessage,
  source: string,
  auth: RegistryAuth,
  pathToken: string | undefined,
  options: RegistryRouteOptions,
  credentials: IntakeCredentials,
): Promise<Authenticated> {
  if (auth === 'google-oidc') {
    if (!options.verifyGoogleToken)
      throw new HttpError(
        404,
        'Google Artifact Registry intake is disabled; set ESCALATOR_GAR_AUDIENCE and ESCALATOR_GAR_SERVICE_ACCOUNT',
      );
    await options.verifyGoogleToken(req.headers.authorization);
    // Until registry verification exists, the Pub/Sub topic is one operator's: its events may change every installation.
    return { scope: { by: 'gar:ESCALATOR_GAR_SERVICE_ACCOUNT', owners: '*' } };
  }
  if (auth === 'path-token') {
    if (!pathToken)
      throw new HttpError(
        401,
        `${source} cannot send an Authorization header, so its token is in the path; configure the webhook URL as /registry/${source}/<token>`,
      );
    return credentials.authenticate(pathToken, source, true);
  }
  if (pathToken)
    throw new HttpError(
      404,
      `${source} authenticates with the Authorization header; use /registry/${source} without a path token`,
    );
  const header = req.headers.authorization ?? '';
  if (!header)
    throw new HttpError(
      401,
      `missing Authorization header; send Authorization: Bearer <token>${source === 'ci' ? ' (a GitHub Actions id-token, or a scoped token)' : ''}`,
      { 'www-authenticate': 'Bearer' },
    );
  // Harbor, ACR and EventBridge API destinations send whatever header value the operator typed.
  const token = bearerToken(header) ?? header.trim();
  if (source === 'ci' && options.verifyGitHubToken && looksLikeJwt(token)) return options.verifyGitHubToken(token);
  return credentials.authenticate(token, source, false);
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' && /^[\w.-]{1,128}$/.test(value) ? value : undefined;
}

function outcomeOf(status: number): IntakeOutcome {
  switch (status) {
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 413:
      return 'too-large';
    case 415:
      return 'unsupported-media';
    case 405:
      return 'method';
    case 404:
      return 'not-found';
    default:
      return 'invalid';
  }
}
