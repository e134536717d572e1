import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { loadEnv } from '../../src/config/env.js';
import { startEscalator, type RunningEscalator } from '../../src/main/server.js';
import { createLogger } from '../../src/observability/logger.js';
import { deleteKeys, eventually, redisUrl } from '../support/stack.js';

/**
 * What a worker says about its render isolation, as production starts it (`startEscalator`, role
 * worker, real Redis, its own key prefix): `proxy` only when the operator sets it, then a warning
 * at start and a `/readyz` detail that name what it leaves open; unset means `namespace`, never
 * `proxy`.
 */
const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

interface Started {
  app: RunningEscalator;
  lines: Array<Record<string, unknown>>;
}

const prefixes: string[] = [];
const running: RunningEscalator[] = [];

async function startWorker(env: Record<string, string>): Promise<Started> {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const prefix = `isolation-${randomUUID().slice(0, 8)}`;
  prefixes.push(prefix);
  const app = await startEscalator(
    {
      APP_ID: '123',
      PRIVATE_KEY: privateKey,
      WEBHOOK_SECRET: 'test-secret',
      PORT: '0',
      HOST: '127.0.0.1',
      REDIS_URL: redisUrl,
      ESCALATOR_ROLE: 'worker',
      ...env,
    },
    { log: createLogger({ level: 'info', destination }), prefix },
  );
  running.push(app);
  return { app, lines };
}

async function readyz(app: RunningEscalator): Promise<{ status: number; body: { checks: Record<string, string> } }> {
  const res = await fetch(`${app.url}/readyz`);
  return { status: res.status, body: (await res.json()) as { checks: Record<string, string> } };
}

afterAll(async () => {
  for (const app of running) await app.close();
  const redis = new Redis(redisUrl);
  for (const prefix of prefixes) await deleteKeys(redis, `${prefix}:*`);
  redis.disconnect();
});

describe('a worker started with ESCALATOR_RENDER_ISOLATION=proxy', () => {
  it('warns at start, naming loopback, raw sockets and absolute paths', async () => {
    const { lines } = await startWorker({ ESCALATOR_RENDER_ISOLATION: 'proxy' });
    const warning = lines.find((line) => line.level === 40 && line.mode === 'proxy');
    expect(warning?.msg).toContain('Render isolation is proxy (ESCALATOR_RENDER_ISOLATION=proxy)');
    expect(warning?.msg).toContain('does not stop loopback fetches, raw sockets or absolute paths');
    const gaps = (warning?.gaps as string[]).join('\n');
    for (const gap of ['loopback', '127.0.0.1', 'raw sockets', 'absolute paths']) expect(gaps).toContain(gap);
  });

  it('says so in /readyz, and stays ready', async () => {
    const { app } = await startWorker({ ESCALATOR_RENDER_ISOLATION: 'proxy' });
    const { status, body } = await readyz(app);
    expect(status).toBe(200);
    const detail = body.checks.renderIsolation ?? '';
    expect(detail).toMatch(/^proxy, chosen by ESCALATOR_RENDER_ISOLATION; it does not stop loopback/);
    for (const gap of ['raw sockets', 'absolute paths', 'Use namespace']) expect(detail).toContain(gap);
  });
});

describe('a worker without ESCALATOR_RENDER_ISOLATION', () => {
  it('is in namespace mode: no proxy warning, and /readyz says whether the sandbox works here', async () => {
    expect(loadEnv({ APP_ID: '1', PRIVATE_KEY: privateKey, WEBHOOK_SECRET: 's' })).toMatchObject({
      ok: true,
      env: { ESCALATOR_RENDER_ISOLATION: 'namespace' },
    });
    const { app, lines } = await startWorker({});
    // The probe's own line (src/adapters/render/isolation.ts) says the mode it tried.
    const probe = await eventually(async () => lines.find((line) => /^Render isolation is/.test(String(line.msg))), {
      what: 'the start-up line about render isolation',
      timeoutMs: 15_000,
    });
    expect(probe.mode).toBe('namespace');
    expect(lines.filter((line) => line.mode === 'proxy' || String(line.msg).includes('isolation is proxy'))).toEqual(
      [],
    );
    const detail = (await readyz(app)).body.checks.renderIsolation ?? '';
    expect(detail).toMatch(/^namespace(: ok|, not available on this worker \()/);
    expect(detail).not.toContain('proxy');
  });
});

describe('a web-only process', () => {
  it('has no render isolation to report', async () => {
    const { app, lines } = await startWorker({ ESCALATOR_ROLE: 'web', ESCALATOR_RENDER_ISOLATION: 'proxy' });
    expect((await readyz(app)).body.checks).not.toHaveProperty('renderIsolation');
    expect(lines.filter((line) => line.mode === 'proxy')).toEqual([]);
  });
});
