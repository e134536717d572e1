import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registries, registryOf } from '../../src/events/index.js';
import { agentKey } from '../../src/intake/agent-routes.js';
import { createLogger } from '../../src/observability/logger.js';
import { startEscalator, type RunningEscalator } from '../../src/main/server.js';
import { eventually, redisUrl } from '../support/stack.js';

const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

/**
 * Docker Hub and Quay cannot send a header, so their token is in the path
 * (`/registry/<source>/<token>`). A request cut off mid-body fails in the route after the token
 * was accepted, and the web server logs it: the log must never hold the token.
 */
describe('logs of registry requests with a token in the path (real server, real logger)', () => {
  const registryToken = `path-token-${randomUUID()}`;
  const agentToken = `agent-token-${randomUUID()}`;
  const lines: string[] = [];
  let app: RunningEscalator;
  beforeAll(async () => {
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    app = await startEscalator(
      {
        APP_ID: '123',
        PRIVATE_KEY: privateKey,
        WEBHOOK_SECRET: 'test-secret',
        PORT: '0',
        HOST: '127.0.0.1',
        REDIS_URL: redisUrl,
        LOG_LEVEL: 'debug',
        ESCALATOR_ROLE: 'web',
        ESCALATOR_REGISTRY_TOKEN: registryToken,
        ESCALATOR_AGENT_TOKEN: agentToken,
      },
      { log: createLogger({ level: 'debug', destination }), prefix: `leaks-${randomUUID().slice(0, 8)}` },
    );
  });
  afterAll(async () => {
    await app?.close();
  });

  /** Send the headers and part of the body, then cut the connection. */
  async function cutUpload(path: string): Promise<void> {
    const { hostname, port } = new URL(app.url);
    const socket = connect(Number(port), hostname);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nAuthorization: Bearer ${registryToken}\r\nContent-Length: 100000\r\n\r\n{"push_data":{"tag":"1.0`,
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    socket.destroy();
  }

  const sources = registries.map((registry) => registry.source);
  it.each(
    sources.flatMap((source) => [
      `/registry/${source}/${registryToken}`,
      `/registry/${source}/${registryToken}/`,
      `/registry/${source}/${registryToken}?from=hub`,
    ]),
  )('logs %s without the token', async (path) => {
    const before = lines.length;
    await cutUpload(path);
    const source = path.split('/')[2] as string;
    // The path-token sources get past authentication, so the cut body fails in the route and is logged.
    if (registryOf(source)?.auth === 'path-token') {
      const line = await eventually(
        async () => lines.slice(before).find((text) => text.includes('Request cut off by the client')),
        { what: `the log line of the cut ${source} upload`, timeoutMs: 5_000 },
      );
      expect(JSON.parse(line)).toMatchObject({ path: `/registry/${source}/[redacted]`, method: 'POST' });
    } else await new Promise((resolve) => setTimeout(resolve, 100));
    const logged = lines.slice(before).join('\n');
    expect(logged).not.toContain(registryToken);
    expect(logged).not.toContain(registryToken.slice(-12));
  });

  // A mistyped agent URL with the owner's key where the owner belongs: the route refuses it and
  // logs why (at debug), and once repeated the path in that reason.
  it.each(['/agents/argocd/<key>', '/agents/flux/<key>/', '/agents/argocd/example/gitops/<key>', '/agents/<key>'])(
    'answers and logs the mistyped agent path %s without the key',
    async (template) => {
      const key = agentKey(agentToken, 'example');
      const before = lines.length;
      const answer = await fetch(`${app.url}${template.replace('<key>', key)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: '{}',
      });
      expect(answer.status).toBe(404);
      const reason = ((await answer.json()) as { error: string }).error;
      expect(reason).toContain('not repeated here: it may hold a secret');
      expect(reason).toContain('POST /agents/argocd/<owner>/<repo>');
      const line = await eventually(
        async () => lines.slice(before).find((text) => text.includes('Agent report refused')),
        { what: 'the log line of the refused agent report', timeoutMs: 5_000 },
      );
      expect(JSON.parse(line)).toMatchObject({ status: 404 });
      for (const text of [reason, lines.slice(before).join('\n')]) {
        expect(text).not.toContain(key);
        expect(text).not.toContain(key.slice(-12));
      }
    },
  );

  it('never logged the token anywhere', () => {
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((line) => line.includes(registryToken.slice(-12)))).toEqual([]);
    expect(lines.filter((line) => line.includes(agentKey(agentToken, 'example').slice(-12)))).toEqual([]);
  });
});

describe('the logger', () => {
  it.each([
    [{ path: '/registry/dockerhub/s3cret-token' }, { path: '/registry/dockerhub/[redacted]' }],
    [
      { url: 'http://127.0.0.1:3000/registry/quay/s3cret-token/extra?x=1' },
      { url: 'http://127.0.0.1:3000/registry/quay/[redacted]' },
    ],
    [
      { req: { method: 'POST', url: '//registry//newsource/s3cret-token' } },
      { req: { method: 'POST', url: '//registry//newsource/[redacted]' } },
    ],
    [{ path: '/api/v1/images?token=s3cret-token' }, { path: '/api/v1/images' }],
    [{ path: '/agents/argocd/s3cret-token' }, { path: '/agents/argocd/[redacted]' }],
    [{ path: '/agents/flux/example/gitops/s3cret-token' }, { path: '/agents/flux/[redacted]' }],
    [{ url: 'http://127.0.0.1:3000/agents/s3cret-token' }, { url: 'http://127.0.0.1:3000/agents/[redacted]' }],
    [{ path: '/agents/argocd/example/gitops' }, { path: '/agents/argocd/example/gitops' }],
    [
      { path: 'apps/registry/overlays/dev/kustomization.yaml' },
      { path: 'apps/registry/overlays/dev/kustomization.yaml' },
    ],
  ])('redacts path tokens and query strings in %j, whoever logs it', (fields, expected) => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    createLogger({ destination }).child({ deliveryId: 'd' }).info(fields, 'Request seen');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('s3cret');
    expect(JSON.parse(lines[0] as string)).toMatchObject(expected);
  });
});
