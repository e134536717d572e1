import type { RelayRequest } from '../planners/relay.js';

/** What an agent answered to one relayed request. */
export interface AgentResponse {
  status: number;
  /** From the first byte sent to the answer's headers and body read, in milliseconds. */
  latencyMs: number;
  /** The raw `Retry-After` header, when the agent sent one. */
  retryAfter?: string;
  /** The first bytes of the answer's body, for the delivery log (agents explain refusals there). */
  excerpt: string;
}

/** The agent did not answer: connection refused or reset, DNS failure, or the timeout passed. */
export class AgentUnreachableError extends Error {
  override name = 'AgentUnreachableError';
  constructor(
    message: string,
    readonly latencyMs: number,
    readonly timedOut: boolean,
  ) {
    super(message);
  }
}

const EXCERPT_BYTES = 300;

/**
 * POST one relayed request and report the answer; any HTTP status is an answer, not an error.
 * Redirects are not followed (`redirect: 'manual'`): the URL is used exactly, and a relay must
 * never be steered somewhere else. Keep-alive connections are reused across deliveries.
 */
export async function relayToAgent(
  request: RelayRequest,
  options: { timeoutMs: number; now?: () => number },
): Promise<AgentResponse> {
  const now = options.now ?? (() => performance.now());
  const started = now();
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (error) {
    const latencyMs = Math.round(now() - started);
    const timedOut = (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError';
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason = timedOut
      ? `no answer within ${options.timeoutMs} ms`
      : (cause?.code ?? cause?.message ?? (error as Error).message);
    throw new AgentUnreachableError(`${new URL(request.url).host} did not answer: ${reason}`, latencyMs, timedOut);
  }
  let excerpt = '';
  try {
    excerpt = (await readCapped(response, EXCERPT_BYTES)).replace(/\s+/g, ' ').trim();
  } catch {
    // The status is what counts; a body cut off by the timeout leaves the excerpt empty.
  }
  const retryAfter = response.headers.get('retry-after') ?? undefined;
  return {
    status: response.status,
    latencyMs: Math.round(now() - started),
    excerpt,
    ...(retryAfter !== undefined ? { retryAfter } : {}),
  };
}

/** Read at most `limit` bytes of the body and drop the rest, so the connection can be reused. */
async function readCapped(response: Response, limit: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size < limit) chunks.push(value.subarray(0, limit - size));
    size += value.length;
  }
  return Buffer.concat(chunks).toString('utf8');
}
