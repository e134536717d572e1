import type { IncomingMessage, ServerResponse } from 'node:http';
import { secretsEqual } from '../web/secrets.js';
import { sendJson } from '../web/server.js';

/**
 * The steps every intake route takes (octokit/webhooks.js does the same): method → content type
 * (415) → size cap (413) and authentication (401) → parse and validate (400) → normalize →
 * enqueue (503 when Redis cannot take it) → 202. Authentication comes first where the credentials
 * are in the path or a header (registries, CI), after the body where they sign it (GitHub).
 * Each failing step is an `HttpError` whose message tells the sender what to send instead.
 */
export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function requireMethod(req: IncomingMessage, method: string): void {
  if (req.method !== method) throw new HttpError(405, `use ${method} for this route`, { allow: method });
}

/** The media type without parameters, lowercased ('' when absent). */
export function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

export function requireContentType(req: IncomingMessage, accepted: readonly string[]): void {
  const type = mediaType(req);
  const ok = accepted.some((a) => a === type || (a === '+json' && type.endsWith('+json')));
  if (!ok)
    throw new HttpError(
      415,
      `content type ${type || '(none)'} is not accepted here; send ${accepted.filter((a) => a !== '+json').join(' or ')}`,
    );
}

/**
 * Bytes that requests may hold in bodies not yet authenticated, across all connections. A body
 * is checked only once it has arrived, so without this anyone could hold the route's full limit
 * per connection (25 MB for GitHub) for as long as the request timeout allows.
 */
export class BodyBudget {
  private held = 0;

  /** `onChange` hears the bytes held after every take and release (a metrics gauge, say). */
  constructor(
    readonly limit: number,
    readonly setting: string,
    private readonly onChange: (held: number) => void = () => undefined,
  ) {}

  /** Take `bytes` if they fit; false when they do not (nothing is taken then). */
  take(bytes: number): boolean {
    if (this.held + bytes > this.limit) return false;
    this.held += bytes;
    this.onChange(this.held);
    return true;
  }

  release(bytes: number): void {
    if (bytes === 0) return;
    this.held -= bytes;
    this.onChange(this.held);
  }

  /** Bytes held right now. */
  get inUse(): number {
    return this.held;
  }
}

/**
 * An answer sent before the request body has arrived closes the connection: the client may still
 * be sending, and a kept-alive connection would read the rest of that body as its next request.
 */
const UNREAD_BODY = { connection: 'close' } as const;

/**
 * Read the raw body, refusing more than `limit` bytes with 413: at once from Content-Length, and
 * while streaming when the sender lies or uses chunked encoding; and with 503 and Retry-After while
 * `budget` is spent by other requests' bodies. Signatures are verified over these bytes.
 */
export async function readBody(
  req: IncomingMessage,
  limit: number,
  setting = 'ESCALATOR_MAX_BODY_BYTES',
  budget?: BodyBudget,
): Promise<Buffer> {
  const why = setting ? ` (${setting})` : '';
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw new HttpError(413, `body of ${declared} bytes is larger than the limit of ${limit} bytes${why}`, UNREAD_BODY);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let taken = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        req.resume();
        throw new HttpError(413, `body is larger than the limit of ${limit} bytes${why}`, UNREAD_BODY);
      }
      if (budget) {
        if (!budget.take(chunk.length)) {
          req.resume();
          throw new HttpError(
            503,
            `other requests are sending ${budget.inUse} bytes of bodies that are not verified yet, the most Escalator holds at once (${budget.setting}); retry in a few seconds`,
            { 'retry-after': '5', ...UNREAD_BODY },
          );
        }
        taken += chunk.length;
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks, size);
  } finally {
    budget?.release(taken);
  }
}

/**
 * `Authorization: Bearer <token>` — or the bare token, since Harbor, ACR and EventBridge API
 * destinations send whatever header value the operator typed.
 */
export function requireAuthorization(req: IncomingMessage, token: string, name = 'registry token'): void {
  const header = req.headers.authorization ?? '';
  const given = header.toLowerCase().startsWith('bearer ') ? header.slice(7).trim() : header.trim();
  if (!header)
    throw new HttpError(
      401,
      `missing Authorization header; send Authorization: Bearer <token> with the configured ${name}`,
      { 'www-authenticate': 'Bearer' },
    );
  if (!secretsEqual(given, token))
    throw new HttpError(401, 'the Authorization token does not match the configured token', {
      'www-authenticate': 'Bearer',
    });
}

export function parseJson(body: Buffer): unknown {
  if (body.length === 0) throw new HttpError(400, 'the body is empty; send a JSON document');
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch (error) {
    throw new HttpError(400, `the body is not valid JSON (${(error as Error).message})`);
  }
}

/**
 * Answer a refused request with the error's status, reason and headers. One refused before its
 * body was read drops the rest of the body, and the connection with it.
 */
export function sendRefusal(req: IncomingMessage, res: ServerResponse, error: HttpError, bodyRead: boolean): true {
  if (!bodyRead) req.resume();
  return sendJson(
    res,
    error.status,
    { error: error.message },
    bodyRead ? error.headers : { ...error.headers, connection: 'close' },
  );
}
