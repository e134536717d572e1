import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isRegistrySource, normalizeCiImage, normalizers, type NormalizeResult, type Source } from '../events/index.js';
import type { Logger } from '../observability/logger.js';
import { intakeRequests } from '../observability/metrics.js';
import { enqueueImage } from '../jobs/image.js';
import { QueueUnavailableError, type Producer } from '../queue/producer.js';
import { sendJson, type Handler } from '../web/server.js';
import { HttpError, parseJson, readBody, requireAuthorization, requireContentType, requireMethod, secretsEqual } from './http.js';

export type IntakeOutcome = 'accepted' | 'ignored' | 'invalid' | 'unauthorized' | 'too-large' | 'unsupported-media' | 'unavailable' | 'method' | 'not-found';

export interface RegistryRouteOptions {
  producer: Producer;
  log: Logger;
  maxBodyBytes: number;
  /** Shared token for registry routes; the routes answer 404 while it is unset. */
  registryToken?: string;
  /** Bearer token for the CI API; it answers 404 while unset. */
  ciToken?: string;
  /** Verifies the Google-signed OIDC token of Pub/Sub push deliveries (gar). */
  verifyGoogleToken?: (authorization: string | undefined) => Promise<void>;
  onOutcome?: (source: string, outcome: IntakeOutcome, detail?: string) => void;
  now?: () => Date;
}

const json = ['application/json', '+json'];
const distributionTypes = ['application/vnd.docker.distribution.events.v1+json', 'application/vnd.docker.distribution.events.v2+json', 'application/json'];
/** Senders that cannot set a header put the token in the path instead: /registry/<source>/<token>. */
const pathTokenSources = new Set(['dockerhub', 'quay']);

/**
 * `POST /registry/<source>` and `POST /api/v1/images`. Each request goes through the same steps:
 * method → content type (415) → authentication (401) → size (413) → parse and validate (400) →
 * normalize → enqueue (503 when Redis cannot take it) → 202 only once Redis holds every job.
 */
export function registryRoutes(options: RegistryRouteOptions): Handler {
  const now = options.now ?? (() => new Date());
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
      if (source !== 'ci' && !isRegistrySource(source)) throw new HttpError(404, `unknown registry "${source}"; use one of ${Object.keys(normalizers).join(', ')}`);
      if (source === 'ci' ? !options.ciToken : !options.registryToken && source !== 'gar') {
        throw new HttpError(404, source === 'ci' ? 'the CI API is disabled; set ESCALATOR_CI_TOKEN to enable it' : 'registry intake is disabled; set ESCALATOR_REGISTRY_TOKEN to enable it');
      }
      requireMethod(req, 'POST');
      requireContentType(req, source === 'distribution' ? distributionTypes : json);
      // Credentials come from the path and headers, so a sender without them is refused before
      // Escalator holds any of its body (the GitHub route must read first: its signature is over the body).
      await authenticate(req, source, pathToken, options);
      const body = await readBody(req, options.maxBodyBytes);
      bodyRead = true;
      const payload = parseJson(body);
      const context = {
        deliveryId: headerOf(req, 'x-request-id') ?? headerOf(req, 'x-delivery-id') ?? randomUUID(),
        receivedAt: now().toISOString(),
      };
      const result: NormalizeResult = source === 'ci' ? normalizeCiImage(payload, context) : normalizers[source as Exclude<Source, 'ci'>](payload, context);
      if (result.kind === 'invalid') throw new HttpError(400, result.message);
      if (result.kind === 'ignored') {
        count(source, 'ignored', result.reason);
        return sendJson(res, 200, { ignored: result.reason, detail: result.detail });
      }
      const jobs: string[] = [];
      for (const event of result.events) {
        const added = await enqueueImage(options.producer, event);
        jobs.push(added.id);
      }
      count(source, 'accepted');
      options.log.info({ source, deliveryId: context.deliveryId, images: result.events.map((e) => `${e.repository}:${e.tag}`) }, 'Registry event accepted');
      return sendJson(res, 202, { accepted: result.events.length, jobs, ...(result.ignored?.length ? { ignored: result.ignored } : {}) });
    } catch (error) {
      if (error instanceof QueueUnavailableError) {
        count(source, 'unavailable');
        options.log.warn({ source, err: { message: error.message } }, 'Registry event not accepted: queue unavailable');
        return sendJson(res, 503, { error: `cannot accept the event now: ${error.message}` }, { 'retry-after': '5' });
      }
      if (error instanceof HttpError) {
        count(source, outcomeOf(error.status));
        // Refused before its body was read: drop the rest of it and the connection with it.
        if (!bodyRead) req.resume();
        return sendJson(res, error.status, { error: error.message }, bodyRead ? error.headers : { ...error.headers, connection: 'close' });
      }
      throw error;
    }
  };
}

async function authenticate(req: IncomingMessage, source: string, pathToken: string | undefined, options: RegistryRouteOptions): Promise<void> {
  if (source === 'ci') return requireAuthorization(req, options.ciToken as string, 'CI token (ESCALATOR_CI_TOKEN)');
  if (source === 'gar') {
    if (!options.verifyGoogleToken) throw new HttpError(404, 'Google Artifact Registry intake is disabled; set ESCALATOR_GAR_AUDIENCE and ESCALATOR_GAR_SERVICE_ACCOUNT');
    return options.verifyGoogleToken(req.headers.authorization);
  }
  const token = options.registryToken as string;
  if (pathTokenSources.has(source)) {
    if (!pathToken || !secretsEqual(pathToken, token)) throw new HttpError(401, `the path token does not match; configure the webhook URL as /registry/${source}/<ESCALATOR_REGISTRY_TOKEN>`);
    return;
  }
  if (pathToken) throw new HttpError(404, `${source} authenticates with the Authorization header; use /registry/${source} without a path token`);
  requireAuthorization(req, token);
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' && /^[\w.-]{1,128}$/.test(value) ? value : undefined;
}

function outcomeOf(status: number): IntakeOutcome {
  switch (status) {
    case 401:
      return 'unauthorized';
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

