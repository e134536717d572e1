import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayStore, type RelayLogEntry } from '../../src/queue/relay-store.js';
import { createLogger } from '../../src/observability/logger.js';
import { startWebServer, type WebServer } from '../../src/web/server.js';
import { relayLogRoute } from '../../src/web/relay-log-route.js';
import { redisUrl } from './support/relay.js';

const TOKEN = 'admin-token-0123456789';

function entry(target: string, n: number, extra: Partial<RelayLogEntry> = {}): RelayLogEntry {
  return {
    at: `2026-01-01T00:00:${String(n).padStart(2, '0')}.000Z`,
    target,
    deliveryId: `d-${n}`,
    coalesced: [`d-${n}`],
    repository: 'example/gitops',
    event: 'push',
    attempt: 1,
    outcome: 'delivered',
    status: 200,
    latencyMs: 12,
    changedPaths: ['a.yaml'],
    ...extra,
  };
}

describe('GET /admin/relay/deliveries', () => {
  let redis: Redis;
  let store: RelayStore;
  let enabled: WebServer;
  let disabled: WebServer;
  const prefix = `test-relay-route-${randomUUID()}`;

  beforeAll(async () => {
    redis = new Redis(redisUrl);
    store = new RelayStore(redis, prefix, 3);
    const log = createLogger({ level: 'silent' });
    enabled = await startWebServer({
      host: '127.0.0.1',
      port: 0,
      log,
      handlers: [relayLogRoute({ store, targets: ['argocd', 'flux'], adminToken: TOKEN })],
    });
    disabled = await startWebServer({
      host: '127.0.0.1',
      port: 0,
      log,
      handlers: [relayLogRoute({ store, targets: ['argocd'], adminToken: undefined })],
    });
    for (let n = 1; n <= 5; n++) await store.record(entry('argocd', n));
    await store.record(
      entry('flux', 1, { outcome: 'rejected', status: 401, error: 'flux refused the relayed webhook with HTTP 401' }),
    );
  });
  afterAll(async () => {
    await enabled.close();
    await disabled.close();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  const get = (server: WebServer, path: string, token?: string, method = 'GET') =>
    fetch(`${server.url}${path}`, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });

  it('lists the last N attempts per target, newest first', async () => {
    const response = await get(enabled, '/admin/relay/deliveries', TOKEN);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { targets: Record<string, RelayLogEntry[]> };
    expect(body.targets.argocd!.map((e) => e.deliveryId)).toEqual(['d-5', 'd-4', 'd-3']);
    expect(body.targets.flux).toEqual([
      entry('flux', 1, { outcome: 'rejected', status: 401, error: 'flux refused the relayed webhook with HTTP 401' }),
    ]);
  });

  it('shows one target, and fewer entries on request', async () => {
    const response = await get(enabled, '/admin/relay/deliveries?target=argocd&limit=2', TOKEN);
    expect(await response.json()).toEqual({ target: 'argocd', deliveries: [entry('argocd', 5), entry('argocd', 4)] });
  });

  it('answers 404 for a target that is not configured, naming the ones that are', async () => {
    const response = await get(enabled, '/admin/relay/deliveries?target=nope', TOKEN);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'no relay target is named "nope"', targets: ['argocd', 'flux'] });
  });

  it.each([
    ['no token', undefined],
    ['a wrong token', 'admin-token-0123456788'],
    ['a prefix of the token', 'admin-token'],
  ])('answers 401 to %s', async (_, token) => {
    const response = await get(enabled, '/admin/relay/deliveries', token);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('refuses other methods and bad limits', async () => {
    expect((await get(enabled, '/admin/relay/deliveries', TOKEN, 'POST')).status).toBe(405);
    expect((await get(enabled, '/admin/relay/deliveries?limit=0', TOKEN)).status).toBe(400);
    expect((await get(enabled, '/admin/relay/deliveries?limit=4', TOKEN)).status).toBe(400);
    expect((await get(enabled, '/admin/relay/deliveries?limit=x', TOKEN)).status).toBe(400);
  });

  it('does not exist without an admin token configured', async () => {
    const response = await get(disabled, '/admin/relay/deliveries', TOKEN);
    expect(response.status).toBe(404);
  });

  it('leaves other paths to other handlers', async () => {
    const response = await get(enabled, '/admin/relay', TOKEN);
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: string }).error).toBe('No route for GET /admin/relay');
  });
});
