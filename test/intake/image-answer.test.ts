import { createHash, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { SandboxClient, type Simulator, startSimulator } from '@escalator/github-sandbox';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEscalator, type RunningEscalator } from '../../src/main/server.js';
import { createLogger } from '../../src/observability/logger.js';
import { appEnv, deleteKeys, eventually, redisUrl, userOctokit } from '../support/stack.js';

/**
 * Issue 35 §3 "An image nothing uses: 202 and then nothing". The answer to an image event says
 * what will happen to each image, an info log line says the same, and the status URL in the
 * answer says what did. Everything through the wire: HTTP to Escalator as production starts it,
 * real Redis under a random prefix, the sandbox GitHub with two organisations.
 */

const sha256 = (token: string): string => createHash('sha256').update(token).digest('hex');
const digest = (n: number): string => `sha256:${String(n).padStart(64, 'b')}`;

interface Answer {
  accepted: number;
  jobs: string[];
  images: Array<{
    image: string;
    job: string;
    will: string;
    reason?: string;
    detail: string;
    status: string;
    repositories: Array<{ repository: string; takes: Array<{ environment: string; app: string }>; reason?: string }>;
  }>;
}

interface Status {
  job: string;
  state: string;
  outcome: string;
  reason?: string;
  detail: string;
  targets?: Array<{ repository: string; environment: string; app: string; pull?: { number: number; url: string } }>;
}

