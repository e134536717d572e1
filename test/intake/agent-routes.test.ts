import { agentKey } from '../../src/intake/agent-routes.js';
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RepoState } from '../../src/adapters/store/repo-state.js';
import { agentRoutes, AGENT_MAX_BODY_BYTES } from '../../src/intake/agent-routes.js';
import { createLogger } from '../../src/observability/logger.js';
import type { AppHealth } from '../../src/planners/health.js';
import { startWebServer, type WebServer } from '../../src/web/server.js';
import { eventually, redisUrl, startStack, waitIndexed, type Stack } from '../support/stack.js';

/**
 * The agent routes and GitHub's status, check run and deployment status events, end to end: the
 * whole product on real Redis and the sandbox GitHub; a report is recorded once `store.health`
 * holds it. Bodies are the fixtures of test/fixtures/agents (see its README for their sources).
 */
const root = join(import.meta.dirname, '../..');
const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(root, 'test/fixtures/agents', name), 'utf8')) as Record<string, unknown>;
const examples = JSON.parse(
  readFileSync(createRequire(import.meta.url).resolve('@octokit/webhooks-examples'), 'utf8'),
) as Array<{ name: string; examples: Array<Record<string, unknown>> }>;
const example = (name: string, index = 0): Record<string, unknown> =>
  structuredClone(examples.find((entry) => entry.name === name)!.examples[index]!);

const token = `agent-${randomUUID()}`;
const repo = 'gitops';
const config = `environments:
  - name: dev
    paths: ["apps/*/overlays/dev"]
    from: registry
    health:
      argocd: "{app}-dev"
      statuses:
        - { context: "kustomization/apps-dev/*", user: Codertocat }
        - { context: "kustomization/apps-dev/*", app: github-actions }
        - { context: "argocd-dev", user: Codertocat }
  - name: staging
    paths: ["apps/*/overlays/staging"]
    from: dev
    health: { flux: "flux-system/apps-staging", tolerate: 2m }
`;
const overlay = (app: string) => `resources: [../../base]
images:
  - name: ghcr.io/example/${app}
    newTag: "1.0.0"
`;
/** The owner's agent key: what its Argo CD and Flux are given (npx escalator agent-key <owner>). */
let key = '';
const sign = (body: string, with_ = key) => `sha256=${createHmac('sha256', with_).update(body).digest('hex')}`;

