import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../observability/logger.js';

/** A route handler answers and returns true, or returns false to let the next one try. */
export type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean> | boolean;

export interface WebServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): true {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
  return true;
}

/**
 * The web role's HTTP server: a list of handlers tried in order, then a 404 that says which routes
 * exist. An unexpected throw is answered 500 and logged; it never takes the process down.
 */
export async function startWebServer(options: { host: string; port: number; handlers: Handler[]; log: Logger }): Promise<WebServer> {
  const { handlers, log } = options;
  const server = createServer((req, res) => {
    void (async () => {
      try {
        for (const handler of handlers) {
          if (await handler(req, res)) return;
        }
        sendJson(res, 404, { error: `No route for ${req.method} ${req.url?.split('?')[0]}`, routes: ['/healthz', '/readyz', 'POST /api/github/webhooks'] });
      } catch (error) {
        log.error({ err: error, method: req.method, path: req.url?.split('?')[0] }, 'Request handler failed');
        if (!res.headersSent) sendJson(res, 500, { error: 'Internal error; see the server log' });
        else res.end();
      }
    })();
  });
  // Keep-alive longer than common load balancers' idle timeouts, so they never reuse a closed socket.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        reject(new Error(`Port ${options.port} on ${options.host} is already in use. Stop the other process or set the PORT environment variable to a free port.`));
      } else reject(error);
    });
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
