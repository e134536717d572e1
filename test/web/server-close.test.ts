import { Agent, request, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { startWebServer, type Handler, type WebServer } from '../../src/web/server.js';

/**
 * Stopping the web role: a client that keeps its connection alive (GitHub, a load balancer, the
 * sandbox's webhook deliveries) and had a request in flight when the server closed must not hold
 * the close for the 65 s keep-alive timeout; its request is still answered.
 */
describe('closing the web server', () => {
  const agents: Agent[] = [];
  let server: WebServer | undefined;
  afterEach(async () => {
    for (const agent of agents.splice(0)) agent.destroy();
    await server?.close();
  });

  const start = async (handler: Handler) => {
    server = await startWebServer({
      host: '127.0.0.1',
      port: 0,
      log: createLogger({ level: 'silent' }),
      handlers: [handler],
    });
    return server;
  };
  /** A keep-alive POST; resolves with the answer's body and its `connection` header. */
  const post = (url: string) => {
    const agent = new Agent({ keepAlive: true });
    agents.push(agent);
    let started!: () => void;
    const sent = new Promise<void>((resolve) => (started = resolve));
    const answer = new Promise<{ body: string; connection: string | undefined }>((resolve, reject) => {
      const req = request(`${url}/slow`, { agent, method: 'POST' }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ body, connection: res.headers.connection }));
      });
      req.on('error', reject);
      req.end('{}', started);
    });
    return { sent, answer };
  };
  /**
   * A keep-alive POST whose handler runs `before` and then waits: the server is closed while it
   * waits, and let go. Resolves with the answer and how long the close took.
   */
  const closeInFlight = async (before: (res: ServerResponse) => void, end: (res: ServerResponse) => void) => {
    let arrived!: () => void;
    let release!: () => void;
    const inHandler = new Promise<void>((resolve) => (arrived = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const web = await start(async (_req, res) => {
      before(res);
      arrived();
      await released;
      end(res);
      return true;
    });
    const { answer } = post(web.url);
    await inHandler;
    const started = Date.now();
    const closed = web.close();
    release();
    await closed;
    const closeMs = Date.now() - started;
    server = undefined;
    return { answer: await answer, closeMs };
  };

  it('answers a request in flight with connection: close, and closes without waiting out keep-alive', async () => {
    const { answer, closeMs } = await closeInFlight(
      () => undefined,
      (res) => res.end('answered'),
    );
    expect(closeMs).toBeLessThan(5_000);
    expect(answer).toEqual({ body: 'answered', connection: 'close' });
  });

  it('closes a connection whose answer had started before the close once the answer ends', async () => {
    const { answer, closeMs } = await closeInFlight(
      (res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('answer ');
      },
      (res) => res.end('ended'),
    );
    expect(closeMs).toBeLessThan(5_000);
    expect(answer.body).toBe('answer ended');
  });
});
