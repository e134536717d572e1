import type { IncomingMessage, ServerResponse } from 'node:http';
import { verify } from '@octokit/webhooks-methods';
import type { Probot } from 'probot';
import type { Logger } from '../observability/logger.js';
import { intakeRequests, webhookUnverifiedBytes } from '../observability/metrics.js';
import { QueueUnavailableError } from '../queue/producer.js';
import { isRedisUnavailable } from '../queue/connection.js';
import { checkGitHubPayload } from './github-payloads.js';
import { sendJson, type Handler } from '../web/server.js';
import { BodyBudget, HttpError, readBody, requireContentType, requireMethod } from './http.js';

/** GitHub caps webhook payloads at 25 MB and drops larger ones itself. */
const githubMaxBody = 25 * 1024 * 1024;

/**
 * GitHub's event names are lowercase words joined by `_` (`push`, `registry_package`). Anything
 * else is refused before Probot looks it up: @octokit/webhooks keeps its handlers in a plain
 * object, so a name like `__proto__` or `valueOf` reaches `Object.prototype` and fails as a 500.
 */
const eventNamePattern = /^[a-z][a-z_]{0,63}$/;

export interface VerifiedDelivery {
  id: string;
  name: string;
  /** The exact bytes GitHub signed; relays re-sign these, never a re-serialization. */
  body: string;
  payload: unknown;
}

/**
 * `POST /api/github/webhooks`, in octokit/webhooks.js order: method → content type → headers →
 * size → signature over the raw bytes → parse → handlers. We read the body ourselves (instead of
 * Probot's middleware) because the relay needs the exact bytes. Status codes mean something:
 * 400 bad signature or headers, 415 wrong type, 413 too big, 503 when Redis cannot take the work
 * (GitHub records the failure and the delivery can be redelivered), 500 on a handler bug.
 */
