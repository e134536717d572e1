import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson, type Handler } from './server.js';

/**
 * `/healthz`: the process is alive (liveness). `/readyz`: it can do its work — Redis answers and
 * GitHub credentials are loaded (readiness; a load balancer stops sending traffic while it fails).
 * On a process that renders, `/readyz` also names its render isolation (`renderIsolation`): a
 * detail for operators, never a reason to be unready.
 */
export function healthRoutes(checks: {
  redis: () => Promise<boolean>;
  credentials: () => boolean;
  renderIsolation?: () => Promise<string>;
}): Handler {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url?.split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (path !== '/readyz') return false;
    const [redis, credentials] = [await checks.redis(), checks.credentials()];
    const ready = redis && credentials;
    return sendJson(res, ready ? 200 : 503, {
      status: ready ? 'ready' : 'not ready',
      checks: {
        redis: redis ? 'ok' : 'Redis does not answer PING; check REDIS_URL and that Redis runs',
        github: credentials ? 'ok' : 'GitHub App credentials are not loaded; set APP_ID and PRIVATE_KEY',
        ...(checks.renderIsolation ? { renderIsolation: await checks.renderIsolation() } : {}),
      },
    });
  };
}
