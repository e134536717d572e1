import { connect, type Socket } from 'node:net';

/**
 * A deliberately naive HTTP/1.1 client over a raw socket, so a fuzz case can send what no
 * well-behaved client would: any method token, header bytes, lying or missing Content-Length,
 * chunked bodies of any size, garbage after the body. One request per connection.
 */
export interface RawRequest {
  method: string;
  path: string;
  /** Header lines in order; duplicates allowed. Values are written as latin1 bytes. */
  headers: Array<[string, string]>;
  /** The body bytes, sent as they are. */
  body?: Buffer;
  /**
   * How the body is framed: `length` adds an exact Content-Length, `chunked` sends it with
   * Transfer-Encoding: chunked in chunks of `chunkSize` (no Content-Length), `none` adds neither
   * (the headers may still carry a lying one).
   */
  framing: 'length' | 'chunked' | 'none';
  chunkSize?: number;
  /** Bytes appended after the request (a smuggling attempt, or a second pipelined request). */
  trailer?: Buffer;
  /** Replace the whole request head with these bytes (malformed request lines). */
  rawHead?: Buffer;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from the first byte written to the last byte of the response read. */
  ms: number;
}

/** `closed`: no final answer arrived; `interim` counts the 1xx answers that did. */
export type RawOutcome =
  { kind: 'response'; response: RawResponse } | { kind: 'closed'; detail: string; ms: number; interim: number };

/** Serialize the head: request line, headers, framing headers, blank line. */
export function requestHead(request: RawRequest, host: string): Buffer {
  if (request.rawHead) return request.rawHead;
  const lines = [`${request.method} ${request.path} HTTP/1.1`, `host: ${host}`, 'connection: close'];
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`);
  if (request.framing === 'length') lines.push(`content-length: ${request.body?.length ?? 0}`);
  if (request.framing === 'chunked') lines.push('transfer-encoding: chunked');
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}

/**
 * Parse one response from `data`; `undefined` while incomplete. Skips interim 1xx responses
 * (a server answers `Expect: 100-continue` with one). `head` is true for HEAD requests.
 */
export function parseResponse(data: Buffer, head: boolean): Omit<RawResponse, 'ms'> | undefined {
  let offset = 0;
  for (;;) {
    const end = data.indexOf('\r\n\r\n', offset);
    if (end < 0) return undefined;
    const lines = data.subarray(offset, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1]);
    if (!Number.isInteger(status)) throw new Error(`not an HTTP response: ${JSON.stringify(lines[0])}`);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const bodyStart = end + 4;
    if (status >= 100 && status < 200) {
      offset = bodyStart;
      continue;
    }
    if (head || status === 204 || status === 304) return { status, headers, body: '' };
    if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (data.length - bodyStart < length) return undefined;
      return { status, headers, body: data.subarray(bodyStart, bodyStart + length).toString('utf8') };
    }
    if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const parts: Buffer[] = [];
      let at = bodyStart;
      for (;;) {
        const lineEnd = data.indexOf('\r\n', at);
        if (lineEnd < 0) return undefined;
        const size = parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
        if (Number.isNaN(size)) throw new Error('bad chunk size in response');
        if (size === 0) return { status, headers, body: Buffer.concat(parts).toString('utf8') };
        if (data.length < lineEnd + 2 + size + 2) return undefined;
        parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
      }
    }
    return undefined; // close-delimited: complete when the socket ends
  }
}

function chunked(body: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < body.length; at += size) {
    const part = body.subarray(at, at + size);
    out.push(Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]));
  }
  out.push(Buffer.from('0\r\n\r\n'));
  return out;
}

function bodyPieces(request: RawRequest): Buffer[] {
  const body = request.body ?? Buffer.alloc(0);
  if (request.framing === 'chunked') return chunked(body, request.chunkSize ?? 16 * 1024);
  const pieces: Buffer[] = [];
  for (let at = 0; at < body.length; at += 256 * 1024) pieces.push(body.subarray(at, at + 256 * 1024));
  return pieces;
}

/**
 * Send one request and read one response. Writing stops as soon as a full response has arrived
 * (a server may refuse a body before reading all of it); the socket is closed after.
 */
export async function sendRaw(url: string, request: RawRequest, timeoutMs = 15_000): Promise<RawOutcome> {
  const { hostname, port } = new URL(url);
  const started = performance.now();
  const socket: Socket = connect({ host: hostname, port: Number(port) });
  socket.setNoDelay(true);
  const received: Buffer[] = [];
  let total = Buffer.alloc(0);
  let done = false;
  const head = request.method.toUpperCase() === 'HEAD';
  return new Promise<RawOutcome>((resolve) => {
    const finish = (outcome: RawOutcome): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(
      () =>
        finish({
          kind: 'closed',
          detail: `no response within ${timeoutMs} ms`,
          ms: performance.now() - started,
          interim: 0,
        }),
      timeoutMs,
    );
    const tryParse = (ended: boolean): void => {
      total = Buffer.concat(received);
      try {
        const parsed = parseResponse(total, head);
        if (parsed) return finish({ kind: 'response', response: { ...parsed, ms: performance.now() - started } });
        if (ended) {
          // A close-delimited body, or only interim (1xx) answers, or nothing usable.
          let offset = 0;
          let interim = 0;
          for (;;) {
            const end = total.indexOf('\r\n\r\n', offset);
            if (end < 0) break;
            const lines = total.subarray(offset, end).toString('latin1').split('\r\n');
            const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1]);
            if (status >= 100 && status < 200) {
              interim += 1;
              offset = end + 4;
              continue;
            }
            const headers: Record<string, string> = {};
            for (const line of lines.slice(1)) {
              const colon = line.indexOf(':');
              if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
            }
            return finish({
              kind: 'response',
              response: {
                status,
                headers,
                body: total.subarray(end + 4).toString('utf8'),
                ms: performance.now() - started,
              },
            });
          }
          const detail =
            interim > 0
              ? `closed after ${interim} interim answer(s) without a final one`
              : total.length > 0
                ? `incomplete response: ${JSON.stringify(total.toString('latin1').slice(0, 200))}`
                : 'closed without a response';
          finish({ kind: 'closed', detail, ms: performance.now() - started, interim });
        }
      } catch (error) {
        finish({ kind: 'closed', detail: (error as Error).message, ms: performance.now() - started, interim: 0 });
      }
    };
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      tryParse(false);
    });
    socket.on('end', () => tryParse(true));
    socket.on('close', () => tryParse(true));
    // A server that answers early and closes makes our remaining writes fail; the answer counts.
    socket.on('error', () => tryParse(true));
    socket.on('connect', () => {
      void (async () => {
        const pieces = [
          requestHead(request, `${hostname}:${port}`),
          ...bodyPieces(request),
          ...(request.trailer ? [request.trailer] : []),
        ];
        for (const piece of pieces) {
          if (done || socket.destroyed) return;
          if (!socket.write(piece)) {
            await new Promise<void>((resolve) => {
              const go = (): void => {
                socket.off('drain', go);
                socket.off('close', go);
                resolve();
              };
              socket.on('drain', go);
              socket.on('close', go);
            });
          }
        }
      })();
    });
  });
}