export function githubWebhookRoute(options: {
  probot: Probot;
  secret: string;
  log: Logger;
  path?: string;
  bufferBytes: number;
  onVerified?: (delivery: VerifiedDelivery) => Promise<void>;
}): Handler {
  const path = options.path ?? '/api/github/webhooks';
  const budget = new BodyBudget(options.bufferBytes, 'ESCALATOR_WEBHOOK_BUFFER_BYTES', (held) =>
    webhookUnverifiedBytes.set(held),
  );
  return async (req: IncomingMessage, res: ServerResponse) => {
    if ((req.url ?? '').split('?')[0] !== path) return false;
    try {
      requireMethod(req, 'POST');
      requireContentType(req, ['application/json']);
      const name = header(req, 'x-github-event');
      const id = header(req, 'x-github-delivery');
      const signature = header(req, 'x-hub-signature-256');
      const missing = [
        !name && 'x-github-event',
        !id && 'x-github-delivery',
        !signature && 'x-hub-signature-256',
      ].filter(Boolean);
      if (missing.length > 0) throw new HttpError(400, `required headers missing: ${missing.join(', ')}`);
      if (!eventNamePattern.test(name as string) || (name as string) in Object.prototype) {
        throw new HttpError(
          400,
          `x-github-event ${JSON.stringify((name as string).slice(0, 100))} is not a GitHub event name (lowercase letters and "_")`,
        );
      }
      const body = (await readBody(req, githubMaxBody, "GitHub's own webhook size limit", budget)).toString('utf8');
      if (!(await verify(options.secret, body, signature as string).catch(() => false))) {
        throw new HttpError(
          400,
          'signature does not match the payload and the webhook secret; check WEBHOOK_SECRET against the App settings',
        );
      }
      let payload: unknown;
      try {
        payload = JSON.parse(body);
      } catch {
        throw new HttpError(400, 'the payload is not valid JSON');
      }
      // Every GitHub event payload is an object; handlers read fields of it.
      if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
        throw new HttpError(
          400,
          `the payload is ${payload === null ? 'null' : Array.isArray(payload) ? 'an array' : `a ${typeof payload}`}, not a JSON object`,
        );
      }
      // @octokit/webhooks routes on `${name}.${action}`: an action that is a 10,000-deep array
      // overflows the stack turning it into text. GitHub's actions are strings.
      const action = (payload as { action?: unknown }).action;
      if (action !== undefined && typeof action !== 'string') {
        throw new HttpError(
          400,
          `action must be a string, found ${Array.isArray(action) ? 'an array' : action === null ? 'null' : `a ${typeof action}`}`,
        );
      }
      // Probot authenticates every event as `installation.id` before any handler runs, and
      // throws (a 500) for an id that is not a number.
      const installation = (payload as { installation?: unknown }).installation;
      const installationId =
        typeof installation === 'object' && installation !== null ? (installation as { id?: unknown }).id : undefined;
      // Look at the type before converting: Number() of a deeply nested array overflows the stack.
      const validId =
        (typeof installationId === 'number' && Number.isSafeInteger(installationId) && installationId > 0) ||
        (typeof installationId === 'string' && /^[1-9]\d{0,15}$/.test(installationId));
      if (installationId !== undefined && installationId !== null && !validId) {
        const shown =
          typeof installationId === 'string' || typeof installationId === 'number'
            ? JSON.stringify(installationId).slice(0, 100)
            : Array.isArray(installationId)
              ? 'an array'
              : `a ${typeof installationId}`;
        throw new HttpError(400, `installation.id ${shown} is not an installation id (a positive whole number)`);
      }
      const problem = checkGitHubPayload(name as string, payload);
      if (problem) throw new HttpError(400, problem);
      const delivery = { id: id as string, name: name as string, body, payload };
      // Logged here rather than in a Probot onAny handler: each handler costs Probot a context.
      options.log.info(
        {
          deliveryId: delivery.id,
          event: delivery.name,
          repo: (payload as { repository?: { full_name?: unknown } } | null)?.repository?.full_name,
        },
        'GitHub event received',
      );
      await options.onVerified?.(delivery);
      await options.probot.receive({ id: delivery.id, name: delivery.name, payload } as Parameters<
        Probot['receive']
      >[0]);
      intakeRequests.inc({ source: 'github', outcome: 'accepted' });
      return sendJson(res, 202, { ok: true });
    } catch (error) {
      if (error instanceof HttpError) {
        intakeRequests.inc({
          source: 'github',
          outcome:
            error.status === 400
              ? 'invalid'
              : error.status === 413
                ? 'too-large'
                : error.status === 415
                  ? 'unsupported-media'
                  : error.status === 503
                    ? 'busy'
                    : 'method',
        });
        if (error.status === 503)
          options.log.warn(
            { deliveryId: header(req, 'x-github-delivery') },
            'GitHub delivery not accepted: too many unverified bodies in flight',
          );
        return sendJson(res, error.status, { error: error.message }, error.headers);
      }
      const inner = unwrap(error);
      if (inner instanceof QueueUnavailableError || isRedisUnavailable(error)) {
        options.log.warn(
          { deliveryId: header(req, 'x-github-delivery') },
          'GitHub delivery not accepted: queue unavailable',
        );
        intakeRequests.inc({ source: 'github', outcome: 'unavailable' });
        return sendJson(
          res,
          503,
          { error: `cannot accept the delivery now: ${(inner as Error).message}` },
          { 'retry-after': '5' },
        );
      }
      options.log.error({ err: error, deliveryId: header(req, 'x-github-delivery') }, 'GitHub delivery handler failed');
      return sendJson(res, 500, { error: 'a handler failed; the delivery can be redelivered from the App settings' });
    }
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Probot rejects with an AggregateError of the handlers' errors. */
function unwrap(error: unknown): unknown {
  if (error instanceof AggregateError && error.errors.length > 0)
    return error.errors.find((e) => e instanceof QueueUnavailableError) ?? error.errors[0];
  return error;
}
