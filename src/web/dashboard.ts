import type { IncomingMessage, ServerResponse } from 'node:http';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import { secretsEqual } from './secrets.js';
import { sendJson, type Handler } from './server.js';

export const dashboardPath = '/admin/queues';

type Render = (path: string, options: object, done: (error: Error | null, html?: string) => void) => void;
interface ExpressViews {
  engines: Record<string, Render | undefined>;
  engine(extension: string, render: Render): unknown;
}

/**
 * Bull Board's page asks fonts.googleapis.com for its fonts: an operator's browser would tell a
 * third party that it opened the dashboard, and the page waits on the internet. Its pages are
 * rendered here without any `<link>` to another origin (the system fonts are used instead).
 */
class LocalExpressAdapter extends ExpressAdapter {
  override setViewsPath(viewPath: string): this {
    super.setViewsPath(viewPath);
    const app = (this as unknown as { app: ExpressViews }).app;
    const render = app.engines['.ejs'];
    if (!render)
      throw new Error('Bull Board no longer renders its page with ejs; the dashboard cannot strip its fonts');
    app.engine('ejs', (path, options, done) =>
      render(path, options, (error, html) => done(error, html === undefined ? html : withoutExternalLinks(html))),
    );
    return this;
  }
}

/** Removes every `<link … href="http(s)://…">` (stylesheets, fonts, preconnects to other origins). */
export function withoutExternalLinks(html: string): string {
  return html.replace(/<link\b[^>]*\bhref\s*=\s*["']?(?:https?:)?\/\/[^>]*>\s*/gi, '');
}

/**
 * The operators' queue dashboard (Bull Board) at `/admin/queues`, off unless ESCALATOR_ADMIN_TOKEN
 * is set. A browser signs in with HTTP Basic (any user name, the admin token as password); tools
 * may send `Authorization: Bearer <token>`.
 */
export function dashboardRoute(options: {
  queues: Queue[];
  adminToken: string | undefined;
  readOnly?: boolean;
}): Handler {
  const adapter = new LocalExpressAdapter();
  adapter.setBasePath(dashboardPath);
  createBullBoard({
    queues: options.queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode: options.readOnly ?? false })),
    serverAdapter: adapter,
  });
  const app = adapter.getRouter() as unknown as (
    req: IncomingMessage,
    res: ServerResponse,
    next: (error?: unknown) => void,
  ) => void;
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (path !== dashboardPath && !path.startsWith(`${dashboardPath}/`)) return false;
    if (!options.adminToken)
      return sendJson(res, 404, { error: 'the queue dashboard is off; set ESCALATOR_ADMIN_TOKEN to enable it' });
    if (!authorized(req.headers.authorization, options.adminToken)) {
      return sendJson(
        res,
        401,
        {
          error:
            'sign in with the admin token, ESCALATOR_ADMIN_TOKEN (HTTP Basic password, or Authorization: Bearer <token>)',
        },
        { 'www-authenticate': 'Basic realm="escalator", charset="UTF-8"' },
      );
    }
    return new Promise<boolean>((resolve) => {
      // Express routes relative to the mount point; Bull Board serves its UI and API under it.
      const original = req.url as string;
      req.url = original.slice(dashboardPath.length) || '/';
      app(req, res, (error?: unknown) => {
        req.url = original;
        if (error || !res.headersSent)
          sendJson(res, error ? 500 : 404, {
            error: error ? 'the dashboard failed; see the server log' : 'no such dashboard page',
          });
        resolve(true);
      });
      res.on('finish', () => resolve(true));
    });
  };
}

function authorized(header: string | undefined, token: string): boolean {
  if (!header) return false;
  if (header.startsWith('Bearer ')) return secretsEqual(header.slice(7).trim(), token);
  if (header.startsWith('Basic ')) {
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const password = decoded.slice(decoded.indexOf(':') + 1);
    return decoded.includes(':') && secretsEqual(password, token);
  }
  return false;
}
