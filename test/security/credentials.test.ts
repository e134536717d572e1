import { createHash, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { SandboxClient, type Simulator, startSimulator } from '@escalator/github-sandbox';
import { Octokit } from '@octokit/rest';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/index.js';
import { startEscalator, type RunningEscalator } from '../../src/main/server.js';
import { createLogger } from '../../src/observability/logger.js';
import { redisUrl } from '../support/redis.js';

/**
 * Issue 22, section 3 "Who may announce what", and the GAR token checks of section 5. Every
 * test talks HTTP to Escalator as production starts it (startEscalator), with real Redis under a
 * random prefix; the scope test runs the whole product against the sandbox GitHub with two
 * organisations.
 */

const sha256 = (token: string): string => createHash('sha256').update(token).digest('hex');
const fixture = (path: string): string => readFileSync(join('test/fixtures/registry', path), 'utf8');
const digest = (n: number): string => `sha256:${String(n).padStart(64, 'a')}`;
const seconds = (): number => Math.floor(Date.now() / 1000);

/** A pino logger whose JSON lines land in `lines`. */
function capture(): { log: ReturnType<typeof createLogger>; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger({
    level: 'info',
    destination: new Writable({
      write: (chunk, _encoding, done) => (lines.push(JSON.parse(String(chunk)) as Record<string, unknown>), done()),
    }),
  });
  return { log, lines };
}

async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function dropPrefix(prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
}

function webEnv(extra: Record<string, string>): Record<string, string> {
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return {
    ESCALATOR_ROLE: 'web',
    APP_ID: '123',
    PRIVATE_KEY: privateKey,
    WEBHOOK_SECRET: `webhook-${randomUUID()}`,
    PORT: '0',
    HOST: '127.0.0.1',
    REDIS_URL: redisUrl,
    LOG_LEVEL: 'silent',
    ...extra,
  };
}

/** An RS256 JWT signed with `key`. */
function jwt(claims: Record<string, unknown>, key: KeyObject, kid: string): string {
  const header = Buffer.from(JSON.stringify({ typ: 'JWT', alg: 'RS256', kid })).toString('base64url');
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${header}.${body}.${sign('RSA-SHA256', Buffer.from(`${header}.${body}`), key).toString('base64url')}`;
}

describe("an event from one owner's credential never writes into another owner's repositories (sandbox GitHub, two organisations)", () => {
  let sim: Simulator;
  let app: RunningEscalator;
  let user: Octokit;
  const prefix = `sec-${randomUUID().slice(0, 8)}`;
  const acmeToken = `acme-${randomUUID()}`;
  const exampleToken = `example-${randomUUID()}`;
  const { log, lines } = capture();
  const overlay = 'apps/api/overlays/dev/kustomization.yaml';
  const acmeOverlay =
    'images:\n  - name: ghcr.io/acme/api\n    newTag: 1.4.0\n  - name: ghcr.io/acme/worker\n    newTag: 1.0.0\n';
  const config =
    'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n    autoMerge: true\nimages:\n  - name: ghcr.io/acme/api\n    policy: semver\n';

  beforeAll(async () => {
    sim = await startSimulator();
    app = await startEscalator(
      {
        APP_ID: String(sim.app.id),
        PRIVATE_KEY: sim.app.privateKey,
        WEBHOOK_SECRET: sim.app.webhookSecret,
        GITHUB_API_URL: sim.apiUrl,
        REDIS_URL: redisUrl,
        PORT: '0',
        HOST: '127.0.0.1',
        ESCALATOR_DEBOUNCE_MS: '200',
        ESCALATOR_INTAKE_TOKENS: JSON.stringify([
          { name: 'acme-ci', sha256: sha256(acmeToken), owners: ['acme'], images: ['ghcr.io/acme/'], sources: ['ci'] },
          { name: 'example-ci', sha256: sha256(exampleToken), owners: ['example'], sources: ['ci'] },
        ]),
      },
      { prefix, log },
    );
    sim.setWebhookUrl(`${app.url}/api/github/webhooks`);
    const client = new SandboxClient(sim.url, sim.user.token);
    user = new Octokit({
      baseUrl: sim.apiUrl,
      auth: sim.user.token,
      log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    });
    // Both organisations run acme's public image; each has its own installation.
    await client.createRepo({
      owner: 'acme',
      name: 'gitops',
      files: { '.github/escalator.yml': config, [overlay]: acmeOverlay },
    });
    await client.createRepo({
      owner: 'example',
      name: 'gitops',
      files: { '.github/escalator.yml': config, [overlay]: 'images:\n  - name: ghcr.io/acme/api\n    newTag: 1.0.0\n' },
    });
    const redis = new Redis(redisUrl);
    try {
      for (const owner of ['acme', 'example'])
        await eventually(
          async () => ((await redis.get(`${prefix}:index:repo:${owner}/gitops`)) ? true : undefined),
          `${owner}/gitops to be indexed`,
        );
    } finally {
      await redis.quit();
    }
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await sim?.close();
    await dropPrefix(prefix);
  });

  const announce = (token: string, image: string) =>
    fetch(`${app.url}/api/v1/images`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ image }),
    });
  const openPulls = async (owner: string) => (await user.rest.pulls.list({ owner, repo: 'gitops', state: 'all' })).data;
  const overlayAt = async (owner: string, ref: string) => {
    const { data } = await user.rest.repos.getContent({ owner, repo: 'gitops', path: overlay, ref });
    return Array.isArray(data) || data.type !== 'file' ? '' : Buffer.from(data.content, 'base64').toString('utf8');
  };

  it(
    "takes example's announcement of acme's image into example's repository only, and logs why acme's was refused",
    { timeout: 90_000 },
    async () => {
      const res = await announce(exampleToken, `ghcr.io/acme/api:1.5.0@${digest(1)}`);
      expect(res.status).toBe(202);
      expect(((await res.json()) as { scope: unknown }).scope).toEqual({
        credential: 'token:example-ci',
        owners: ['example'],
      });
      // The event is not lost: example, which runs the image, gets it.
      await eventually(async () => {
        const pull = (await openPulls('example'))[0];
        return pull && (await overlayAt('example', pull.head.sha)).includes('newTag: 1.5.0') ? true : undefined;
      }, "example's bump to 1.5.0");
      // The one image job that made example's bump decided acme's too: refused, with the reason.
      const refused = lines.find(
        (line) =>
          line.msg === "Image event not applied to a repository outside its credential's scope" &&
          line.repo === 'acme/gitops' &&
          line.tag === '1.5.0',
      );
      expect(refused?.reason).toBe('the credential token:example-ci may announce images for example, not for acme');
      expect(lines.find((line) => line.msg === 'Image fanned out' && line.tag === '1.5.0')?.targets).toBe(1);
      expect(await openPulls('acme')).toEqual([]);
      expect(await overlayAt('acme', 'main')).toBe(acmeOverlay);
    },
  );

  it(
    'says so in the log when no repository in the scope uses the image, and writes nothing',
    { timeout: 60_000 },
    async () => {
      // Only acme runs the worker image: example's announcement is accepted, and reaches no one.
      const res = await announce(exampleToken, `ghcr.io/acme/worker:9.9.9@${digest(6)}`);
      expect(res.status).toBe(202);
      const line = await eventually(
        async () =>
          lines.find(
            (entry) =>
              entry.msg === 'No repository in the scope of the credential uses this image; the event changes nothing' &&
              entry.tag === '9.9.9',
          ),
        'the log line of the event that reached no one',
      );
      expect(line).toMatchObject({
        image: 'ghcr.io/acme/worker',
        by: 'token:example-ci',
        owners: ['example'],
        refused: 1,
      });
      expect(lines.find((entry) => entry.repo === 'acme/gitops' && entry.tag === '9.9.9')?.reason).toBe(
        'the credential token:example-ci may announce images for example, not for acme',
      );
      expect(await openPulls('acme')).toEqual([]);
    },
  );

  it(
    "keeps a forged 99.0.0 from another owner's credential out of what acme gets: acme's own 1.6.0 lands",
    { timeout: 90_000 },
    async () => {
      expect((await announce(exampleToken, `ghcr.io/acme/api:99.0.0@${digest(2)}`)).status).toBe(202);
      await eventually(
        async () => (lines.some((line) => line.msg === 'Image fanned out' && line.tag === '99.0.0') ? true : undefined),
        'the forged event to be fanned out',
      );
      expect((await announce(acmeToken, `ghcr.io/acme/api:1.6.0@${digest(3)}`)).status).toBe(202);
      const pull = await eventually(async () => {
        const found = (await openPulls('acme'))[0];
        return found && (await overlayAt('acme', found.head.sha)).includes('newTag: 1.6.0') ? found : undefined;
      }, "acme's bump to 1.6.0");
      expect(pull.title).toBe('Bump api to 1.6.0 in dev');
      const commits = (await user.rest.pulls.listCommits({ owner: 'acme', repo: 'gitops', pull_number: pull.number }))
        .data;
      for (const commit of commits) expect(await overlayAt('acme', commit.sha)).not.toContain('99.0.0');
    },
  );
});

describe('scoped tokens and GitHub Actions OIDC at the HTTP routes (startEscalator, role web)', () => {
  let app: RunningEscalator;
  let jwks: Server;
  let jwksHits = 0;
  let queue: Queue;
  let redis: Redis;
  const prefix = `sec-${randomUUID().slice(0, 8)}`;
  const dir = mkdtempSync(join(tmpdir(), 'escalator-sec-'));
  const tokens = {
    ci: `ci-${randomUUID()}`,
    harbor: `harbor-${randomUUID()}`,
    hub: `hub-${randomUUID()}`,
    quay: `quay-${randomUUID()}`,
  };
  const github = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const google = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const audience = 'https://escalator.example.com';
  const gar = { audience: 'https://escalator.example.com/registry/gar', email: 'pubsub@proj.iam.gserviceaccount.com' };

  /**
   * GitHub's own example token, claim for claim: the "Understanding the OIDC token" example of
   * https://docs.github.com/en/actions/deployment/security-hardening-your-deployments/about-security-hardening-with-openid-connect
   * (claims listed at https://docs.github.com/en/actions/reference/security/oidc). Only `aud` (pinned
   * by ESCALATOR_CI_OIDC_AUDIENCE; GitHub's default is https://github.com/octo-org) and the times
   * differ: the example's nbf = iat - 600 and exp = iat + 300 are kept, moved to now.
   */
  const githubClaims = (override: Record<string, unknown> = {}) => {
    const iat = seconds();
    return {
      jti: 'example-id',
      sub: 'repo:octo-org/octo-repo:environment:prod',
      environment: 'prod',
      aud: audience,
      ref: 'refs/heads/main',
      sha: 'example-sha',
      repository: 'octo-org/octo-repo',
      repository_owner: 'octo-org',
      actor_id: '12',
      repository_visibility: 'private',
      repository_id: '74',
      repository_owner_id: '65',
      run_id: 'example-run-id',
      run_number: '10',
      run_attempt: '2',
      runner_environment: 'github-hosted',
      actor: 'octocat',
      workflow: 'example-workflow',
      head_ref: '',
      base_ref: '',
      event_name: 'workflow_dispatch',
      ref_type: 'branch',
      job_workflow_ref: 'octo-org/octo-automation/.github/workflows/oidc.yml@refs/heads/main',
      iss: 'https://token.actions.githubusercontent.com',
      nbf: iat - 600,
      exp: iat + 300,
      iat,
      ...override,
    };
  };
  const googleClaims = (override: Record<string, unknown> = {}) => ({
    iss: 'https://accounts.google.com',
    aud: gar.audience,
    email: gar.email,
    email_verified: true,
    iat: seconds() - 60,
    exp: seconds() + 3000,
    ...override,
  });

  beforeAll(async () => {
    jwks = createServer((req, res) => {
      jwksHits++;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          keys: [{ ...github.publicKey.export({ format: 'jwk' }), kid: 'gh-1', alg: 'RS256', use: 'sig' }],
        }),
      );
    });
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    const { port } = jwks.address() as { port: number };
    writeFileSync(
      join(dir, 'google.json'),
      JSON.stringify({
        keys: [{ ...google.publicKey.export({ format: 'jwk' }), kid: 'g-1', alg: 'RS256', use: 'sig' }],
      }),
    );
    app = await startEscalator(
      webEnv({
        ESCALATOR_INTAKE_TOKENS: JSON.stringify([
          { name: 'acme-ci', sha256: sha256(tokens.ci), owners: ['acme'], images: ['ghcr.io/acme/'], sources: ['ci'] },
          { name: 'acme-harbor', sha256: sha256(tokens.harbor), owners: ['acme'], sources: ['harbor'] },
          { name: 'acme-hub', sha256: sha256(tokens.hub), owners: ['acme'], sources: ['dockerhub'] },
          { name: 'acme-quay', sha256: sha256(tokens.quay), owners: ['acme'], sources: ['quay'] },
        ]),
        ESCALATOR_CI_OIDC_AUDIENCE: audience,
        ESCALATOR_CI_OIDC_JWKS_URL: `http://127.0.0.1:${port}/.well-known/jwks`,
        ESCALATOR_CI_OIDC_OWNERS: 'octo-org,acme',
        ESCALATOR_GAR_AUDIENCE: gar.audience,
        ESCALATOR_GAR_SERVICE_ACCOUNT: gar.email,
        ESCALATOR_GAR_JWKS_URL: join(dir, 'google.json'),
      }),
      { prefix, log: createLogger({ level: 'silent' }) },
    );
    redis = new Redis(redisUrl);
    queue = new Queue('image', { connection: redis, prefix });
  });
  afterAll(async () => {
    await app?.close();
    await queue?.close();
    await redis?.quit();
    await new Promise((resolve) => jwks?.close(resolve));
    await dropPrefix(prefix);
    rmSync(dir, { recursive: true, force: true });
  });

  async function post(path: string, body: string, authorization?: string) {
    const res = await fetch(`${app.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body,
    });
    return { status: res.status, body: (await res.json()) as { error?: string; jobs?: string[]; scope?: unknown } };
  }
  const ciImage = (image: string, authorization: string) =>
    post('/api/v1/images', JSON.stringify({ image }), authorization);
  const jobCount = async () => Object.values(await queue.getJobCounts()).reduce((a, b) => a + b, 0);

  describe('Docker Hub path token', () => {
    it('is accepted in its own path only: not as a header token, not on Quay; and a header token is no path token', async () => {
      expect((await post(`/registry/dockerhub/${tokens.hub}`, fixture('dockerhub/webhook-example.json'))).status).toBe(
        202,
      );
      const asHeader = await post(
        '/registry/harbor',
        fixture('harbor/push-artifact-default.json'),
        `Bearer ${tokens.hub}`,
      );
      expect([asHeader.status, asHeader.body.error]).toEqual([
        401,
        expect.stringMatching(
          /^the Authorization token does not match any token \/registry\/harbor accepts; expected /,
        ),
      ]);
      expect((await ciImage('ghcr.io/acme/api:1.0.0', `Bearer ${tokens.hub}`)).status).toBe(401);
      expect((await post(`/registry/quay/${tokens.hub}`, fixture('quay/repository-push.json'))).status).toBe(401);
      expect((await post(`/registry/quay/${tokens.quay}`, fixture('quay/repository-push.json'))).status).toBe(202);
      const headerInPath = await post(
        `/registry/dockerhub/${tokens.harbor}`,
        fixture('dockerhub/webhook-example.json'),
      );
      expect(headerInPath.status).toBe(401);
      expect(headerInPath.body.error).toContain('the path token does not match');
      expect(
        (await post('/registry/harbor', fixture('harbor/push-artifact-default.json'), `Bearer ${tokens.harbor}`))
          .status,
      ).toBe(202);
    });
  });

  describe('image prefixes and sources of a token', () => {
    it("refuses an image outside the token's prefixes with 403 and the reason, and keeps nothing of the request", async () => {
      const before = await jobCount();
      const res = await ciImage('ghcr.io/example/hello:1.0.0', `Bearer ${tokens.ci}`);
      expect(res.status).toBe(403);
      expect(res.body.error).toBe(
        "token:acme-ci may announce images under ghcr.io/acme/ only, not ghcr.io/example/hello; nothing of this request was accepted. Ask an operator to add the prefix to the token's images",
      );
      expect(await jobCount()).toBe(before);
    });

    it('refuses a token on a route its entry does not list, with 403', async () => {
      const res = await post('/registry/harbor', fixture('harbor/push-artifact-default.json'), `Bearer ${tokens.ci}`);
      expect(res.status).toBe(403);
      expect(res.body.error).toContain('the token "acme-ci" is not allowed on harbor (it is for ci)');
    });

    it("carries the token's owners into the image job, never the token", async () => {
      const res = await ciImage(`ghcr.io/acme/api:2.0.0@${digest(4)}`, `Bearer ${tokens.ci}`);
      expect(res.status).toBe(202);
      expect(res.body.scope).toEqual({ credential: 'token:acme-ci', owners: ['acme'] });
      const job = await queue.getJob(res.body.jobs![0]!);
      expect(job?.data.scope).toEqual({ by: 'token:acme-ci', owners: ['acme'] });
      expect(JSON.stringify(job?.data)).not.toContain(tokens.ci);
    });
  });

  describe('GitHub Actions OIDC (trusted publishing)', () => {
    it("takes GitHub's example token: the event may change only repositories of its repository_owner", async () => {
      const res = await ciImage(
        `ghcr.io/octo-org/octo-repo:1.2.3@${digest(5)}`,
        `Bearer ${jwt(githubClaims(), github.privateKey, 'gh-1')}`,
      );
      expect(res.status).toBe(202);
      expect(res.body.scope).toEqual({ credential: 'oidc:octo-org/octo-repo', owners: ['octo-org'] });
      const job = await queue.getJob(res.body.jobs![0]!);
      expect(job?.data.scope).toEqual({ by: 'oidc:octo-org/octo-repo', owners: ['octo-org'] });
    });

    it.each([
      [
        'another issuer',
        { iss: 'https://token.actions.example.com' },
        401,
        'the token was not issued by GitHub Actions',
      ],
      [
        'another audience',
        { aud: 'https://github.com/octo-org' },
        401,
        'the token audience does not match ESCALATOR_CI_OIDC_AUDIENCE',
      ],
      [
        'an expired token',
        { iat: seconds() - 900, nbf: seconds() - 1500, exp: seconds() - 10 },
        401,
        'the token has expired',
      ],
      ['nbf in the future', { nbf: seconds() + 600 }, 401, 'the token is not valid yet (nbf)'],
      [
        'iat in the future',
        { iat: seconds() + 600, exp: seconds() + 900 },
        401,
        'the token was issued in the future (iat)',
      ],
      [
        'a lifetime over the limit',
        { exp: seconds() + 7 * 3600 },
        401,
        'longer than the 21600 s GitHub Actions issues',
      ],
      [
        'no repository_owner',
        { repository_owner: undefined },
        401,
        'the token names no repository_owner and repository',
      ],
      [
        'a repository of another owner than repository_owner',
        { repository: 'acme/api' },
        401,
        'the token names no repository_owner and repository',
      ],
      [
        'an owner not allowed',
        { repository: 'example/app', repository_owner: 'example', sub: 'repo:example/app:ref:refs/heads/main' },
        403,
        'workflows of example/app may not announce images here: example is not in ESCALATOR_CI_OIDC_OWNERS',
      ],
    ])('refuses a token with %s', async (_name, override, status, message) => {
      const before = await jobCount();
      const res = await ciImage(
        'ghcr.io/octo-org/octo-repo:1.2.4',
        `Bearer ${jwt(githubClaims(override), github.privateKey, 'gh-1')}`,
      );
      expect(res.status).toBe(status);
      expect(res.body.error).toContain(message);
      expect(await jobCount()).toBe(before);
    });

    it("refuses a token whose signature is not GitHub's", async () => {
      const res = await ciImage(
        'ghcr.io/octo-org/octo-repo:1.2.4',
        `Bearer ${jwt(githubClaims(), stranger.privateKey, 'gh-1')}`,
      );
      expect([res.status, res.body.error]).toEqual([401, 'the token signature is invalid']);
    });

    it('refuses a token signed with an unknown key, refetching the JWKS for unknown keys at most once a minute', async () => {
      const token = jwt(githubClaims(), stranger.privateKey, 'gh-unknown');
      const first = await ciImage('ghcr.io/octo-org/octo-repo:1.2.4', `Bearer ${token}`);
      expect([first.status, first.body.error]).toEqual([401, 'the token was signed with an unknown key']);
      const hits = jwksHits;
      for (let i = 0; i < 5; i++)
        expect((await ciImage('ghcr.io/octo-org/octo-repo:1.2.4', `Bearer ${token}`)).status).toBe(401);
      expect(jwksHits).toBe(hits);
    });
  });

  describe('Google Artifact Registry tokens', () => {
    it.each([
      [
        'iat in the future',
        { iat: seconds() + 600, exp: seconds() + 1200 },
        'the token was issued in the future (iat)',
      ],
      ['no iat', { iat: undefined }, 'the token has no issue time (iat)'],
      ['nbf in the future', { nbf: seconds() + 600 }, 'the token is not valid yet (nbf)'],
      [
        'a lifetime over the hour Google issues',
        { iat: seconds() - 60, exp: seconds() + 24 * 3600 },
        'longer than the 3600 s Google issues',
      ],
      ['email_verified false', { email_verified: false }, 'email_verified must be true'],
      ['no email_verified', { email_verified: undefined }, 'email_verified must be true'],
    ])('refuses a Pub/Sub token with %s', async (_name, override, message) => {
      const res = await post(
        '/registry/gar',
        fixture('gar/push-insert-tagged.json'),
        `Bearer ${jwt(googleClaims(override), google.privateKey, 'g-1')}`,
      );
      expect(res.status).toBe(401);
      expect(res.body.error).toContain(message);
    });

    it('still takes a token Google would send (iat an hour before exp, email verified)', async () => {
      const iat = seconds() - 30;
      const res = await post(
        '/registry/gar',
        fixture('gar/push-insert-tagged.json'),
        `Bearer ${jwt(googleClaims({ iat, nbf: iat, exp: iat + 3600 }), google.privateKey, 'g-1')}`,
      );
      expect(res.status).toBe(202);
    });
  });
});

describe('intake credentials at boot', () => {
  const token = `tok-${randomUUID()}`;
  const entry = { name: 'acme-ci', sha256: sha256(token), owners: ['acme'] };

  it.each([
    [
      'a global token beside scoped ones',
      { ESCALATOR_REGISTRY_TOKEN: `registry-${randomUUID()}`, ESCALATOR_INTAKE_TOKENS: JSON.stringify([entry]) },
      'ESCALATOR_REGISTRY_TOKEN: a global token lets whoever holds it announce images into every installation',
    ],
    [
      'a token where its SHA-256 belongs',
      { ESCALATOR_INTAKE_TOKENS: JSON.stringify([{ ...entry, sha256: token }]) },
      'ESCALATOR_INTAKE_TOKENS[0].sha256: must be the SHA-256 of the token as 64 lowercase hex characters, never the token itself',
    ],
    [
      'an entry without owners',
      { ESCALATOR_INTAKE_TOKENS: JSON.stringify([{ name: 'x', sha256: entry.sha256 }]) },
      'ESCALATOR_INTAKE_TOKENS[0].owners:',
    ],
    [
      'a path token that is also a header token',
      { ESCALATOR_INTAKE_TOKENS: JSON.stringify([{ ...entry, sources: ['dockerhub', 'ci'] }]) },
      'ESCALATOR_INTAKE_TOKENS[0].sources: a dockerhub token sits in a URL that senders log',
    ],
    [
      'two entries with one token',
      { ESCALATOR_INTAKE_TOKENS: JSON.stringify([entry, { ...entry, name: 'again' }]) },
      'ESCALATOR_INTAKE_TOKENS[1].sha256: the same token as entry "acme-ci"',
    ],
  ])('refuses to start with %s, saying what to change', async (_name, env, message) => {
    let started: RunningEscalator | undefined;
    const outcome = await startEscalator(webEnv(env), {
      prefix: `sec-${randomUUID().slice(0, 8)}`,
      log: createLogger({ level: 'silent' }),
    }).then(
      (app) => ((started = app), 'started'),
      (error: Error) => error.message,
    );
    await started?.close();
    expect(outcome).toContain(message);
  });

  it('warns at boot that a legacy global token writes into every installation', async () => {
    const { log, lines } = capture();
    const app = await startEscalator(webEnv({ ESCALATOR_CI_TOKEN: `ci-${randomUUID()}` }), {
      prefix: `sec-${randomUUID().slice(0, 8)}`,
      log,
    });
    await app.close();
    const warning = lines.find((line) => line.variable === 'ESCALATOR_CI_TOKEN');
    expect(warning?.level).toBe(40);
    expect(warning?.msg).toContain("whoever holds it can announce images into every installation's repositories");
  });

  it('`escalator token` prints a new token and the entry that holds only its hash; Escalator takes the token with that entry', async () => {
    let out = '';
    const code = await runCli(
      ['token', '--name', 'acme-ci', '--owners', 'acme', '--images', 'ghcr.io/acme/', '--sources', 'ci'],
      { stdout: (text) => (out += text), stderr: (text) => (out += text), cwd: process.cwd() },
    );
    expect(code).toBe(0);
    const lines = out.split('\n');
    const printed = lines[1]!.trim();
    const line = lines[3]!;
    expect(printed).toMatch(/^esc_[A-Za-z0-9_-]{43}$/);
    expect(JSON.parse(line)).toEqual({
      name: 'acme-ci',
      sha256: sha256(printed),
      owners: ['acme'],
      images: ['ghcr.io/acme/'],
      sources: ['ci'],
    });
    expect(out.split(printed).length).toBe(2); // the token is printed once, the entry does not hold it
    const prefix = `sec-${randomUUID().slice(0, 8)}`;
    const app = await startEscalator(webEnv({ ESCALATOR_INTAKE_TOKENS: `[${line}]` }), {
      prefix,
      log: createLogger({ level: 'silent' }),
    });
    try {
      const res = await fetch(`${app.url}/api/v1/images`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${printed}` },
        body: JSON.stringify({ image: 'ghcr.io/acme/api:1.0.0' }),
      });
      expect(res.status).toBe(202);
    } finally {
      await app.close();
      await dropPrefix(prefix);
    }
  });
});
