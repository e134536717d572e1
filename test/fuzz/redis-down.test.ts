import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendRaw } from './support/raw-http.js';
import { agentNames, agentTable } from '../../src/events/agents/index.js';
import { agentKey } from '../../src/intake/agent-routes.js';
import { registries } from '../../src/events/index.js';
import {
  agentFixtures,
  endpointCases,
  FUZZ_OWNER,
  fuzzEndpoint,
  githubDeliveries,
  intakeTarget,
  registryFixtures,
  Tally,
} from './support/http-fuzz.js';
import { githubSignature, startFuzzStack, type FuzzStack } from './support/stack.js';

/**
 * The web role whose Redis is a dead port (127.0.0.1:1). A request that passes every check is
 * answered 503 with Retry-After, so the sender retries and nothing is lost; bad input is still
 * answered 4xx (a dead Redis never hides a bad token or a bad body); nothing else is 5xx.
 */
const scale = Number(process.env.FUZZ_SCALE ?? 1);
const runs: Record<string, number> = {
  'github-webhook': 150,
  ...Object.fromEntries(registries.map(({ source }) => [`registry/${source}`, 40])),
  ci: 60,
  ...Object.fromEntries(agentNames.map((agent) => [`agents/${agent}`, 40])),
  healthz: 20,
  metrics: 20,
  unknown: 40,
  'malformed-http': 40,
};

describe('HTTP fuzz with Redis down', () => {
  let stack: FuzzStack;
  const tally = new Tally();
  beforeAll(async () => {
    stack = await startFuzzStack({ redisUrl: 'redis://127.0.0.1:1' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  describe.each(Object.entries(runs))('%s', (endpoint, count) => {
    it(`answers 503 only to requests that pass every check, for ${Math.round(count * scale)} generated requests`, async () => {
      await fuzzEndpoint(stack, endpointCases(stack.secrets)[endpoint] as never, Math.round(count * scale), tally, {
        mode: 'redis-down',
      });
      expect(tally.total(`${endpoint} (redis down)`)).toBeGreaterThanOrEqual(Math.round(count * scale));
    });
  });

  it('answers 503 with Retry-After and a reason to the real payload of every intake route', async () => {
    for (const [source, { files, contentType }] of Object.entries(registryFixtures)) {
      const { path, token } = intakeTarget(source, stack.secrets);
      const outcome = await sendRaw(stack.url, {
        method: 'POST',
        path,
        framing: 'length',
        body: files[0],
        headers: [
          ['content-type', contentType],
          ['authorization', `Bearer ${token}`],
        ],
      });
      expect(
        outcome.kind === 'response' && [source, outcome.response.status, outcome.response.headers['retry-after']],
      ).toEqual([source, 503, '5']);
      if (outcome.kind === 'response')
        expect((JSON.parse(outcome.response.body) as { error: string }).error).toMatch(
          /^cannot accept the event now: .*retry shortly$/,
        );
    }
  });

  it('answers 503 with Retry-After to a real report of every agent', async () => {
    for (const agent of agentNames) {
      const body = agentFixtures[agent]![0]!;
      const outcome = await sendRaw(stack.url, {
        method: 'POST',
        path: `/agents/${agent}/${FUZZ_OWNER}/gitops`,
        framing: 'length',
        body,
        headers: [
          ['content-type', 'application/json'],
          agentTable[agent].auth === 'hmac'
            ? ['x-signature', githubSignature(agentKey(stack.secrets.agentToken, FUZZ_OWNER), body)]
            : ['authorization', `Bearer ${agentKey(stack.secrets.agentToken, FUZZ_OWNER)}`],
        ],
      });
      expect(
        outcome.kind === 'response' && [agent, outcome.response.status, outcome.response.headers['retry-after']],
      ).toEqual([agent, 503, '5']);
    }
  });

  it('answers 503 to a verified GitHub delivery that has work to enqueue', async () => {
    const push = githubDeliveries.find((delivery) => delivery.event === 'push')!;
    const outcome = await sendRaw(stack.url, {
      method: 'POST',
      path: '/api/github/webhooks',
      framing: 'length',
      body: push.body,
      headers: [
        ['content-type', 'application/json'],
        ['x-github-event', 'push'],
        ['x-github-delivery', randomUUID()],
        ['x-hub-signature-256', githubSignature(stack.secrets.webhookSecret, push.body)],
      ],
    });
    expect(outcome.kind === 'response' && outcome.response.status).toBe(503);
  });

  it('still reports itself alive, and not ready', async () => {
    const health = await sendRaw(stack.url, { method: 'GET', path: '/healthz', headers: [], framing: 'none' });
    const ready = await sendRaw(stack.url, { method: 'GET', path: '/readyz', headers: [], framing: 'none' });
    expect([
      health.kind === 'response' && health.response.status,
      ready.kind === 'response' && ready.response.status,
    ]).toEqual([200, 503]);
  });

  // Routes that read or write Redis outside the producer: the web server maps a connection error
  // to 503 (src/web/server.ts, src/intake/github-webhook-route.ts) instead of a 500.
  it('answers 503, not 500, to the admin delivery log (src/web/relay-log-route.ts)', async () => {
    const outcome = await sendRaw(stack.url, {
      method: 'GET',
      path: '/admin/relay/deliveries',
      headers: [['authorization', `Bearer ${stack.secrets.adminToken}`]],
      framing: 'none',
    });
    expect(outcome.kind === 'response' && outcome.response.status).toBe(503);
  });

  it('answers 503, not 500, to a verified installation.deleted (src/intake/github/repositories.ts, RepoState.dropRepo)', async () => {
    const body = Buffer.from(
      JSON.stringify({ action: 'deleted', installation: { id: 1 }, repositories: [{ full_name: 'example/gitops' }] }),
    );
    const outcome = await sendRaw(stack.url, {
      method: 'POST',
      path: '/api/github/webhooks',
      framing: 'length',
      body,
      headers: [
        ['content-type', 'application/json'],
        ['x-github-event', 'installation'],
        ['x-github-delivery', randomUUID()],
        ['x-hub-signature-256', githubSignature(stack.secrets.webhookSecret, body)],
      ],
    });
    expect(outcome.kind === 'response' && outcome.response.status).toBe(503);
  });
});
