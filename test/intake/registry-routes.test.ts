import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGoogleTokenVerifier } from '../../src/intake/google-oidc.js';
import { registryRoutes, type IntakeOutcome } from '../../src/intake/registry-routes.js';
import { createLogger } from '../../src/observability/logger.js';
import { createRedis } from '../../src/queue/connection.js';
import { Producer } from '../../src/queue/producer.js';
import { startWebServer, type WebServer } from '../../src/web/server.js';
import { loadRegistryFixtures } from '../support/registry-fixtures.js';
import { eventually } from '../support/stack.js';
import { redisUrl } from '../support/redis.js';

const token = 'registry-token-0123456789';
const ciToken = 'ci-token-0123456789abcdef';
const fixture = (path: string): string => readFileSync(join('test/fixtures/registry', path), 'utf8');
const registries = await loadRegistryFixtures();

// A Google-style signing key and JWKS on disk, so the Pub/Sub OIDC check runs for real.
const google = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwksDir = mkdtempSync(join(tmpdir(), 'escalator-jwks-'));
writeFileSync(
  join(jwksDir, 'jwks.json'),
  JSON.stringify({ keys: [{ ...google.publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256', use: 'sig' }] }),
);
function googleToken(claims: Record<string, unknown>, kid = 'k1', key = google.privateKey): string {
  const header = Buffer.from(JSON.stringify({ alg: 'RS256', kid, typ: 'JWT' })).toString('base64url');
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const signature = sign('RSA-SHA256', Buffer.from(`${header}.${body}`), key).toString('base64url');
  return `${header}.${body}.${signature}`;
}
const goodClaims = () => ({
  iss: 'https://accounts.google.com',
  aud: 'https://escalator.example.com/registry/gar',
  email: 'pubsub@proj.iam.gserviceaccount.com',
  email_verified: true,
  iat: Math.floor(Date.now() / 1000) - 60,
  exp: Math.floor(Date.now() / 1000) + 600,
});

describe('registry intake', () => {
  let web: WebServer;
  let redis: Redis;
  let producer: Producer;
  const prefix = `test-${randomUUID()}`;
  const outcomes: Array<[string, IntakeOutcome]> = [];

  beforeAll(async () => {
    redis = createRedis(redisUrl, 'producer');
    await new Promise((resolve) => redis.once('ready', resolve));
    producer = new Producer(redis, prefix);
    web = await startWebServer({
      host: '127.0.0.1',
      port: 0,
      log: createLogger({ level: 'silent' }),
      handlers: [
        registryRoutes({
          producer,
          log: createLogger({ level: 'silent' }),
          maxBodyBytes: 64 * 1024,
          registryToken: token,
          ciToken,
          verifyGoogleToken: createGoogleTokenVerifier({
            audience: 'https://escalator.example.com/registry/gar',
            serviceAccount: 'pubsub@proj.iam.gserviceaccount.com',
            jwks: join(jwksDir, 'jwks.json'),
          }),
          onOutcome: (source, outcome) => outcomes.push([source, outcome]),
        }),
      ],
    });
  });
  afterAll(async () => {
    await web.close();
    await producer.queue('image').obliterate({ force: true });
    await producer.close();
    await redis.quit();
  });

  async function post(path: string, body: string, headers: Record<string, string> = {}) {
    const res = await fetch(`${web.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
      body,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  async function queuedImages(ids: unknown): Promise<string[]> {
    const jobs = await Promise.all((ids as string[]).map((id) => producer.queue('image').getJob(id)));
    return jobs.map((job) => {
      const event = (job?.data as { event: { repository: string; tag: string; digest?: string } }).event;
      return `${event.repository}:${event.tag}${event.digest ? `@${event.digest.slice(0, 15)}` : ''}`;
    });
  }

  const announced = new Set<string>();
  // Every accepted fuzz payload of every token-authenticated registry of the table, with its
  // sender's content type; the Google-authenticated ones have tests of their own below.
  describe.each(
    registries
      .filter(({ registry }) => registry.auth !== 'google-oidc')
      .flatMap(({ source, registry, fixtures }) =>
        fixtures.fuzz.files
          .map((file) => fixtures.cases.find((c) => c.file === file)!)
          .filter((c) => c.expected.kind === 'images')
          .map((c): [string, string, string, Record<string, string>] =>
            registry.auth === 'path-token'
              ? [
                  `/registry/${source}/${token}`,
                  `${source}/${c.file}`,
                  c.contentType ?? fixtures.fuzz.contentType,
                  { authorization: '' },
                ]
              : [`/registry/${source}`, `${source}/${c.file}`, c.contentType ?? fixtures.fuzz.contentType, {}],
          ),
      ),
  )('POST %s with %s', (path, file, type, headers) => {
    it('answers 202 only once the image job is in Redis', async () => {
      const res = await post(path, fixture(file), { 'content-type': type, ...headers });
      const images = await queuedImages(res.body.jobs);
      // Two fixtures of one registry may announce the same image: the second is then a duplicate.
      const fresh = images.filter((image) => !announced.has(image));
      expect(res.status).toBe(fresh.length > 0 ? 202 : 200);
      expect(res.body.accepted).toBe(fresh.length);
      expect(res.body.duplicate ?? 0).toBe(images.length - fresh.length);
      expect(images.length).toBeGreaterThan(0);
      for (const image of images) announced.add(image);
      for (const image of images) expect(image).toMatch(/^[a-z0-9.:-]+\/[a-z0-9._/-]+:[\w.-]+/);
    });
  });

  it('takes the Google Artifact Registry Pub/Sub push with a valid OIDC token', async () => {
    const res = await post('/registry/gar', fixture('gar/push-insert-tagged.json'), {
      authorization: `Bearer ${googleToken(goodClaims())}`,
    });
    expect(res.status).toBe(202);
    expect(await queuedImages(res.body.jobs)).toHaveLength(1);
  });

  it.each([
    ['another audience', { aud: 'https://elsewhere' }, 'audience'],
    ['another service account', { email: 'evil@proj.iam.gserviceaccount.com' }, 'service account'],
    ['an expired token', { exp: Math.floor(Date.now() / 1000) - 10 }, 'expired'],
    ['another issuer', { iss: 'https://evil.example.com' }, 'not issued by Google'],
  ])('refuses a Pub/Sub token with %s', async (_name, override, message) => {
    const res = await post('/registry/gar', fixture('gar/push-insert-tagged.json'), {
      authorization: `Bearer ${googleToken({ ...goodClaims(), ...override })}`,
    });
    expect(res.status).toBe(401);
    expect(String(res.body.error)).toContain(message);
  });

  it('refuses a Pub/Sub token whose signature was forged', async () => {
    const [h, c] = googleToken(goodClaims()).split('.');
    const res = await post('/registry/gar', fixture('gar/push-insert-tagged.json'), {
      authorization: `Bearer ${h}.${c}.${Buffer.from('forged').toString('base64url')}`,
    });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('the token signature is invalid');
  });

  it.each([
    [
      'a header that is JSON null',
      `${Buffer.from('null').toString('base64url')}.${Buffer.from('{}').toString('base64url')}.AAAA`,
    ],
    [
      'claims that are a JSON array',
      `${Buffer.from('{"alg":"RS256","kid":"k1"}').toString('base64url')}.${Buffer.from('[]').toString('base64url')}.AAAA`,
    ],
  ])('refuses a Pub/Sub token with %s as not a JWT, with 401', async (_name, token) => {
    const res = await post('/registry/gar', fixture('gar/push-insert-tagged.json'), {
      authorization: `Bearer ${token}`,
    });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('the bearer token is not a JWT (its header and claims must be JSON objects)');
  });

  describe('Google signing keys', () => {
    const rotated = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const tokenWith = (kid: string, key: typeof rotated.privateKey): string => googleToken(goodClaims(), kid, key);
    const verifierAt = (jwks: string, clock: { t: number }) =>
      createGoogleTokenVerifier({
        audience: goodClaims().aud,
        serviceAccount: goodClaims().email,
        jwks,
        now: () => clock.t,
      });

    it('takes a rotated key once the JWKS has it, refetching for unknown keys at most once a minute', async () => {
      const path = join(jwksDir, `rotating-${randomUUID()}.json`);
      const jwk = (key: typeof rotated.publicKey, kid: string) => ({
        ...key.export({ format: 'jwk' }),
        kid,
        alg: 'RS256',
        use: 'sig',
      });
      writeFileSync(path, JSON.stringify({ keys: [jwk(google.publicKey, 'k1')] }));
      const clock = { t: Date.now() };
      const verify = verifierAt(path, clock);
      await verify(`Bearer ${tokenWith('k1', google.privateKey)}`);
      await expect(verify(`Bearer ${tokenWith('k2', rotated.privateKey)}`)).rejects.toThrow(
        'the token was signed with an unknown key',
      );
      writeFileSync(path, JSON.stringify({ keys: [jwk(google.publicKey, 'k1'), jwk(rotated.publicKey, 'k2')] }));
      clock.t += 30_000; // unknown keys within the minute do not fetch the JWKS again
      await expect(verify(`Bearer ${tokenWith('k2', rotated.privateKey)}`)).rejects.toThrow(
        'the token was signed with an unknown key',
      );
      clock.t += 31_000;
      await expect(verify(`Bearer ${tokenWith('k2', rotated.privateKey)}`)).resolves.toBeUndefined();
    });

    it('answers 503 when the JWKS cannot be read, so Pub/Sub retries the push', async () => {
      const verify = verifierAt(join(jwksDir, 'missing.json'), { t: Date.now() });
      const failure = await verify(`Bearer ${tokenWith('k1', google.privateKey)}`).then(
        () => undefined,
        (error: unknown) => error as { status?: number; headers?: Record<string, string>; message: string },
      );
      expect(failure?.status).toBe(503);
      expect(failure?.headers).toEqual({ 'retry-after': '30' });
      expect(failure?.message).toContain("could not read Google's signing keys from");
      expect(failure?.message).toContain('the push is retried');
    });
  });

  it.each([
    ['the CI API with a wrong token', '/api/v1/images', 'authorization: Bearer wrong\r\n'],
    ['a registry without a token', '/registry/harbor', ''],
    ['a path-token registry with a wrong path token', '/registry/dockerhub/wrong', ''],
  ])('refuses %s with 401 before reading any of the body, and closes the connection', async (_name, path, auth) => {
    // Only the head is sent: an answer proves nothing waited for (or held) the 60 KB announced.
    const { hostname, port } = new URL(web.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port) }, () =>
        socket.write(
          `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${auth}content-length: 60000\r\n\r\n`,
        ),
      );
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString('utf8')));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
      setTimeout(() => reject(new Error(`no answer within 5 s: ${text}`)), 5_000).unref();
    });
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer.toLowerCase()).toContain('connection: close');
  });

  it('takes a CI image with the CI bearer token', async () => {
    const res = await post('/api/v1/images', JSON.stringify({ image: 'ghcr.io/example/hello:1.2.3' }), {
      authorization: `Bearer ${ciToken}`,
    });
    expect(res.status).toBe(202);
    expect(await queuedImages(res.body.jobs)).toEqual(['ghcr.io/example/hello:1.2.3']);
  });

  it('does no new work for the same delivery twice', async () => {
    const body = fixture('distribution/debian-2.8-03-push-single.json').replaceAll(
      '"tag": "1.2.3"',
      `"tag": "1.2.3-${randomUUID().slice(0, 8)}"`,
    );
    const first = await post('/registry/distribution', body);
    const second = await post('/registry/distribution', body);
    expect(second.body.jobs).toEqual(first.body.jobs);
    // Nothing new was queued, and the sender hears so: when the event was first seen, and its state.
    expect(first.status).toBe(202);
    expect(second.status).toBe(200);
    expect(second.body.accepted).toBe(0);
    const duplicates = second.body.duplicates as Array<{
      job: string;
      firstSeenAt: string;
      state: string;
      outcome: string;
    }>;
    expect(duplicates.map((d) => d.job)).toEqual(first.body.jobs);
    for (const duplicate of duplicates) {
      expect(duplicate.state).toBe('waiting');
      expect(duplicate.outcome).toBe('it is waiting, not processed yet');
      expect(Date.parse(duplicate.firstSeenAt)).toBeLessThanOrEqual(Date.now());
    }
    expect(outcomes).toContainEqual(['distribution', 'duplicate']);
    expect(
      await producer.queue('image').getJobCountByTypes('waiting', 'active', 'completed', 'failed', 'delayed'),
    ).toBeGreaterThan(0);
  });

  it('runs an event again when its first delivery failed for good, and answers accepted', async () => {
    // With a digest, so the second send is the same event (without one, each delivery is its own).
    const image = `ghcr.io/example/retry-${randomUUID().slice(0, 8)}:1.0.0@sha256:${'ab'.repeat(32)}`;
    const body = JSON.stringify({ image });
    const first = await post('/api/v1/images', body, { authorization: `Bearer ${ciToken}` });
    const [id] = first.body.jobs as string[];
    // Its processing fails for good, as it would when GitHub refused the work (here a worker that
    // always does; the answer to the sender is what is under test).
    const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const worker = new Worker(
      'image',
      async (job) => {
        if (job.id === id) throw new UnrecoverableError('GitHub was down');
      },
      { connection, prefix },
    );
    try {
      await eventually(
        async () => ((await (await producer.queue('image').getJob(id!))!.getState()) === 'failed' ? true : undefined),
        {
          what: 'the first job to fail',
        },
      );
    } finally {
      await worker.close();
      await connection.quit();
    }
    const again = await post('/api/v1/images', body, { authorization: `Bearer ${ciToken}` });
    expect(again.status).toBe(202);
    expect(again.body.accepted).toBe(1);
    expect(again.body.retried).toEqual([image]);
    expect(await (await producer.queue('image').getJob(id!))!.getState()).toBe('waiting');
  });

  it('answers 200 for a pull, and counts it as ignored', async () => {
    const res = await post('/registry/distribution', fixture('distribution/debian-2.8-11-pull.json'));
    expect(res.status).toBe(200);
    expect(res.body.ignored).toBe('pull');
    expect(outcomes).toContainEqual(['distribution', 'ignored']);
  });

  describe('refuses bad requests in order, each with the reason', () => {
    it('415 for a wrong content type, before reading the body', async () => {
      const res = await post('/registry/acr', '{}', { 'content-type': 'text/plain' });
      expect(res.status).toBe(415);
      expect(res.body.error).toBe('content type text/plain is not accepted here; send application/json');
    });
    it('413 for a body over the cap', async () => {
      const res = await post('/registry/acr', JSON.stringify({ pad: 'x'.repeat(70 * 1024) }));
      expect(res.status).toBe(413);
      expect(String(res.body.error)).toContain('larger than the limit of 65536 bytes');
    });
    it('401 for a wrong token, even with a valid payload', async () => {
      const res = await post('/registry/acr', fixture('acr/push.json'), {
        authorization: 'Bearer wrong-token-wrong-token',
      });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe(
        'the Authorization token does not match any token /registry/acr accepts; expected ESCALATOR_REGISTRY_TOKEN (never a token value in this answer)',
      );
    });
    it('401 for a missing header', async () => {
      const res = await post('/registry/acr', fixture('acr/push.json'), { authorization: '' });
      expect(res.status).toBe(401);
    });
    it('401 for a wrong path token', async () => {
      const res = await post('/registry/dockerhub/not-the-token', fixture('dockerhub/webhook-example.json'), {
        authorization: '',
      });
      expect(res.status).toBe(401);
      expect(String(res.body.error)).toContain('/registry/dockerhub/<ESCALATOR_REGISTRY_TOKEN>');
    });
    it('400 for invalid JSON', async () => {
      const res = await post('/registry/acr', '{"target":');
      expect(res.status).toBe(400);
      expect(String(res.body.error)).toMatch(/^the body is not valid JSON/);
    });
    it('400 with the field that is wrong', async () => {
      const res = await post('/registry/acr', JSON.stringify({ action: 'push', target: {} }));
      expect(res.status).toBe(400);
      expect(String(res.body.error)).toContain('target');
    });
    it('405 for GET', async () => {
      const res = await fetch(`${web.url}/registry/acr`);
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    });
    it('404 for an unknown registry', async () => {
      const res = await post('/registry/nexus', '{}');
      expect(res.status).toBe(404);
      expect(String(res.body.error)).toContain('unknown registry "nexus"');
    });
  });
});

describe('registry intake without Redis', () => {
  it('answers 503 with Retry-After, so the sender retries and nothing is lost', async () => {
    const redis = createRedis('redis://127.0.0.1:1', 'producer', { retryStrategy: () => null });
    redis.on('error', () => undefined);
    const producer = new Producer(redis, `test-${randomUUID()}`);
    const web = await startWebServer({
      host: '127.0.0.1',
      port: 0,
      log: createLogger({ level: 'silent' }),
      handlers: [
        registryRoutes({ producer, log: createLogger({ level: 'silent' }), maxBodyBytes: 65536, registryToken: token }),
      ],
    });
    try {
      const res = await fetch(`${web.url}/registry/acr`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: fixture('acr/push.json'),
      });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(((await res.json()) as { error: string }).error).toMatch(
        /^cannot accept the event now: Redis is not connected/,
      );
    } finally {
      await web.close();
      redis.disconnect();
    }
  });
});
