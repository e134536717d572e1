/**
 * A webhook receiver for bench/intake.ts, run in its own process so the load generator does not
 * share its event loop. `tsx bench/support/intake-server.ts <kind>`:
 * - `escalator`: Escalator's web role (`ESCALATOR_ROLE=web`, real Redis under BENCH_PREFIX): verifies,
 *   normalizes and enqueues, as in production
 * - `probot`: a bare Probot app on node:http that verifies each delivery and drops it
 *   (PROBOT_ON_ANY=1: with a second, `onAny` handler)
 * Both log nothing. Prints one JSON line `{"url": …}` when listening; closes on SIGTERM.
 * Environment: APP_ID, PRIVATE_KEY, WEBHOOK_SECRET, REDIS_URL, BENCH_PREFIX, ESCALATOR_CI_TOKEN.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createNodeMiddleware, Probot } from 'probot';
import { startEscalator } from '../../src/main/server.js';
import { createLogger } from '../../src/observability/logger.js';

const kind = process.argv[2];
const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set; bench/intake.ts sets it for this process`);
  return value;
};

async function startProbot(): Promise<{ url: string; close: () => Promise<void> }> {
  const probot = new Probot({
    appId: required('APP_ID'),
    privateKey: required('PRIVATE_KEY'),
    secret: required('WEBHOOK_SECRET'),
    log: pino({ level: 'silent' }),
  });
  const middleware = await createNodeMiddleware(
    (app) => {
      app.on('push', async () => {});
      // PROBOT_ON_ANY=1 adds a second no-op handler, as Escalator's logging `onAny` is: Probot
      // builds the event's context (and an installation Octokit) once per handler.
      if (process.env.PROBOT_ON_ANY === '1') app.onAny(async () => {});
    },
    { probot },
  );
  const server = createServer((req, res) => {
    void middleware(req, res, () => {
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function startWeb(): Promise<{ url: string; close: () => Promise<void> }> {
  const app = await startEscalator(
    {
      ESCALATOR_ROLE: 'web',
      APP_ID: required('APP_ID'),
      PRIVATE_KEY: required('PRIVATE_KEY'),
      WEBHOOK_SECRET: required('WEBHOOK_SECRET'),
      REDIS_URL: required('REDIS_URL'),
      ESCALATOR_CI_TOKEN: required('ESCALATOR_CI_TOKEN'),
      // The web role never calls GitHub; nothing listens here.
      GITHUB_API_URL: 'http://127.0.0.1:9/api/v3',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
    },
    { prefix: required('BENCH_PREFIX'), log: createLogger({ level: 'silent' }) },
  );
  return { url: app.url, close: () => app.close() };
}

const running = kind === 'probot' ? await startProbot() : kind === 'escalator' ? await startWeb() : null;
if (!running) throw new Error(`unknown receiver "${kind ?? ''}": use escalator or probot`);
process.stdout.write(`${JSON.stringify({ url: running.url })}\n`);
process.once('SIGTERM', () => {
  void running.close().finally(() => process.exit(0));
});
