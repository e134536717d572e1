import { createHmac } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { relayWindow } from '../../src/queue/relay-schedule.js';
import { createLogger } from '../../src/observability/logger.js';
import { startArgoCd, startFluxReceiver, type AgentRequest, type TestAgent } from './support/agents.js';
import { eventually, pushInput, sleep, startRelay, target, type RelayRig } from './support/relay.js';

const ARGO_SECRET = 'argo-webhook-secret';
const FLUX_TOKEN = 'flux-receiver-token';

describe('relay to agents (real Redis, test receivers)', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()?.();
  });

  async function agents<T extends Record<string, Promise<TestAgent>>>(
    starting: T,
  ): Promise<{ [K in keyof T]: Awaited<T[K]> }> {
    const entries = await Promise.all(
      Object.entries(starting).map(async ([name, promise]) => [name, await promise] as const),
    );
    for (const [, agent] of entries) cleanups.push(() => agent.close());
    return Object.fromEntries(entries) as { [K in keyof T]: Awaited<T[K]> };
  }

  async function relay(...args: Parameters<typeof startRelay>): Promise<RelayRig> {
    const rig = await startRelay(...args);
    cleanups.push(() => rig.close());
    return rig;
  }

  describe('when a push changes an overlay', () => {
    it('sends each matching target one request its agent accepts, and none to targets whose paths or repositories do not match', async () => {
      const a = await agents({
        argocd: startArgoCd({ secret: ARGO_SECRET }),
        fluxGithub: startFluxReceiver({ type: 'github', token: FLUX_TOKEN, events: ['push'] }),
        fluxHmac: startFluxReceiver({ type: 'generic-hmac', token: FLUX_TOKEN }),
        infra: startArgoCd({ secret: ARGO_SECRET }),
        stranger: startFluxReceiver({ type: 'github', token: FLUX_TOKEN }),
      });
      const targets = [
        target({
          name: 'argocd',
          type: 'argocd',
          url: a.argocd.url,
          secret: ARGO_SECRET,
          repos: ['example/gitops'],
          paths: ['apps/*/overlays/prod'],
        }),
        target({
          name: 'flux-github',
          type: 'flux-github',
          url: a.fluxGithub.url,
          secret: FLUX_TOKEN,
          repos: ['example/*'],
        }),
        target({
          name: 'flux-hmac',
          type: 'flux-generic-hmac',
          url: a.fluxHmac.url,
          secret: FLUX_TOKEN,
          repos: ['*/*'],
          paths: ['apps/**'],
        }),
        target({
          name: 'infra',
          type: 'argocd',
          url: a.infra.url,
          secret: ARGO_SECRET,
          repos: ['example/gitops'],
          paths: ['infra/**'],
        }),
        target({ name: 'stranger', type: 'flux-github', url: a.stranger.url, secret: FLUX_TOKEN, repos: ['other/*'] }),
      ];
      const rig = await relay(targets);
      const input = pushInput({ deliveryId: 'delivery-1', paths: ['apps/web/overlays/prod/kustomization.yaml'] });

      expect(await rig.enqueue(input)).toBe(3);
      await eventually(
        () => a.argocd.requests.length === 1 && a.fluxGithub.requests.length === 1 && a.fluxHmac.requests.length === 1,
        5_000,
        'three deliveries',
      );
      await sleep(400); // room for a stray second delivery or a mis-selected target

      for (const agent of [a.argocd, a.fluxGithub, a.fluxHmac]) {
        expect(agent.requests.map((r) => r.verdict)).toEqual(['accepted']);
        const [request] = agent.requests;
        expect(request!.body.equals(Buffer.from(input.body, 'utf8'))).toBe(true);
        expect(request!.method).toBe('POST');
        expect(request!.headers['x-github-delivery']).toBe('delivery-1');
        expect(request!.headers['x-github-event']).toBe('push');
        expect(request!.headers['content-type']).toBe('application/json');
      }
      expect(a.argocd.requests[0]!.refreshes).toBe(true);
      const sign = (algorithm: string, secret: string) =>
        `${algorithm}=${createHmac(algorithm, secret).update(input.body).digest('hex')}`;
      expect(a.argocd.requests[0]!.headers['x-hub-signature-256']).toBe(sign('sha256', ARGO_SECRET));
      expect(a.argocd.requests[0]!.headers['x-hub-signature']).toBe(sign('sha1', ARGO_SECRET));
      expect(a.fluxGithub.requests[0]!.headers['x-hub-signature-256']).toBe(sign('sha256', FLUX_TOKEN));
      expect(a.fluxHmac.requests[0]!.headers['x-signature']).toBe(sign('sha256', FLUX_TOKEN));
      expect(a.fluxHmac.requests[0]!.uri).toBe(new URL(a.fluxHmac.url).pathname);
      expect(a.infra.requests).toEqual([]);
      expect(a.stranger.requests).toEqual([]);

      const logged = await eventually(
        async () => {
          const entries = await rig.store.deliveries('argocd');
          return entries.length === 1 ? entries : undefined;
        },
        5_000,
        'the log entry',
      );
      expect(logged).toEqual([
        expect.objectContaining({
          target: 'argocd',
          deliveryId: 'delivery-1',
          outcome: 'delivered',
          status: 200,
          attempt: 1,
          coalesced: ['delivery-1'],
          changedPaths: ['apps/web/overlays/prod/kustomization.yaml'],
        }),
      ]);
      expect(logged[0]!.latencyMs).toBeGreaterThanOrEqual(0);
      const metrics = await rig.registry.getSingleMetricAsString('escalator_relay_deliveries_total');
      expect(metrics).toContain('escalator_relay_deliveries_total{target="argocd",outcome="delivered"} 1');
    });

    it('satisfies Argo CD 2.12 and older through X-Hub-Signature, which they verify instead', async () => {
      const a = await agents({
        legacy: startArgoCd({ secret: ARGO_SECRET, legacy: true }),
        legacyWithout: startArgoCd({ secret: ARGO_SECRET, legacy: true }),
      });
      const rig = await relay([
        target({ name: 'legacy', type: 'argocd', url: a.legacy.url, secret: ARGO_SECRET, repos: ['*/*'] }),
        target({
          name: 'legacy-without',
          type: 'argocd',
          url: a.legacyWithout.url,
          secret: ARGO_SECRET,
          repos: ['*/*'],
          sha1Signature: false,
          attempts: 3,
        }),
      ]);
      await rig.enqueue(pushInput({ paths: ['a.yaml'] }));
      await eventually(
        () => a.legacy.requests.length === 1 && a.legacyWithout.requests.length === 1,
        5_000,
        'both deliveries',
      );
      expect(a.legacy.requests[0]!.verdict).toBe('accepted');
      // Without the SHA-1 header an old Argo CD answers 400: the relay reports it and does not retry.
      expect(a.legacyWithout.requests[0]!.status).toBe(400);
      await eventually(
        async () => (await rig.store.deliveries('legacy-without'))[0]?.outcome === 'rejected',
        5_000,
        'rejection logged',
      );
    });

    it('does no new work for a redelivered webhook', async () => {
      const a = await agents({ argocd: startArgoCd({ secret: ARGO_SECRET }) });
      const rig = await relay([
        target({ name: 'argocd', type: 'argocd', url: a.argocd.url, secret: ARGO_SECRET, repos: ['*/*'] }),
      ]);
      const input = pushInput({ deliveryId: 'same-delivery', paths: ['a.yaml'] });
      expect(await rig.enqueue(input)).toBe(1);
      await eventually(() => a.argocd.requests.length === 1, 5_000, 'first delivery');
      expect(await rig.enqueue(input)).toBe(0);
      await sleep(500);
      expect(a.argocd.requests).toHaveLength(1);
    });

    it('keeps pushes to different refs apart: a feature branch never hides main', async () => {
      const a = await agents({ argocd: startArgoCd({ secret: ARGO_SECRET }) });
      const rig = await relay([
        target({
          name: 'argocd',
          type: 'argocd',
          url: a.argocd.url,
          secret: ARGO_SECRET,
          repos: ['*/*'],
          coalesce: 200,
        }),
      ]);
      await Promise.all([
        rig.enqueue(pushInput({ ref: 'refs/heads/main', paths: ['a.yaml'] })),
        rig.enqueue(pushInput({ ref: 'refs/heads/feature', paths: ['a.yaml'] })),
      ]);
      await eventually(() => a.argocd.requests.length === 2, 5_000, 'two deliveries');
      const refs = a.argocd.requests.map((r) => (JSON.parse(r.body.toString()) as { ref: string }).ref).sort();
      expect(refs).toEqual(['refs/heads/feature', 'refs/heads/main']);
    });
  });

  describe('secrets', () => {
    it('keeps the secret out of job data, Redis, the delivery log and the logs, even when the agent refuses', async () => {
      const a = await agents({
        argocd: startArgoCd({ secret: ARGO_SECRET }),
        flux: startFluxReceiver({ type: 'github', token: FLUX_TOKEN }),
      });
      const canary = 'canary-secret-5f1c9e';
      const lines: string[] = [];
      const log = createLogger({
        level: 'trace',
        destination: new Writable({ write: (chunk, _, done) => (lines.push(String(chunk)), done()) }),
      });
      const rig = await relay(
        [
          target({ name: 'ok', type: 'flux-github', url: a.flux.url, secret: FLUX_TOKEN, repos: ['*/*'] }),
          target({ name: 'refused', type: 'argocd', url: a.argocd.url, secret: canary, repos: ['*/*'] }),
        ],
        { log },
      );
      await rig.enqueue(pushInput({ deliveryId: 'secret-check', paths: ['a.yaml'] }));
      await eventually(
        async () =>
          (await rig.store.deliveries('refused'))[0]?.outcome === 'rejected' &&
          (await rig.store.deliveries('ok'))[0]?.outcome === 'delivered',
        5_000,
        'both outcomes',
      );
      const job = await rig.producer.queue('relay').getJob('relay__refused__secret-check');
      expect(job!.data).toEqual({
        target: 'refused',
        deliveryId: 'secret-check',
        repository: 'example/gitops',
        event: 'push',
        window: expect.any(String),
      });
      const keys = await rig.redis.keys(`${rig.prefix}:*`);
      const values = await Promise.all(
        keys.map(async (key) => {
          const type = await rig.redis.type(key);
          if (type === 'string') return rig.redis.get(key);
          if (type === 'list') return JSON.stringify(await rig.redis.lrange(key, 0, -1));
          if (type === 'hash') return JSON.stringify(await rig.redis.hgetall(key));
          if (type === 'zset') return JSON.stringify(await rig.redis.zrange(key, 0, -1));
          if (type === 'set') return JSON.stringify(await rig.redis.smembers(key));
          return '';
        }),
      );
      expect(values.join('\n')).not.toContain(canary);
      expect(values.join('\n')).not.toContain(FLUX_TOKEN);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.join('')).not.toContain(canary);
    });
  });

  describe('when an agent fails', () => {
    it('delivers on the third attempt to a target that answered 500 twice', async () => {
      const a = await agents({ argocd: startArgoCd({ secret: ARGO_SECRET }) });
      a.argocd.script((n) => (n <= 2 ? { status: 500 } : undefined));
      const rig = await relay([
        target({ name: 'argocd', type: 'argocd', url: a.argocd.url, secret: ARGO_SECRET, repos: ['*/*'], backoff: 50 }),
      ]);
      await rig.enqueue(pushInput({ deliveryId: 'retry-me', paths: ['a.yaml'] }));
      await eventually(() => a.argocd.accepted().length === 1, 10_000, 'delivery after two failures');
      expect(a.argocd.requests.map((r) => r.status)).toEqual([500, 500, 200]);
      // Exponential backoff: 50 ms, then 100 ms.
      const [first, second, third] = a.argocd.requests.map((r) => r.at) as [number, number, number];
      expect(second - first).toBeGreaterThanOrEqual(45);
      expect(third - second).toBeGreaterThanOrEqual(95);
      const log = await eventually(async () => {
        const entries = await rig.store.deliveries('argocd');
        return entries.length === 3 ? entries : undefined;
      });
      expect(log.map((e) => [e.attempt, e.outcome, e.status])).toEqual([
        [3, 'delivered', 200],
        [2, 'retry', 500],
        [1, 'retry', 500],
      ]);
    });

    it('does not retry a 401, and the failure is in the delivery log at once', async () => {
      const a = await agents({ argocd: startArgoCd({ secret: ARGO_SECRET }) });
      a.argocd.script(() => ({ status: 401, headers: { 'www-authenticate': 'Bearer' } }));
      const rig = await relay([
        target({
          name: 'behind-proxy',
          type: 'argocd',
          url: a.argocd.url,
          secret: ARGO_SECRET,
          repos: ['*/*'],
          attempts: 5,
        }),
      ]);
      await rig.enqueue(pushInput({ deliveryId: 'refused', paths: ['a.yaml'] }));
      const [entry] = await eventually(
        async () => {
          const entries = await rig.store.deliveries('behind-proxy');
          return entries.length > 0 ? entries : undefined;
        },
        5_000,
        'log entry',
      );
      expect(entry).toMatchObject({ outcome: 'rejected', status: 401, attempt: 1, deliveryId: 'refused' });
      expect(entry!.error).toMatch(
        /refused the relayed webhook with HTTP 401: scripted 401; check the target's secret/,
      );
      const job = await rig.producer.queue('relay').getJob('relay__behind-proxy__refused');
      await eventually(async () => (await job!.getState()) === 'failed', 5_000, 'job failed');
      await sleep(300);
      expect(a.argocd.requests).toHaveLength(1);
      expect((await rig.producer.queue('relay').getJob('relay__behind-proxy__refused'))!.attemptsMade).toBe(1);
      const metrics = await rig.registry.getSingleMetricAsString('escalator_relay_deliveries_total');
      expect(metrics).toContain('escalator_relay_deliveries_total{target="behind-proxy",outcome="rejected"} 1');
    });

    it('reports a wrong secret as Argo CD and Flux answer it (400), without retrying', async () => {
      const a = await agents({
        argocd: startArgoCd({ secret: ARGO_SECRET }),
        flux: startFluxReceiver({ type: 'generic-hmac', token: FLUX_TOKEN }),
      });
      const rig = await relay([
        target({ name: 'argocd', type: 'argocd', url: a.argocd.url, secret: 'not-the-secret', repos: ['*/*'] }),
        target({ name: 'flux', type: 'flux-generic-hmac', url: a.flux.url, secret: 'not-the-token', repos: ['*/*'] }),
      ]);
      await rig.enqueue(pushInput({ paths: ['a.yaml'] }));
      for (const name of ['argocd', 'flux']) {
        await eventually(
          async () => (await rig.store.deliveries(name))[0]?.outcome === 'rejected',
          5_000,
          `${name} rejection`,
        );
      }
      await sleep(300);
      expect(a.argocd.requests.map((r) => r.verdict)).toEqual(['Webhook processing failed: HMAC verification failed']);
      expect(a.flux.requests.map((r) => r.status)).toEqual([400]);
    });

    it('waits as long as a 429 Retry-After asks, without using an attempt', async () => {
      const a = await agents({ flux: startFluxReceiver({ type: 'github', token: FLUX_TOKEN }) });
      a.flux.script((n) => (n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : undefined));
      const rig = await relay([
        target({ name: 'flux', type: 'flux-github', url: a.flux.url, secret: FLUX_TOKEN, repos: ['*/*'], attempts: 1 }),
      ]);
      await rig.enqueue(pushInput({ paths: ['a.yaml'] }));
      await eventually(() => a.flux.accepted().length === 1, 10_000, 'delivery after Retry-After');
      const [limited, delivered] = a.flux.requests as [AgentRequest, AgentRequest];
      expect(limited.status).toBe(429);
      expect(delivered.at - limited.at).toBeGreaterThanOrEqual(950);
      expect(delivered.at - limited.at).toBeLessThan(3_000);
      const log = await eventually(
        async () => {
          const entries = await rig.store.deliveries('flux');
          return entries.length === 2 ? entries : undefined;
        },
        5_000,
        'two log entries',
      );
      expect(log.map((e) => [e.attempt, e.outcome, e.status])).toEqual([
        [1, 'delivered', 200],
        [1, 'rate-limited', 429],
      ]);
    });

    it('retries a target that does not answer within its timeout', async () => {
      const a = await agents({ argocd: startArgoCd({ secret: ARGO_SECRET }) });
      a.argocd.script((n) => (n === 1 ? { status: 200, delayMs: 1_000 } : undefined));
      const rig = await relay([
        target({ name: 'slow', type: 'argocd', url: a.argocd.url, secret: ARGO_SECRET, repos: ['*/*'], timeout: 200 }),
      ]);
      await rig.enqueue(pushInput({ paths: ['a.yaml'] }));
      await eventually(() => a.argocd.accepted().length === 1, 10_000, 'delivery after a timeout');
      const log = await eventually(
        async () => {
          const entries = await rig.store.deliveries('slow');
          return entries.length === 2 ? entries : undefined;
        },
        5_000,
        'two log entries',
      );
      expect(log.map((e) => [e.attempt, e.outcome, e.status])).toEqual([
        [2, 'delivered', 200],
        [1, 'retry', null],
      ]);
      expect(log[1]!.error).toMatch(/no answer within 200 ms/);
    });

    it('keeps one dead agent from delaying the others', async () => {
      const a = await agents({
        dead: startArgoCd({ secret: ARGO_SECRET }),
        alive: startArgoCd({ secret: ARGO_SECRET }),
      });
      a.dead.script(() => ({ status: 200, delayMs: 3_000 }));
      const rig = await relay([
        target({
          name: 'dead',
          type: 'argocd',
          url: a.dead.url,
          secret: ARGO_SECRET,
          repos: ['*/*'],
          timeout: 2_500,
          attempts: 1,
        }),
        target({ name: 'alive', type: 'argocd', url: a.alive.url, secret: ARGO_SECRET, repos: ['*/*'] }),
      ]);
      const started = Date.now();
      await rig.enqueue(pushInput({ paths: ['a.yaml'] }));
      await eventually(() => a.alive.accepted().length === 1, 2_000, 'delivery to the live agent');
      expect(Date.now() - started).toBeLessThan(1_000);
    });
  });

  describe('when pushes come in a burst', () => {
    /** The coalescing window of the burst tests: long beside 20 enqueues, short beside the test's timeout. */
    const WINDOW_MS = 1_500;
    it('coalesces a burst of 20 pushes shorter than the window into at most 2 deliveries, the newest payload last, the union of paths recorded', async () => {
      const a = await agents({ argocd: startArgoCd({ secret: ARGO_SECRET }) });
      const rig = await relay([
        target({
          name: 'argocd',
          type: 'argocd',
          url: a.argocd.url,
          secret: ARGO_SECRET,
          repos: ['*/*'],
          coalesce: WINDOW_MS,
        }),
      ]);
      const inputs = Array.from({ length: 20 }, (_, i) =>
        pushInput({
          deliveryId: `burst-${i + 1}`,
          n: i + 1,
          paths: [`apps/app-${i + 1}/overlays/dev/kustomization.yaml`],
        }),
      );
      const started = Date.now();
      for (const input of inputs) await rig.enqueue(input);
      const burstMs = Date.now() - started;

      const log = await eventually(
        async () => {
          const entries = await rig.store.deliveries('argocd');
          return entries.flatMap((e) => e.coalesced).length === 20 ? entries : undefined;
        },
        10_000,
        'all 20 pushes delivered',
      );
      await sleep(500);
      // Leading edge, then one delivery per window: a burst shorter than the window is 2 deliveries.
      // On a loaded machine the 20 enqueues may outlast a window; each window they span may add a
      // leading-edge delivery and a trailing one, and no more.
      expect(a.argocd.requests.length).toBeLessThanOrEqual(2 * (1 + Math.floor(burstMs / WINDOW_MS)));
      expect(a.argocd.requests.every((r) => r.verdict === 'accepted')).toBe(true);
      expect(a.argocd.requests.at(-1)!.body.toString('utf8')).toBe(inputs[19]!.body);
      expect(a.argocd.requests.at(-1)!.headers['x-github-delivery']).toBe('burst-20');
      expect(log.every((e) => e.outcome === 'delivered')).toBe(true);
      expect(log.flatMap((e) => e.coalesced).sort()).toEqual(inputs.map((i) => i.deliveryId).sort());
      expect(log.flatMap((e) => e.changedPaths ?? []).sort()).toEqual(
        inputs.flatMap((i) => i.changedPaths ?? []).sort(),
      );
      expect(await rig.store.loadPending(relayWindow('argocd', 'example/gitops', 'push', 'refs/heads/main'))).toEqual(
        [],
      );
    });

    it('loses no push that arrives while a delivery is in flight', async () => {
      const a = await agents({ argocd: startArgoCd({ secret: ARGO_SECRET }) });
      a.argocd.script((n) => (n === 1 ? { status: 200, delayMs: 300 } : undefined));
      const rig = await relay([
        target({
          name: 'argocd',
          type: 'argocd',
          url: a.argocd.url,
          secret: ARGO_SECRET,
          repos: ['*/*'],
          coalesce: 100,
        }),
      ]);
      await rig.enqueue(pushInput({ deliveryId: 'first', n: 1, paths: ['one.yaml'] }));
      await eventually(() => a.argocd.requests.length === 1, 5_000, 'first delivery in flight');
      await rig.enqueue(pushInput({ deliveryId: 'during', n: 2, paths: ['two.yaml'] }));
      await eventually(() => a.argocd.requests.length === 2, 5_000, 'the push that came in flight');
      expect(a.argocd.requests[1]!.headers['x-github-delivery']).toBe('during');
      expect(a.argocd.requests[1]!.verdict).toBe('accepted');
    });
  });
});