describe('the answer to an image event says what will happen to it, and its status URL what did', () => {
  let sim: Simulator;
  let app: RunningEscalator;
  const prefix = `answer-${randomUUID().slice(0, 8)}`;
  const acmeToken = `acme-${randomUUID()}`;
  const exampleToken = `example-${randomUUID()}`;
  const registryToken = `registry-${randomUUID()}`;
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger({
    level: 'info',
    destination: new Writable({
      write: (chunk, _encoding, done) => (lines.push(JSON.parse(String(chunk)) as Record<string, unknown>), done()),
    }),
  });
  const overlay = 'apps/api/overlays/dev/kustomization.yaml';
  // No autoMerge: the pull request stays open for the status to name it.
  const config =
    'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\nimages:\n  - name: ghcr.io/acme/api\n    policy: semver\n';

  beforeAll(async () => {
    sim = await startSimulator();
    app = await startEscalator(
      {
        ...appEnv(sim, redisUrl),
        PORT: '0',
        ESCALATOR_DEBOUNCE_MS: '200',
        ESCALATOR_INTAKE_TOKENS: JSON.stringify([
          { name: 'acme-ci', sha256: sha256(acmeToken), owners: ['acme'], sources: ['ci'] },
          { name: 'example-ci', sha256: sha256(exampleToken), owners: ['example'], sources: ['ci'] },
          { name: 'acme-registry', sha256: sha256(registryToken), owners: ['acme'], sources: ['distribution'] },
        ]),
      },
      { prefix, log },
    );
    sim.setWebhookUrl(`${app.url}/api/github/webhooks`);
    const client = new SandboxClient(sim.url, sim.user.token);
    // Only acme runs the worker image.
    await client.createRepo({
      owner: 'acme',
      name: 'gitops',
      files: {
        '.github/escalator.yml': config,
        [overlay]:
          'images:\n  - name: ghcr.io/acme/api\n    newTag: 1.4.0\n  - name: ghcr.io/acme/worker\n    newTag: 1.0.0\n',
      },
    });
    await client.createRepo({
      owner: 'example',
      name: 'gitops',
      files: { '.github/escalator.yml': config, [overlay]: 'images:\n  - name: ghcr.io/acme/api\n    newTag: 1.0.0\n' },
    });
    const redis = new Redis(redisUrl);
    try {
      for (const owner of ['acme', 'example'])
        await eventually(async () => ((await redis.get(`${prefix}:index:repo:${owner}/gitops`)) ? true : undefined), {
          what: `${owner}/gitops to be indexed`,
        });
    } finally {
      await redis.quit();
    }
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await sim?.close();
    const redis = new Redis(redisUrl);
    await deleteKeys(redis, `${prefix}:*`);
    await redis.quit();
  });

  const announce = async (token: string, image: string): Promise<{ status: number; body: Answer }> => {
    const res = await fetch(`${app.url}/api/v1/images`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ image }),
    });
    return { status: res.status, body: (await res.json()) as Answer };
  };
  const status = async (token: string | undefined, path: string): Promise<{ status: number; body: unknown }> => {
    const res = await fetch(`${app.url}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    return { status: res.status, body: await res.json() };
  };
  /** Polls the status URL as a sender would, until `done` holds. */
  const outcome = (token: string, path: string, done: (s: Status) => boolean = (s) => s.outcome !== 'pending') =>
    eventually(
      async () => {
        const { status: code, body } = await status(token, path);
        expect(code).toBe(200);
        return done(body as Status) ? (body as Status) : undefined;
      },
      { what: `the status at ${path}` },
    );
  const logLine = (image: string) =>
    lines.find(
      (line) => line.msg === 'Registry event accepted' && (line.images as string[] | undefined)?.[0] === image,
    );

  it(
    'before the index is marked built, an image no one uses is "unknown"; its status gives the outcome once built',
    {
      timeout: 90_000,
    },
    async () => {
      // Installations indexed their repositories; the index is marked built by the first full resync,
      // which the image job asks for when it finds no repository and no mark.
      const { status: code, body } = await announce(acmeToken, `ghcr.io/acme/first:1.0.0@${digest(9)}`);
      expect(code).toBe(202);
      expect(body.images[0]).toMatchObject({ will: 'unknown', reason: 'index-rebuilding', repositories: [] });
      expect(await outcome(acmeToken, body.images[0]!.status)).toMatchObject({
        outcome: 'nothing',
        reason: 'no-environment',
      });
    },
  );

  it(
    'taken by a repository: names it and its target, logs the same, and the status gives the pull request',
    { timeout: 90_000 },
    async () => {
      const { status: code, body } = await announce(acmeToken, `ghcr.io/acme/api:1.5.0@${digest(1)}`);
      expect(code).toBe(202);
      const [image] = body.images;
      expect(image).toMatchObject({
        image: `ghcr.io/acme/api:1.5.0@${digest(1)}`,
        job: body.jobs[0],
        will: 'bump',
        repositories: [{ repository: 'acme/gitops', takes: [{ environment: 'dev', app: 'api' }] }],
        status: `/api/v1/images/status/${body.jobs[0]}`,
      });
      expect(image?.detail).toContain('acme/gitops (dev/api) will get a bump to 1.5.0');
      // example also runs the image: its repository is outside acme's scope, and not named.
      expect(JSON.stringify(body)).not.toContain('example');
      expect(logLine('ghcr.io/acme/api:1.5.0')?.will).toEqual([
        expect.objectContaining({ will: 'bump', repositories: ['acme/gitops'] }),
      ]);
      const done = await outcome(acmeToken, image!.status, (s) => Boolean(s.targets?.[0]?.pull));
      const pulls = (await userOctokit(sim).rest.pulls.list({ owner: 'acme', repo: 'gitops', state: 'open' })).data;
      expect(pulls).toHaveLength(1);
      expect(done).toMatchObject({
        state: 'completed',
        outcome: 'bump',
        targets: [
          {
            repository: 'acme/gitops',
            environment: 'dev',
            app: 'api',
            pull: { number: pulls[0]!.number, url: expect.stringMatching(`/acme/gitops/pull/${pulls[0]!.number}$`) },
          },
        ],
      });
    },
  );

  it(
    'no environment uses it: says so, logs it, and the status says nothing was done',
    { timeout: 60_000 },
    async () => {
      const { status: code, body } = await announce(acmeToken, `ghcr.io/acme/unused:2.0.0@${digest(2)}`);
      expect(code).toBe(202);
      expect(body.images[0]).toMatchObject({ will: 'nothing', reason: 'no-environment', repositories: [] });
      expect(body.images[0]?.detail).toBe(
        "no environment in a repository of acme uses ghcr.io/acme/unused, so nothing changes; reference the image in an environment's files (from: registry), or send it with the credential of the owner that uses it",
      );
      expect(logLine('ghcr.io/acme/unused:2.0.0')?.will).toEqual([
        expect.objectContaining({ will: 'nothing', reason: 'no-environment' }),
      ]);
      expect(await outcome(acmeToken, body.images[0]!.status)).toMatchObject({
        state: 'completed',
        outcome: 'nothing',
        reason: 'no-environment',
      });
    },
  );

  it(
    'the tag policy refuses it: names the repository and the policy, and the status says so',
    { timeout: 60_000 },
    async () => {
      const { status: code, body } = await announce(acmeToken, `ghcr.io/acme/api:nightly@${digest(3)}`);
      expect(code).toBe(202);
      expect(body.images[0]).toMatchObject({
        will: 'nothing',
        reason: 'tag-policy',
        repositories: [{ repository: 'acme/gitops', takes: [], reason: 'tag-policy' }],
      });
      expect(body.images[0]?.detail).toContain('acme/gitops: its tag policy for ghcr.io/acme/api refuses nightly');
      expect(await outcome(acmeToken, body.images[0]!.status)).toMatchObject({
        outcome: 'nothing',
        reason: 'tag-policy',
      });
    },
  );

  it(
    "used only outside the sender's scope: the same answer as an image no one uses, naming no other owner's repository",
    { timeout: 60_000 },
    async () => {
      // acme runs the worker image; example's credential announces it.
      const { status: code, body } = await announce(exampleToken, `ghcr.io/acme/worker:9.9.9@${digest(4)}`);
      expect(code).toBe(202);
      expect(body.images[0]).toMatchObject({ will: 'nothing', reason: 'no-environment', repositories: [] });
      expect(body.images[0]?.detail).toBe(
        "no environment in a repository of example uses ghcr.io/acme/worker, so nothing changes; reference the image in an environment's files (from: registry), or send it with the credential of the owner that uses it",
      );
      const done = await outcome(exampleToken, body.images[0]!.status);
      expect(done).toMatchObject({ outcome: 'nothing', reason: 'no-environment' });
      for (const text of [
        JSON.stringify(body),
        JSON.stringify(done),
        JSON.stringify(logLine('ghcr.io/acme/worker:9.9.9')),
      ])
        expect(text).not.toContain('gitops');
    },
  );

  it("answers the status only to the credential that announced the event: another owner's and no credential are refused", async () => {
    const { body } = await announce(acmeToken, `ghcr.io/acme/api:1.6.0@${digest(5)}`);
    const path = body.images[0]!.status;
    const other = await status(exampleToken, path);
    expect(other.status).toBe(404);
    expect(JSON.stringify(other.body)).not.toContain('acme/gitops');
    expect((await status(undefined, path)).status).toBe(401);
    expect((await status('not-a-token', path)).status).toBe(401);
    expect((await status(acmeToken, path)).status).toBe(200);
    // An id that is not an image job's, or that this credential never announced, is the same 404.
    expect((await status(acmeToken, '/api/v1/images/status/image__nothing')).status).toBe(404);
  });

  it('gives a registry route its own status path, answered to that credential only', { timeout: 60_000 }, async () => {
    // CNCF Distribution's notification envelope (docs/registries.md; test/fixtures/registry).
    const res = await fetch(`${app.url}/registry/distribution`, {
      method: 'POST',
      headers: {
        'content-type': 'application/vnd.docker.distribution.events.v2+json',
        authorization: `Bearer ${registryToken}`,
      },
      body: JSON.stringify({
        events: [
          {
            action: 'push',
            target: {
              mediaType: 'application/vnd.oci.image.manifest.v1+json',
              repository: 'acme/unused',
              tag: '3.0.0',
              digest: digest(7),
            },
            request: { host: 'ghcr.io' },
          },
        ],
      }),
    });
    expect(res.status).toBe(202);
    const body = (await res.json()) as Answer;
    expect(body.images[0]).toMatchObject({
      will: 'nothing',
      reason: 'no-environment',
      status: `/registry/distribution/status/${body.jobs[0]}`,
    });
    expect(await outcome(registryToken, body.images[0]!.status)).toMatchObject({ outcome: 'nothing' });
    // The same owners through another credential is another sender: its events are not this one's.
    expect((await status(acmeToken, `/api/v1/images/status/${body.jobs[0]}`)).status).toBe(404);
    expect((await status(acmeToken, body.images[0]!.status)).status).not.toBe(200);
  });
});