describe('agent reports in (real Redis, sandbox GitHub)', () => {
  let stack: Stack;
  let owner: string;
  let installationId: number;
  let redis: Redis;
  let store: RepoState;
  let health: Queue;

  beforeAll(async () => {
    stack = await startStack({ ESCALATOR_AGENT_TOKEN: token }, { name: 'agents' });
    const files: Record<string, string> = { '.github/escalator.yml': config };
    for (const app of ['hello', 'world'])
      for (const env of ['dev', 'staging']) files[`apps/${app}/overlays/${env}/kustomization.yaml`] = overlay(app);
    const created = await stack.client.createRepo({ name: repo, files });
    owner = created.full_name.split('/')[0]!;
    key = agentKey(token, owner);
    installationId = created.installation_id!;
    await waitIndexed(stack, owner, repo);
    redis = new Redis(redisUrl);
    store = new RepoState(redis, stack.prefix);
    health = new Queue('health', { connection: redis, prefix: stack.prefix });
  });
  afterAll(async () => {
    await health?.close();
    await redis?.quit();
    await stack?.close();
  });

  const jobsAdded = async (): Promise<number> =>
    Object.values(await health.getJobCounts()).reduce((sum, n) => sum + n, 0);
  const recorded = (environment: string, app: string, at: string): Promise<AppHealth> =>
    eventually(
      async () => {
        const current = await store.health.load({ owner, repo }, environment, app);
        return current?.reportedAt === at ? current : undefined;
      },
      { what: `${environment}/${app} health reported at ${at}` },
    );
  const postFlux = (body: string, path = `/agents/flux/${owner}/${repo}`, signature = sign(body, key)) =>
    fetch(`${stack.app.url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-signature': signature,
        'gotk-component': 'kustomize-controller',
      },
      body,
    });
  const postArgo = (body: unknown, path = '/agents/argocd', bearer = key) =>
    fetch(`${stack.app.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
      body: JSON.stringify(body),
    });
  const fluxBody = (fields: Record<string, unknown> = {}) =>
    JSON.stringify({ ...fixture('flux-kustomization-succeeded.json'), ...fields });
  const argoBody = (fields: Record<string, unknown> = {}) => ({
    ...fixture('argocd-deployed.json'),
    app: 'hello-dev',
    repoURL: `${stack.sim.url.replace(/\/$/, '')}/${owner}/${repo}.git`,
    ...fields,
  });

  describe('POST /agents/flux (generic-hmac)', () => {
    it('accepts a signed event and records it for every app of the Kustomization', async () => {
      const res = await postFlux(fluxBody());
      expect(res.status).toBe(202);
      expect(await res.json()).toMatchObject({
        repository: `${owner}/${repo}`,
        revision: '4f9a2c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39',
        targets: ['staging/hello', 'staging/world'],
      });
      for (const app of ['hello', 'world'])
        expect(await recorded('staging', app, '2026-11-20T10:00:00.000Z')).toEqual({
          revision: '4f9a2c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39',
          sync: 'synced',
          health: 'healthy',
          healthySince: '2026-11-20T10:00:00.000Z',
          reportedAt: '2026-11-20T10:00:00.000Z',
          source: { agent: 'flux', object: 'flux-system/apps-staging' },
          message: 'Reconciliation finished in 2.418s, next run in 10m0s',
        });
    });

    it('verifies the other hash functions Flux documents for X-Signature', async () => {
      const body = fluxBody({ timestamp: '2026-11-20T10:00:30Z' });
      const signature = `sha512=${createHmac('sha512', key).update(body).digest('hex')}`;
      expect((await postFlux(body, `/agents/flux/${owner}/${repo}`, signature)).status).toBe(202);
      await recorded('staging', 'hello', '2026-11-20T10:00:30.000Z');
    });

    it('answers a redelivery of the same event 200 with no new work', async () => {
      const res = await postFlux(fluxBody());
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ duplicate: 2 });
    });

    it('asks for the repository in the URL on the plain route: a Flux event names none, so no owner key applies', async () => {
      const before = await jobsAdded();
      const res = await postFlux(fluxBody({ timestamp: '2026-11-20T10:01:00Z' }), '/agents/flux');
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(
        /^name the repository in the URL, \/agents\/flux\/<owner>\/<repo>/,
      );
      expect(await jobsAdded()).toBe(before);
    });

    it('answers 202 unknown, recording nothing, for a repository Escalator does not know', async () => {
      const before = await jobsAdded();
      const res = await postFlux(fluxBody({ timestamp: '2026-11-20T10:02:00Z' }), `/agents/flux/${owner}/elsewhere`);
      expect(res.status).toBe(202);
      expect(((await res.json()) as { unknown: string }).unknown).toBe(
        `Escalator does not know ${owner}/elsewhere: install the App on it, or wait until it is indexed`,
      );
      expect(await jobsAdded()).toBe(before);
    });

    it('refuses a bad signature with 401 and records nothing', async () => {
      const before = await jobsAdded();
      const body = fluxBody({ timestamp: '2026-11-20T10:30:00Z', severity: 'error', reason: 'HealthCheckFailed' });
      for (const signature of [
        sign(body, 'not-the-token-at-all'),
        sign(body, token),
        sign(body, agentKey(token, 'intruder')),
        sign(`${body} `),
        'sha1=abc',
        '',
      ]) {
        const res = await postFlux(body, `/agents/flux/${owner}/${repo}`, signature);
        expect(res.status, signature).toBe(401);
        expect(((await res.json()) as { error: string }).error).toMatch(/X-Signature/);
      }
      expect(await jobsAdded()).toBe(before);
      expect((await store.health.load({ owner, repo }, 'staging', 'hello'))?.health).toBe('healthy');
    });

    it('refuses a body that is not a Flux event with 400 and the reason', async () => {
      const body = JSON.stringify({ kind: 'Kustomization' });
      const res = await postFlux(body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/^the body is not a Flux event: involvedObject/);
    });

    it('refuses a body over the limit with 413', async () => {
      const body = fluxBody({ message: 'x'.repeat(AGENT_MAX_BODY_BYTES) });
      const res = await postFlux(body);
      expect(res.status).toBe(413);
    });

    it('answers 200 ignored for a HelmRelease event without a commit, recording nothing', async () => {
      const body = JSON.stringify(fixture('flux-helmrelease-upgraded.json'));
      const res = await postFlux(body);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { ignored: string }).ignored).toMatch(/names no Git commit/);
    });
  });

  describe('POST /agents/argocd (Notifications webhook)', () => {
    it('accepts the bearer token and records the app its repoURL and name point at', async () => {
      const res = await postArgo(argoBody());
      expect(res.status).toBe(202);
      expect(await res.json()).toMatchObject({ repository: `${owner}/${repo}`, targets: ['dev/hello'] });
      expect(await recorded('dev', 'hello', '2026-11-20T10:00:42.000Z')).toMatchObject({
        health: 'healthy',
        source: {
          agent: 'argocd',
          object: 'argocd/hello-dev',
          url: 'https://argocd.example.com/applications/hello-staging',
        },
      });
    });

    it('plans the promotions out of the environment whose health changed', async () => {
      const promote = new Queue('promote', { connection: redis, prefix: stack.prefix });
      try {
        const jobs = await promote.getJobs(['waiting', 'active', 'delayed', 'completed', 'failed']);
        expect(jobs.map((job) => job.data as { environment: string; app: string; reason: string })).toContainEqual(
          expect.objectContaining({ environment: 'staging', app: 'hello', reason: 'health' }),
        );
      } finally {
        await promote.close();
      }
    });

    it('refuses a wrong token with 401 and records nothing', async () => {
      const before = await jobsAdded();
      const res = await postArgo(argoBody({ healthStatus: 'Degraded' }), '/agents/argocd', `${key}x`);
      expect(res.status).toBe(401);
      expect(await jobsAdded()).toBe(before);
    });

    it("never records one owner's report in another owner's repository: only that owner's key counts", async () => {
      const before = await jobsAdded();
      const forged = argoBody({ healthStatus: 'Degraded' });
      // Another tenant holds its own key (and the server's secret is never given to agents).
      for (const bearer of [agentKey(token, 'intruder'), token])
        for (const path of ['/agents/argocd', `/agents/argocd/${owner}/${repo}`]) {
          const res = await postArgo(forged, path, bearer);
          expect(res.status).toBe(401);
          expect(((await res.json()) as { error: string }).error).toMatch(/agent key of/);
        }
      expect(await jobsAdded()).toBe(before);
      const current = await store.health.load({ owner, repo }, 'dev', 'hello');
      expect(current?.health).not.toBe('degraded');
    });

    it('refuses a body not of the shipped template with 400 and the reason', async () => {
      const res = await postArgo({ app: 'hello-dev', status: 'Healthy' });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toContain('deploy/agents/argocd-notifications-cm.yaml');
    });

    it('refuses a repoURL that disagrees with the repository in the path', async () => {
      const res = await postArgo(argoBody(), `/agents/argocd/${owner}/other`);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toContain(`is not ${owner}/other`);
    });

    it('answers 202 for an unknown application, counts it, and records nothing', async () => {
      const metric = async (): Promise<number> => {
        const text = await (await fetch(`${stack.app.url}/metrics`)).text();
        const line = text
          .split('\n')
          .find((l) => l.startsWith('escalator_agent_reports_total{agent="argocd",outcome="unknown"}'));
        return line ? Number(line.split(' ').pop()) : 0;
      };
      const before = { metric: await metric(), jobs: await jobsAdded() };
      const res = await postArgo(argoBody({ app: 'nobody-dev' }));
      expect(res.status).toBe(202);
      expect(((await res.json()) as { unknown: string }).unknown).toContain('argocd object argocd/nobody-dev');
      expect(await metric()).toBe(before.metric + 1);
      expect(await jobsAdded()).toBe(before.jobs);
      expect(await store.health.load({ owner, repo }, 'dev', 'nobody')).toBeUndefined();
    });
  });

  describe('GitHub events (signed deliveries to /api/github/webhooks)', () => {
    const deliver = async (event: string, payload: Record<string, unknown>) => {
      const body = JSON.stringify({
        ...payload,
        repository: {
          ...(payload.repository as object),
          name: repo,
          full_name: `${owner}/${repo}`,
          owner: { login: owner },
          default_branch: 'main',
        },
        installation: { id: installationId },
      });
      const res = await fetch(`${stack.app.url}/api/github/webhooks`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-github-event': event,
          'x-github-delivery': randomUUID(),
          'x-hub-signature-256': `sha256=${createHmac('sha256', stack.sim.app.webhookSecret).update(body).digest('hex')}`,
        },
        body,
      });
      expect(res.status).toBeLessThan(300);
    };

    // The senders are the examples' (`Codertocat`, the App `github-actions`), bound in the config;
    // the commit is the default branch's head (docs/health.md, "Who may speak for an environment").
    let head = '';
    beforeAll(async () => {
      head = (await store.subscriptions.loadRepo(owner, repo))!.sha;
    });

    it('records a Flux github-provider commit status for the apps its context names', async () => {
      await deliver('status', {
        ...example('status'),
        sha: head,
        context: 'kustomization/apps-dev/2f1e4c3b',
        state: 'failure',
        description: 'health check failed',
        updated_at: '2026-11-20T11:00:00+00:00',
      });
      for (const app of ['hello', 'world'])
        expect(await recorded('dev', app, '2026-11-20T11:00:00.000Z')).toMatchObject({
          revision: head,
          health: 'degraded',
          degradedSince: '2026-11-20T11:00:00.000Z',
          source: { agent: 'status', object: 'kustomization/apps-dev/2f1e4c3b' },
        });
    });

    it('records a completed check run', async () => {
      const payload = example('check_run', 1) as {
        check_run: Record<string, unknown> & { check_suite: Record<string, unknown> };
      };
      payload.check_run.check_suite.head_branch = 'main';
      Object.assign(payload.check_run, {
        pull_requests: [],
        name: 'kustomization/apps-dev/2f1e4c3b',
        head_sha: head,
        conclusion: 'success',
        completed_at: '2026-11-20T12:00:00Z',
      });
      await deliver('check_run', payload);
      expect(await recorded('dev', 'world', '2026-11-20T12:00:00.000Z')).toMatchObject({
        health: 'healthy',
        healthySince: '2026-11-20T12:00:00.000Z',
      });
    });

    it('records a deployment status of an agent-created Deployment', async () => {
      const payload = example('deployment_status') as {
        deployment: Record<string, unknown>;
        deployment_status: Record<string, unknown>;
      };
      Object.assign(payload.deployment, { sha: head, environment: 'argocd-dev' });
      Object.assign(payload.deployment_status, {
        environment: 'argocd-dev',
        state: 'success',
        updated_at: '2026-11-20T13:00:00Z',
      });
      await deliver('deployment_status', payload);
      expect(await recorded('dev', 'hello', '2026-11-20T13:00:00.000Z')).toMatchObject({
        revision: head,
        health: 'healthy',
        source: { agent: 'status', object: 'argocd-dev' },
      });
    });
  });

  describe('a report for commit X means the version of the latest commit ≤ X that changed the app', () => {
    it('keeps healthy-since of an app across commits that changed only another app of the Kustomization', async () => {
      const changed = async (app: string, tag: string) => {
        const commit = await stack.client.commit(`${owner}/${repo}`, {
          branch: 'main',
          files: { [`apps/${app}/overlays/staging/kustomization.yaml`]: overlay(app).replace('1.0.0', tag) },
        });
        await waitIndexed(stack, owner, repo, commit.sha);
        return commit.sha;
      };
      const report = (sha: string, timestamp: string) =>
        postFlux(fluxBody({ timestamp, metadata: { commit_status: 'update', revision: `main@sha1:${sha}` } }));
      const helloAt = await changed('hello', '1.1.0');
      expect((await report(helloAt, '2026-11-21T10:00:00Z')).status).toBe(202);
      const first = await recorded('staging', 'hello', '2026-11-21T10:00:00.000Z');
      expect(first).toMatchObject({ revision: helloAt, healthySince: '2026-11-21T10:00:00.000Z' });

      const worldAt = await changed('world', '1.1.0');
      expect((await report(worldAt, '2026-11-21T10:05:00Z')).status).toBe(202);
      // hello still runs the version of helloAt: same revision, healthy since the first report.
      expect(await recorded('staging', 'hello', '2026-11-21T10:05:00.000Z')).toMatchObject({
        revision: helloAt,
        healthySince: '2026-11-21T10:00:00.000Z',
      });
      // world's version changed at worldAt: healthy since this report.
      expect(await recorded('staging', 'world', '2026-11-21T10:05:00.000Z')).toMatchObject({
        revision: worldAt,
        healthySince: '2026-11-21T10:05:00.000Z',
      });
    });
  });
});

describe('agent routes without ESCALATOR_AGENT_TOKEN', () => {
  let server: WebServer;
  let redis: Redis;
  beforeAll(async () => {
    redis = new Redis(redisUrl);
    const log = createLogger({ level: 'silent' });
    const store = new RepoState(redis, `agents-off-${randomUUID().slice(0, 8)}`);
    // The producer is never reached: the route answers before anything is read.
    server = await startWebServer({
      host: '127.0.0.1',
      port: 0,
      log,
      handlers: [agentRoutes({ producer: undefined as never, store, log })],
    });
  });
  afterAll(async () => {
    await server?.close();
    await redis?.quit();
  });

  it.each(['flux', 'argocd'])('answers 404 on /agents/%s with how to enable it', async (agent) => {
    const res = await fetch(`${server.url}/agents/${agent}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: string }).error).toMatch(
      /^agent reports are off; set ESCALATOR_AGENT_TOKEN/,
    );
  });
});
