import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentUnreachableError, relayToAgent } from '../../src/adapters/agents.js';
import { buildRelayRequest } from '../../src/planners/relay.js';
import { fluxWebhookPath, startArgoCd, startFluxReceiver, type TestAgent } from './support/agents.js';
import { pushBody } from './support/relay.js';

const body = pushBody({ paths: ['apps/web/overlays/prod/kustomization.yaml'] });
const hmac = (algorithm: string, secret: string, text = body) =>
  `${algorithm}=${createHmac(algorithm, secret).update(text).digest('hex')}`;

async function post(url: string, headers: Record<string, string>, text = body, method = 'POST'): Promise<number> {
  const response = await fetch(url, { method, headers, ...(method === 'GET' ? {} : { body: text }) });
  await response.arrayBuffer();
  return response.status;
}

/** The test receivers refuse what the real agents refuse; otherwise a passing relay test proves nothing. */
describe('test receivers', () => {
  let argocd: TestAgent;
  let legacy: TestAgent;
  let flux: TestAgent;
  let generic: TestAgent;
  beforeAll(async () => {
    [argocd, legacy, flux, generic] = await Promise.all([
      startArgoCd({ secret: 'argo' }),
      startArgoCd({ secret: 'argo', legacy: true }),
      startFluxReceiver({ type: 'github', token: 'tok', events: ['push'] }),
      startFluxReceiver({ type: 'generic-hmac', token: 'tok', name: 'generic', namespace: 'apps' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([argocd, legacy, flux, generic].map((agent) => agent.close()));
  });

  describe('Argo CD', () => {
    const ok = { 'x-github-event': 'push', 'x-hub-signature-256': hmac('sha256', 'argo') };
    it.each([
      ['a signed push', ok, 200],
      ['a signed ping', { ...ok, 'x-github-event': 'ping' }, 200],
      ['no X-GitHub-Event', { 'x-hub-signature-256': ok['x-hub-signature-256'] }, 400],
      ['a pull_request event', { ...ok, 'x-github-event': 'pull_request' }, 400],
      ['no signature', { 'x-github-event': 'push' }, 400],
      ['only the SHA-1 signature', { 'x-github-event': 'push', 'x-hub-signature': hmac('sha1', 'argo') }, 400],
      ['a signature with another secret', { ...ok, 'x-hub-signature-256': hmac('sha256', 'other') }, 400],
      ['a bare hex signature', { ...ok, 'x-hub-signature-256': hmac('sha256', 'argo').slice(7) }, 200],
      ['a short signature', { ...ok, 'x-hub-signature-256': 'sha256=abc' }, 400],
    ] as const)('answers %s with %i', async (_, headers, status) => {
      expect(await post(argocd.url, { ...headers })).toBe(status);
    });

    it('answers 405 to GET and 400 to a body that is not JSON', async () => {
      expect(await post(argocd.url, ok, body, 'GET')).toBe(405);
      expect(
        await post(argocd.url, { ...ok, 'x-hub-signature-256': hmac('sha256', 'argo', 'not json') }, 'not json'),
      ).toBe(400);
    });

    it('2.12 and older verify X-Hub-Signature (SHA-1) only', async () => {
      expect(await post(legacy.url, { 'x-github-event': 'push', 'x-hub-signature': hmac('sha1', 'argo') })).toBe(200);
      expect(await post(legacy.url, ok)).toBe(400);
    });
  });

  describe('Flux github receiver', () => {
    const ok = {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-hub-signature-256': hmac('sha256', 'tok'),
    };
    it.each([
      ['a signed push', ok, 200],
      ['a media type with parameters', { ...ok, 'content-type': 'application/json; charset=utf-8' }, 200],
      [
        'only the SHA-1 signature (go-github falls back to it)',
        { 'content-type': 'application/json', 'x-github-event': 'push', 'x-hub-signature': hmac('sha1', 'tok') },
        200,
      ],
      ['no content type', { 'x-github-event': 'push', 'x-hub-signature-256': ok['x-hub-signature-256'] }, 400],
      ['text/plain', { ...ok, 'content-type': 'text/plain' }, 400],
      ['no signature', { 'content-type': 'application/json', 'x-github-event': 'push' }, 400],
      ['a bare hex signature', { ...ok, 'x-hub-signature-256': hmac('sha256', 'tok').slice(7) }, 400],
      ['a wrong signature', { ...ok, 'x-hub-signature-256': hmac('sha256', 'nope') }, 400],
      ['an event the receiver does not list', { ...ok, 'x-github-event': 'pull_request' }, 400],
      ['the event in another case', { ...ok, 'x-github-event': 'PUSH' }, 200],
    ] as const)('answers %s with %i', async (_, headers, status) => {
      expect(await post(flux.url, { ...headers })).toBe(status);
    });

    it('is found only at its exact request URI', async () => {
      expect(await post(`${flux.url}?refresh=1`, ok)).toBe(404);
      expect(await post(`${flux.url}/`, ok)).toBe(404);
      expect(await post(flux.url.replace(/\/hook\/.*/, '/hook/other'), ok)).toBe(404);
    });
  });

  describe('Flux generic-hmac receiver', () => {
    it('lives at sha256(token + name + namespace)', () => {
      expect(new URL(generic.url).pathname).toBe(fluxWebhookPath('tok', 'generic', 'apps'));
      expect(fluxWebhookPath('tok', 'generic', 'apps')).toMatch(/^\/hook\/[0-9a-f]{64}$/);
    });

    it.each([
      ['sha256', { 'x-signature': hmac('sha256', 'tok') }, 200],
      ['sha512', { 'x-signature': hmac('sha512', 'tok') }, 200],
      ['sha1', { 'x-signature': hmac('sha1', 'tok') }, 200],
      ['md5', { 'x-signature': hmac('md5', 'tok') }, 400],
      ['no prefix', { 'x-signature': hmac('sha256', 'tok').slice(7) }, 400],
      ['X-Hub-Signature-256 instead', { 'x-hub-signature-256': hmac('sha256', 'tok') }, 400],
      ['another token', { 'x-signature': hmac('sha256', 'other') }, 400],
    ] as const)('answers an X-Signature with %s with %i', async (_, headers, status) => {
      expect(await post(generic.url, { ...headers })).toBe(status);
    });
  });
});

describe('relayToAgent', () => {
  let redirecting: ReturnType<typeof createServer>;
  let url: string;
  let followed = 0;
  beforeAll(async () => {
    redirecting = createServer((req, res) => {
      if (req.url === '/elsewhere') {
        followed++;
        res.writeHead(200).end('ok');
        return;
      }
      res.writeHead(307, { location: '/elsewhere' }).end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/api/webhook`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => redirecting.close(() => resolve()));
  });

  const request = (to: string) =>
    buildRelayRequest(
      { type: 'argocd', url: to, secret: 's', sha1Signature: false },
      { event: 'push', deliveryId: 'd', body: '{}' },
    );

  it('never follows a redirect: the URL is used exactly', async () => {
    const response = await relayToAgent(request(url), { timeoutMs: 2_000 });
    expect(response.status).toBe(307);
    expect(followed).toBe(0);
  });

  it('reports an agent that is not listening', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await relayToAgent(request(`http://127.0.0.1:${port}/api/webhook`), { timeoutMs: 2_000 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AgentUnreachableError);
    expect((error as AgentUnreachableError).timedOut).toBe(false);
    expect((error as Error).message).toMatch(/did not answer: ECONNREFUSED/);
  });

  it('gives up after the timeout', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const error = await relayToAgent(
        request(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/api/webhook`),
        { timeoutMs: 150 },
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AgentUnreachableError);
      expect((error as AgentUnreachableError).timedOut).toBe(true);
      expect((error as AgentUnreachableError).latencyMs).toBeGreaterThanOrEqual(140);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('reads Retry-After and an excerpt of the answer', async () => {
    const busy = createServer((_, res) =>
      res.writeHead(503, { 'retry-after': '7' }).end(`overloaded ${'x'.repeat(1_000)}`),
    );
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      const response = await relayToAgent(request(`http://127.0.0.1:${(busy.address() as AddressInfo).port}/`), {
        timeoutMs: 2_000,
      });
      expect(response).toMatchObject({ status: 503, retryAfter: '7' });
      expect(response.excerpt).toMatch(/^overloaded x+$/);
      expect(response.excerpt.length).toBe(300);
    } finally {
      await new Promise<void>((resolve) => busy.close(() => resolve()));
    }
  });
});
