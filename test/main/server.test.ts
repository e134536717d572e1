import { createHmac, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatEnvProblems, loadEnv, needsAppSetup } from '../../src/config/env.js';
import { registryOf, registrySources } from '../../src/events/index.js';
import { agentNames } from '../../src/events/agents/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { EnvError, startEscalator, type RunningEscalator } from '../../src/main/server.js';
import { redisUrl } from '../support/stack.js';

const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const baseEnv: NodeJS.ProcessEnv = {
  APP_ID: '123',
  PRIVATE_KEY: privateKey,
  WEBHOOK_SECRET: 'test-secret',
  PORT: '0',
  HOST: '127.0.0.1',
  REDIS_URL: redisUrl,
  LOG_LEVEL: 'silent',
} as NodeJS.ProcessEnv;

describe('environment validation', () => {
  it('lists every problem with a hint, not just the first', () => {
    const result = loadEnv({ PORT: 'abc', REDIS_URL: 'localhost:6379' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const text = formatEnvProblems(result.problems);
    expect(text).toContain('APP_ID: is required but not set; copy it from your GitHub App settings page');
    expect(text).toContain('PRIVATE_KEY: is required but not set');
    expect(text).toContain('WEBHOOK_SECRET: is required but not set');
    expect(text).toContain('REDIS_URL: must be a redis://, rediss://, redis+sentinel:// or redis+cluster:// URL');
    expect(text).toMatch(/PORT: .*use a number from 0 to 65535/);
    expect(text.split('\n')[0]).toBe('Escalator cannot start: 5 configuration problems in the environment.');
  });

  it('accepts a private key with escaped newlines, as one-line variables carry it', () => {
    const result = loadEnv({ ...baseEnv, PRIVATE_KEY: privateKey.replace(/\n/g, '\\n') });
    expect(result.ok && result.env.PRIVATE_KEY).toBe(privateKey);
  });

  it('reads GitHub Enterprise settings the way Probot spells them', () => {
    const result = loadEnv({ ...baseEnv, GHE_HOST: 'ghe.example.com' });
    expect(result.ok && result.env.GITHUB_API_URL).toBe('https://ghe.example.com/api/v3');
  });

  it('says which file it could not read for PRIVATE_KEY_PATH', () => {
    const result = loadEnv({ ...baseEnv, PRIVATE_KEY: undefined, PRIVATE_KEY_PATH: '/nonexistent/key.pem' });
    expect(!result.ok && result.problems[0]).toBe(
      "PRIVATE_KEY_PATH: cannot read /nonexistent/key.pem (ENOENT); check the path and the file's permissions",
    );
  });

  it('runs the setup flow only when no credential is set at all', () => {
    expect(needsAppSetup({})).toBe(true);
    expect(needsAppSetup({ APP_ID: '1' })).toBe(false);
  });

  it('refuses to start with a bad environment', async () => {
    await expect(startEscalator({ ...baseEnv, ESCALATOR_ROLE: 'both' })).rejects.toThrow(EnvError);
  });
});

describe('the web role', () => {
  let app: RunningEscalator;
  beforeAll(async () => {
    app = await startEscalator({ ...baseEnv, ESCALATOR_ROLE: 'web' }, { log: createLogger({ level: 'silent' }) });
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers /healthz', async () => {
    const res = await fetch(`${app.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('is ready while Redis answers', async () => {
    const res = await fetch(`${app.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: { redis: 'ok', github: 'ok' } });
  });

  it('accepts a correctly signed GitHub delivery', async () => {
    const body = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 });
    const res = await fetch(`${app.url}/api/github/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'ping',
        'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
        'x-hub-signature-256': `sha256=${createHmac('sha256', 'test-secret').update(body).digest('hex')}`,
      },
      body,
    });
    expect(res.status).toBe(202);
  });

  it('names every missing GitHub header', async () => {
    const res = await fetch(`${app.url}/api/github/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: 'required headers missing: x-github-event, x-github-delivery, x-hub-signature-256',
    });
  });

  it('answers 415 for a form-encoded delivery', async () => {
    const res = await fetch(`${app.url}/api/github/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'payload=%7B%7D',
    });
    expect(res.status).toBe(415);
  });

  it('rejects a delivery signed with another secret', async () => {
    const body = JSON.stringify({ zen: 'x' });
    const res = await fetch(`${app.url}/api/github/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'ping',
        'x-github-delivery': '1',
        'x-hub-signature-256': `sha256=${createHmac('sha256', 'wrong').update(body).digest('hex')}`,
      },
      body,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe(
      'signature does not match the payload and the webhook secret; check WEBHOOK_SECRET against the App settings',
    );
  });

  it('serves Prometheus metrics, counting the deliveries it verified', async () => {
    const res = await fetch(`${app.url}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/^escalator_intake_requests_total\{source="github",outcome="accepted"\} [1-9]/m);
    expect(text).toMatch(/^escalator_intake_requests_total\{source="github",outcome="invalid"\} [1-9]/m);
    expect(text).toMatch(/^escalator_queue_jobs\{queue="bump",state="waiting"\} \d+/m);
  });

  it('answers unknown routes with 404 and the routes that exist', async () => {
    const res = await fetch(`${app.url}/nope`);
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: string; routes: string[] };
    expect(body.error).toBe('No route for GET /nope');
    // Every route the web role answers, each registry of the table among them.
    expect(body.routes).toEqual([
      'GET /healthz',
      'GET /readyz',
      'GET /metrics',
      'POST /api/github/webhooks',
      'POST /api/v1/images',
      'GET /api/v1/images/status/<job>',
      ...registrySources.map((source) =>
        registryOf(source)?.auth === 'path-token' ? `POST /registry/${source}/<token>` : `POST /registry/${source}`,
      ),
      ...agentNames.flatMap((agent) => [`POST /agents/${agent}`, `POST /agents/${agent}/<owner>/<repo>`]),
      'GET /admin/queues',
      'GET /admin/relay/deliveries',
    ]);
    for (const route of body.routes.filter((r) => r.startsWith('GET /') && !r.includes('admin'))) {
      // A route that exists answers, if 404, with its own reason (the status of the CI API: disabled here).
      const res = await fetch(`${app.url}${route.slice(4)}`);
      const answer = res.status === 404 ? ((await res.json()) as { error: string }).error : String(res.status);
      expect(answer, route).not.toMatch(/^No route/);
    }
  });
});

describe('the queue dashboard', () => {
  it('is off without an admin token, and asks for the token when on', async () => {
    const off = await startEscalator({ ...baseEnv, ESCALATOR_ROLE: 'web' }, { log: createLogger({ level: 'silent' }) });
    const on = await startEscalator(
      { ...baseEnv, ESCALATOR_ROLE: 'web', ESCALATOR_ADMIN_TOKEN: 'admin-token-0123456789' },
      { log: createLogger({ level: 'silent' }) },
    );
    try {
      expect((await fetch(`${off.url}/admin/queues`)).status).toBe(404);
      const anonymous = await fetch(`${on.url}/admin/queues`);
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toContain('Basic');
      const wrong = await fetch(`${on.url}/admin/queues`, {
        headers: { authorization: `Basic ${Buffer.from('ops:wrong').toString('base64')}` },
      });
      expect(wrong.status).toBe(401);
      const page = await fetch(`${on.url}/admin/queues`, {
        headers: { authorization: `Basic ${Buffer.from('ops:admin-token-0123456789').toString('base64')}` },
      });
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('<div id="root">');
      // Served without asking any other origin for anything (Bull Board links Google Fonts).
      const references = [...html.matchAll(/\b(?:href|src)\s*=\s*["']?([^"'\s>]+)/gi)].map((m) => m[1] ?? '');
      expect(references.length).toBeGreaterThan(3);
      expect(references.filter((ref) => /^(?:[a-z][a-z0-9+.-]*:)?\/\//i.test(ref))).toEqual([]);
      expect(html).not.toMatch(/@import|url\(\s*["']?(?:https?:)?\/\//i);
      const css = [...html.matchAll(/href="(static\/css\/[^"]+)"/g)].map((m) => m[1] ?? '');
      expect(css.length).toBeGreaterThan(0);
      for (const sheet of css) {
        const text = await (
          await fetch(`${on.url}/admin/queues/${sheet}`, {
            headers: { authorization: 'Bearer admin-token-0123456789' },
          })
        ).text();
        expect(text).not.toMatch(/@import|url\(\s*["']?(?:https?:)?\/\//i);
      }
      const api = await fetch(`${on.url}/admin/queues/api/queues`, {
        headers: { authorization: 'Bearer admin-token-0123456789' },
      });
      expect(api.status).toBe(200);
      const names = ((await api.json()) as { queues: Array<{ name: string }> }).queues.map((q) => q.name).sort();
      expect(names).toEqual([
        'bump',
        'command',
        'dashboard',
        'diff',
        'health',
        'image',
        'index',
        'landing',
        'promote',
        'recover',
        'relay',
      ]);
    } finally {
      await off.close();
      await on.close();
    }
  });
});

describe('readiness without Redis', () => {
  it('answers 503 and says what is wrong', async () => {
    const app = await startEscalator(
      { ...baseEnv, ESCALATOR_ROLE: 'web', REDIS_URL: 'redis://127.0.0.1:1' },
      { log: createLogger({ level: 'silent' }) },
    );
    try {
      const res = await fetch(`${app.url}/readyz`);
      expect(res.status).toBe(503);
      const body = (await res.json()) as { checks: { redis: string } };
      expect(body.checks.redis).toBe('Redis does not answer PING; check REDIS_URL and that Redis runs');
      expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
    } finally {
      await app.close();
    }
  });
});
