import type { IncomingMessage, ServerResponse } from 'node:http';
import { Probot, Server } from 'probot';
import type { Logger } from '../observability/logger.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;
type SetupAppFactory = (options: { host: string; port: number; log: Logger }) => () => Promise<Handler>;

/** Where Escalator receives GitHub's webhooks (src/intake/github-webhook-route.ts). */
const WEBHOOK_PATH = '/api/github/webhooks';

export interface SetupServer {
  url: string;
  close(): Promise<void>;
}

/**
 * `npm start` without App credentials: Probot's setup page, which registers the GitHub App from
 * app.yml through GitHub's manifest flow and writes APP_ID, PRIVATE_KEY and WEBHOOK_SECRET into
 * `.env`. Escalator adds to it:
 * 1. the manifest's webhook URL is `<the address the page was opened at>/api/github/webhooks`
 *    (Probot alone registers `<address>/`, where Escalator answers nothing); a WEBHOOK_PROXY_URL
 *    you set is used as it is
 * 2. no smee.io channel is made: Probot loads its smee client only when run through npx, and
 *    Escalator starts no proxy (docs/operations.md says how to forward webhooks to a laptop)
 * 3. `/healthz` answers 200, `/readyz` 503 with what to do
 */
export async function startSetup(
  env: NodeJS.ProcessEnv,
  log: Logger,
  options: { host?: string; port?: number } = {},
): Promise<SetupServer> {
  const host = options.host ?? env.HOST ?? '127.0.0.1';
  const port = options.port ?? Number(env.PORT ?? 3000);
  const ownProxy = Boolean(env.WEBHOOK_PROXY_URL);
  if (!ownProxy) env.NO_SMEE_SETUP = 'true';
  // Probot exports `run`, which owns its server, but not the setup page alone: load it by path.
  const { setupAppFactory } = (await import(new URL('apps/setup.js', import.meta.resolve('probot')).href)) as {
    setupAppFactory: SetupAppFactory;
  };
  const server = new Server({
    host,
    port,
    log,
    // As Probot's own `run` does in setup mode: the instance is not used until the App exists.
    Probot: Probot.defaults({ appId: 1, privateKey: 'setup mode: no key yet', log }),
  });
  let url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  server.addHandler((req, res) => health(req, res, url));
  await server.loadHandlerFactory(async () => {
    const setup = await setupAppFactory({ host, port, log: log.child({ name: 'setup' }) })();
    return async (req: IncomingMessage, res: ServerResponse) => {
      const path = (req.url ?? '').split('?')[0];
      if (ownProxy || req.method !== 'GET' || path !== '/probot') return setup(req, res);
      // Probot reads the manifest's webhook URL from WEBHOOK_PROXY_URL when it renders the page.
      env.WEBHOOK_PROXY_URL = `${addressOf(req)}${WEBHOOK_PATH}`;
      try {
        return await setup(req, res);
      } finally {
        delete env.WEBHOOK_PROXY_URL;
      }
    };
  });
  await server.start();
  url = `http://${host.includes(':') ? `[${host}]` : host}:${server.port}`;
  log.info(
    { url },
    `No GitHub App credentials: open ${url} and choose "Register a GitHub App", then start Escalator again`,
  );
  return { url, close: () => server.stop() };
}

/** The address a browser opened the page at, as Probot works it out for the manifest. */
function addressOf(req: IncomingMessage): string {
  const forwarded = req.headers['x-forwarded-proto'];
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
  const protocol =
    typeof forwarded === 'string' ? forwarded.split(',')[0]?.trim() : forwarded || encrypted ? 'https' : 'http';
  const host = req.headers['x-forwarded-host'] ?? req.headers.host;
  return `${protocol}://${Array.isArray(host) ? host[0] : host}`;
}

function health(req: IncomingMessage, res: ServerResponse, url: string): boolean {
  const path = (req.url ?? '').split('?')[0];
  if (req.method !== 'GET' || (path !== '/healthz' && path !== '/readyz')) return false;
  const next = `the GitHub App is not registered yet: open ${url}, choose "Register a GitHub App", then start Escalator again`;
  res
    .writeHead(path === '/healthz' ? 200 : 503, { 'content-type': 'application/json' })
    .end(
      JSON.stringify(
        path === '/healthz'
          ? { status: 'ok', mode: 'setup', next }
          : { status: 'not ready', mode: 'setup', checks: { github: next } },
      ),
    );
  return true;
}
