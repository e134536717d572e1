import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Test receivers that accept exactly what the real agents accept, written from their source:
 *
 * Argo CD `/api/webhook` (util/webhook/webhook.go `Handler`, go-playground/webhooks v6 `github.Parse`):
 * - no `X-GitHub-Event` (nor another SCM's header) → 400 "Unknown webhook event"
 * - not POST → 405; event other than `push`/`ping` → 400; empty body → 400
 * - secret set: `X-Hub-Signature-256` required, `sha256=` prefix trimmed, at least 6 characters,
 *   `hmac.Equal` against the hex HMAC-SHA256 of the raw body → else 400
 *   (2.12 and older, go-playground before SHA-256 support: `X-Hub-Signature`, `sha1=`, HMAC-SHA1)
 * - JSON that does not parse → 400; then 200. A push refreshes applications only when it names
 *   `repository.html_url` and `ref` (and lists `commits[]` for the changed files).
 *
 * Flux notification-controller receivers (internal/server/receiver_handlers.go):
 * - the receiver is found by the exact request URI `/hook/<sha256(token+name+namespace)>`
 *   (query string included) → else 404
 * - `github`: go-github `ValidatePayload`: media type `application/json` (or form) → else 400;
 *   signature from `X-Hub-Signature-256`, else `X-Hub-Signature`; `<alg>=<hex>` with alg sha1,
 *   sha256 or sha512, HMAC over the raw body → else 400; `X-GitHub-Event` must be one of the
 *   receiver's `events` (case-insensitive) when it lists any → else 400; then 200
 * - `generic-hmac`: go-github `ValidateSignature(X-Signature)`, same `<alg>=<hex>` rules → else 400
 */

export interface AgentRequest {
  method: string;
  /** The request URI as sent (path and query). */
  uri: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  status: number;
  /** Why the agent refused, or `accepted`. */
  verdict: string;
  /** Argo CD only: the payload names what a refresh needs. */
  refreshes?: boolean;
  /** `performance.now()` when the body was fully read. */
  at: number;
}

/** An answer scripted before the agent's own checks (a proxy, an overloaded agent). */
export type Script = (n: number) => { status: number; headers?: Record<string, string>; delayMs?: number } | undefined;

export interface TestAgent {
  /** The URL to configure as the target's `url`. */
  url: string;
  requests: AgentRequest[];
  accepted(): AgentRequest[];
  /** Replace the scripted answers (default: none, the agent's own checks answer). */
  script(script: Script | undefined): void;
  close(): Promise<void>;
}

type Check = (request: { method: string; uri: string; headers: IncomingHttpHeaders; body: Buffer }) => {
  status: number;
  verdict: string;
  refreshes?: boolean;
};

async function startAgent(path: string, check: Check): Promise<TestAgent> {
  const requests: AgentRequest[] = [];
  let script: Script | undefined;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        uri: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      const scripted = script?.(requests.length + 1);
      const answer = scripted ? { status: scripted.status, verdict: `scripted ${scripted.status}` } : check(request);
      requests.push({ ...request, ...answer, at: performance.now() });
      const send = () =>
        res.writeHead(answer.status, { 'content-type': 'text/plain', ...scripted?.headers }).end(answer.verdict);
      if (scripted?.delayMs) setTimeout(send, scripted.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    requests,
    accepted: () => requests.filter((request) => request.verdict === 'accepted'),
    script(next) {
      script = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function hmacHex(algorithm: string, secret: string, body: Buffer): string {
  return createHmac(algorithm, secret).update(body).digest('hex');
}

/** go-playground/webhooks: `hmac.Equal([]byte(signature), []byte(expectedMAC))` on hex strings. */
function equalText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** An Argo CD API server's `/api/webhook` with `webhook.github.secret` set. `legacy`: 2.12 and older. */
export function startArgoCd(options: { secret: string; legacy?: boolean }): Promise<TestAgent> {
  return startAgent('/api/webhook', ({ method, headers, body }) => {
    const event = headers['x-github-event'];
    if (typeof event !== 'string' || event === '') return { status: 400, verdict: 'Unknown webhook event' };
    if (method !== 'POST') return { status: 405, verdict: 'Webhook processing failed: invalid HTTP Method' };
    if (event !== 'push' && event !== 'ping')
      return { status: 400, verdict: 'Webhook processing failed: event not defined to be parsed' };
    if (body.length === 0) return { status: 400, verdict: 'Webhook processing failed: error parsing payload' };
    const [header, prefix, algorithm] = options.legacy
      ? ['x-hub-signature', 'sha1=', 'sha1']
      : ['x-hub-signature-256', 'sha256=', 'sha256'];
    const given = headers[header];
    if (typeof given !== 'string' || given.length === 0)
      return { status: 400, verdict: `Webhook processing failed: missing ${header} Header` };
    const signature = given.startsWith(prefix) ? given.slice(prefix.length) : given;
    if (signature.length < 6) return { status: 400, verdict: 'Webhook processing failed: Invalid Github signature' };
    if (!equalText(signature, hmacHex(algorithm, options.secret, body)))
      return { status: 400, verdict: 'Webhook processing failed: HMAC verification failed' };
    let payload: Record<string, unknown>;
    try {
      payload = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    } catch {
      return { status: 400, verdict: 'Webhook processing failed: error parsing payload' };
    }
    const repository = payload.repository as Record<string, unknown> | undefined;
    const refreshes =
      event === 'push' &&
      typeof repository?.html_url === 'string' &&
      typeof payload.ref === 'string' &&
      Array.isArray(payload.commits);
    return { status: 200, verdict: 'accepted', refreshes };
  });
}

/** go-github `messageMAC` + `checkMAC`: `<alg>=<hex>`, alg sha1/sha256/sha512. */
function validateSignature(signature: string | undefined, body: Buffer, token: string): string | undefined {
  if (!signature) return 'missing signature';
  const parts = signature.split('=');
  if (parts.length !== 2) return `error parsing signature ${JSON.stringify(signature)}`;
  const [algorithm, hex] = parts as [string, string];
  if (!['sha1', 'sha256', 'sha512'].includes(algorithm))
    return `unknown hash type prefix: ${JSON.stringify(algorithm)}`;
  if (!/^([0-9a-fA-F]{2})*$/.test(hex)) return `error decoding signature ${JSON.stringify(signature)}`;
  const given = Buffer.from(hex, 'hex');
  const expected = createHmac(algorithm, token).update(body).digest();
  return given.length === expected.length && timingSafeEqual(given, expected)
    ? undefined
    : 'payload signature check failed';
}

/** Flux's `/hook/<sha256(token + name + namespace)>`. */
export function fluxWebhookPath(token: string, name: string, namespace: string): string {
  return `/hook/${createHash('sha256')
    .update(token + name + namespace)
    .digest('hex')}`;
}

/** A Flux notification-controller receiver server holding one Receiver. */
export function startFluxReceiver(options: {
  type: 'github' | 'generic-hmac';
  token: string;
  name?: string;
  namespace?: string;
  events?: string[];
}): Promise<TestAgent> {
  const path = fluxWebhookPath(options.token, options.name ?? 'escalator', options.namespace ?? 'flux-system');
  return startAgent(path, ({ uri, headers, body }) => {
    if (uri !== path) return { status: 404, verdict: 'no receiver at this URI' };
    if (options.type === 'generic-hmac') {
      const problem = validateSignature(headers['x-signature'] as string | undefined, body, options.token);
      return problem
        ? { status: 400, verdict: `unable to validate HMAC signature: ${problem}` }
        : { status: 200, verdict: 'accepted' };
    }
    const mediaType = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (mediaType === '') return { status: 400, verdict: 'mime: no media type' };
    if (mediaType !== 'application/json' && mediaType !== 'application/x-www-form-urlencoded') {
      return { status: 400, verdict: `webhook request has unsupported Content-Type ${JSON.stringify(mediaType)}` };
    }
    const signature =
      (headers['x-hub-signature-256'] as string | undefined) || (headers['x-hub-signature'] as string | undefined);
    const problem = validateSignature(signature, body, options.token);
    if (problem) return { status: 400, verdict: `the GitHub signature header is invalid, err: ${problem}` };
    const event = String(headers['x-github-event'] ?? '');
    if (options.events?.length && !options.events.some((allowed) => allowed.toLowerCase() === event.toLowerCase())) {
      return { status: 400, verdict: `the GitHub event '${event}' is not authorised` };
    }
    return { status: 200, verdict: 'accepted' };
  });
}
