import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RelayStore } from '../queue/relay-store.js';
import { secretsEqual } from './secrets.js';
import { sendJson, type Handler } from './server.js';

const PATH = '/admin/relay/deliveries';

/**
 * `GET /admin/relay/deliveries[?target=NAME][&limit=N]`: the relay's delivery log, newest first
 * per target (time, status, latency, attempt, delivery id, error). Behind
 * `Authorization: Bearer <admin token>`, compared in constant time. Without an admin token
 * configured the route does not exist (404), so an operator never exposes it by accident.
 */
export function relayLogRoute(options: {
  store: RelayStore;
  targets: readonly string[];
  adminToken: string | undefined;
}): Handler {
  const { store, targets, adminToken } = options;
  return async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== PATH) return false;
    if (!adminToken) return sendJson(res, 404, { error: `No route for ${req.method} ${PATH}` });
    if (req.method !== 'GET') return sendJson(res, 405, { error: 'use GET for this route' }, { allow: 'GET' });
    const header = req.headers.authorization ?? '';
    const given = header.toLowerCase().startsWith('bearer ') ? header.slice(7).trim() : '';
    if (!given || !secretsEqual(given, adminToken)) {
      return sendJson(
        res,
        401,
        { error: 'send Authorization: Bearer <token> with the admin token, ESCALATOR_ADMIN_TOKEN' },
        { 'www-authenticate': 'Bearer' },
      );
    }
    const limitText = url.searchParams.get('limit');
    const limit = limitText === null ? store.logSize : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > store.logSize) {
      return sendJson(res, 400, { error: `limit must be a whole number from 1 to ${store.logSize}` });
    }
    const target = url.searchParams.get('target');
    if (target !== null) {
      if (!targets.includes(target))
        return sendJson(res, 404, { error: `no relay target is named ${JSON.stringify(target)}`, targets });
      return sendJson(res, 200, { target, deliveries: await store.deliveries(target, limit) });
    }
    const all = await Promise.all(targets.map(async (name) => [name, await store.deliveries(name, limit)] as const));
    return sendJson(res, 200, { targets: Object.fromEntries(all) });
  };
}
