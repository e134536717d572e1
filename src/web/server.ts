import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { redactPath, type Logger } from '../observability/logger.js';
import { httpMethodLabel, httpRequests, httpRouteLabel } from '../observability/metrics.js';
import { isRedisUnavailable } from '../queue/connection.js';

/** A route handler answers and returns true, or returns false to let the next one try. */
export type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean> | boolean;

export interface WebServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): true {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
  return true;
}

/**
 * Answer on a bare socket, for requests Node refuses before any handler sees them: the same JSON
 * `{ error }` every route sends, then close (the connection's framing can no longer be trusted).
 */
function answerSocket(socket: Duplex, status: number, message: string): void {
  const net = socket as Partial<Socket> & Duplex;
  // Node's own rule (`socketOnError`): write only on a socket that has not started a response.
  if (!socket.writable || (net.bytesWritten ?? 0) > 0) {
    socket.destroy();
    return;
  }
  const text = JSON.stringify({ error: message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
  );
}

/** What to answer when Node's HTTP parser refuses a request (`clientError`). */
function clientErrorAnswer(error: NodeJS.ErrnoException & { reason?: string }): [number, string] {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'the request headers are larger than the server accepts (16 KB); send fewer or shorter headers'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'the request did not arrive completely in time; send it again'];
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return [413, 'the chunk extensions of the body are too large; send the body without chunk extensions'];
    default:
      return [
        400,
        `the request is not valid HTTP/1.1 (${error.reason ?? error.message}); check the request line, headers and body framing`,
      ];
  }
}

/**
 * The request target as a path. Absolute-form targets (`GET http://host/path`, RFC 9112 §3.2.2)
 * become their path; a target that no URL parser reads is refused here, before routes parse it.
 */
function originForm(target: string): string | undefined {
  if (target === '*') return target;
  try {
    if (target.startsWith('/')) {
      new URL(target, 'http://localhost');
      return target;
    }
    const url = new URL(target);
    return `${url.pathname}${url.search}`;
  } catch {
    return undefined;
  }
}

/**
 * The web role's HTTP server: a list of handlers tried in order, then a 404 that says which routes
 * exist. An unexpected throw is answered 500 and logged; it never takes the process down. Requests
 * Node's parser refuses (bad framing, oversized headers, CONNECT, unknown `Expect`) get the same
 * JSON error body instead of Node's empty default answer or a silently closed connection.
 */
export async function startWebServer(options: {
  host: string;
  port: number;
  handlers: Handler[];
  log: Logger;
  /** What the 404 lists: every route this server answers (default: the probes). */
  routes?: readonly string[];
}): Promise<WebServer> {
  const { handlers, log } = options;
  const routes = options.routes ?? ['GET /healthz', 'GET /readyz', 'GET /metrics'];
  // Node's own Host check answers an empty 400; the handler below says why instead.
  /** Set by `close()`: answers still to come end their connections instead of keeping them alive. */
  let closing = false;
  /** Exchanges not yet answered, so `close()` can tell them to end their connections. */
  const answering = new Set<ServerResponse>();
  const server = createServer({ requireHostHeader: false }, (req, res) => {
    answering.add(res);
    if (closing) res.setHeader('connection', 'close');
    // Counted once the exchange ends, by route template: never by the path itself.
    res.once('close', () => {
      answering.delete(res);
      httpRequests.inc({
        route: httpRouteLabel(req.url),
        method: httpMethodLabel(req.method),
        status: res.writableFinished ? String(res.statusCode) : 'aborted',
      });
      // One already writing when the server closed kept its connection: drop it now it is idle.
      if (closing) setImmediate(() => server.closeIdleConnections());
    });
    void (async () => {
      try {
        if (req.httpVersion === '1.1' && !req.headers.host) {
          sendJson(
            res,
            400,
            { error: 'the request has no Host header; HTTP/1.1 requires one (RFC 9112 §3.2)' },
            { connection: 'close' },
          );
          return;
        }
        const target = originForm(req.url ?? '/');
        if (target === undefined) {
          sendJson(res, 400, {
            error: `the request target ${JSON.stringify((req.url ?? '').slice(0, 200))} is not a path; send an origin-form target like /healthz`,
          });
          return;
        }
        req.url = target;
        for (const handler of handlers) {
          if (await handler(req, res)) return;
        }
        sendJson(res, 404, {
          error: `No route for ${req.method} ${req.url?.split('?')[0]}`,
          routes,
        });
      } catch (error) {
        if (isRedisUnavailable(error)) {
          log.warn({ method: req.method, path: redactPath(req.url ?? '') }, 'Request refused: Redis unavailable');
          if (!res.headersSent)
            sendJson(res, 503, { error: 'Redis is not reachable; retry shortly' }, { 'retry-after': '5' });
          else res.end();
          return;
        }
        // A client that hangs up mid-body is not a server failure (Node: 'aborted', ECONNRESET).
        if (req.destroyed && (error as NodeJS.ErrnoException | undefined)?.code === 'ECONNRESET') {
          log.info({ method: req.method, path: redactPath(req.url ?? '') }, 'Request cut off by the client');
          return;
        }
        log.error({ err: error, method: req.method, path: redactPath(req.url ?? '') }, 'Request handler failed');
        if (!res.headersSent) sendJson(res, 500, { error: 'Internal error; see the server log' });
        else res.end();
      }
    })();
  });
  server.on('clientError', (error: NodeJS.ErrnoException & { reason?: string }, socket: Duplex) => {
    if (error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const [status, message] = clientErrorAnswer(error);
    answerSocket(socket, status, message);
  });
  // Without a listener Node closes CONNECT connections without a word; no route tunnels.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    answerSocket(socket, 405, `${req.method} is not supported here; no route opens a tunnel`);
  });
  // Without a listener Node answers an unknown Expect with an empty 417.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    sendJson(res, 417, {
      error: `Expect: ${String(req.headers.expect).slice(0, 100)} is not supported; send the request without it, or with Expect: 100-continue`,
    });
  });
  // Keep-alive longer than common load balancers' idle timeouts, so they never reuse a closed socket.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        reject(
          new Error(
            `Port ${options.port} on ${options.host} is already in use. Stop the other process or set the PORT environment variable to a free port.`,
          ),
        );
      } else reject(error);
    });
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${host}:${address.port}`,
    // Idle keep-alive connections close at once, and one whose request is being answered closes
    // after its answer: otherwise `server.close()` waits out `keepAliveTimeout` (65 s) for a client
    // that sent a request just before, longer than the 30 s a stopping pod is given.
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        for (const res of answering) if (!res.headersSent) res.setHeader('connection', 'close');
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
