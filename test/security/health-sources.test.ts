import { createHmac, randomUUID } from 'node:crypto';
import { Octokit } from '@octokit/rest';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RepoState } from '../../src/adapters/store/repo-state.js';
import type { AppHealth } from '../../src/planners/health.js';
import { eventually, redisUrl, startStack, waitIndexed, type Stack } from '../support/stack.js';

/**
 * Who may speak for an environment (docs/health.md): attacks on the health gate through the wire.
 * Commit statuses and Deployments are posted by sandbox users with write access through the REST
 * API (the sandbox sends GitHub's signed `status` and `deployment_status` webhooks); check runs,
 * which only a GitHub App can create, arrive as deliveries signed with the App's webhook secret,
 * shaped as GitHub Actions' (app `github-actions`, id 15368). Nothing an attacker posts may reach
 * the fold of reports (`store.health`), the only input of the health gate, the soak and the
 * rollback: no `health` job is added for it, and what is recorded stays as the bound poster said.
 */
const config = `environments:
  - name: dev
    paths: ["apps/*/overlays/dev"]
    from: registry
  - name: staging
    paths: ["apps/*/overlays/staging"]
    from: dev
    rollback: auto
    health:
      statuses:
        - { context: "kustomization/apps-staging/*", user: flux-bot }
        - { context: "deploy-staging", app: github-actions }
        - { context: "staging-cluster", user: flux-bot }
      tolerate: 1h
      deployments: false
`;
const overlay = (tag: string) => `resources: [../../base]
images:
  - name: ghcr.io/example/hello
    newTag: "${tag}"
`;
/** GitHub Actions' App as `check_run.app` names it on github.com. */
const ACTIONS = { id: 15368, slug: 'github-actions', name: 'GitHub Actions' };
const CONTEXT = 'kustomization/apps-staging/5c3a9e01';

describe('who may speak for an environment (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  let owner: string;
  let installationId: number;
  let redis: Redis;
  let store: RepoState;
  let health: Queue;
  let fluxBot: Octokit;
  let mallory: Octokit;
  /** The commit where hello 1.1.0 landed in staging: the head of the default branch. */
  let landing: string;
  /** A writer's commit on a side branch, on top of the landing: it "contains" the merge. */
  let side: string;
  const repo = 'gitops';

  const octokitFor = (token: string) =>
    new Octokit({
      baseUrl: stack.sim.apiUrl,
      auth: token,
      log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    });

  beforeAll(async () => {
    stack = await startStack({}, { name: 'health-sources' });
    const bot = await stack.client.createUser('flux-bot');
    const writer = await stack.client.createUser('mallory');
    const created = await stack.client.createRepo({
      name: repo,
      files: {
        '.github/escalator.yml': config,
        'apps/hello/overlays/dev/kustomization.yaml': overlay('1.1.0'),
        'apps/hello/overlays/staging/kustomization.yaml': overlay('1.0.0'),
      },
      collaborators: { 'flux-bot': 'write', mallory: 'write' },
    });
    owner = created.full_name.split('/')[0]!;
    installationId = created.installation_id!;
    await waitIndexed(stack, owner, repo);
    const merged = await stack.client.commit(`${owner}/${repo}`, {
      branch: 'main',
      files: { 'apps/hello/overlays/staging/kustomization.yaml': overlay('1.1.0') },
    });
    landing = merged.sha;
    await waitIndexed(stack, owner, repo, landing);
    side = (
      await stack.client.commit(`${owner}/${repo}`, {
        branch: 'side',
        from: 'main',
        files: { 'notes.md': 'mallory was here\n' },
      })
    ).sha;
    fluxBot = octokitFor(bot.token!);
    mallory = octokitFor(writer.token!);
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
  /**
   * Waits until no health job is waiting or running: a recorded report's job goes on after the
   * record is saved (it follows the report and may schedule a recheck), so counting jobs before it
   * ends would count its own follow-up as an attacker's.
   */
  const quiet = (): Promise<true> =>
    eventually(
      async () => {
        const counts = await health.getJobCounts('active', 'waiting', 'prioritized', 'waiting-children');
        return Object.values(counts).every((n) => n === 0) || undefined;
      },
      { what: 'the health queue to be quiet' },
    );
  const current = (): Promise<AppHealth | undefined> => store.health.load({ owner, repo }, 'staging', 'hello');
  const recordedAt = (at: string): Promise<AppHealth> =>
    eventually(
      async () => {
        const now = await current();
        return now?.reportedAt === at ? now : undefined;
      },
      { what: `staging/hello health reported at ${at}` },
    );
  /** Posts a commit status as `who` and waits until the App has answered GitHub's `status` delivery. */
  const postStatus = async (who: Octokit, sha: string, state: 'success' | 'failure', context = CONTEXT) => {
    const { data } = await who.rest.repos.createCommitStatus({ owner, repo, sha, state, context });
    await stack.client.deliveries({ event: 'status' });
    return data;
  };
  /** A delivery signed as GitHub signs it (`X-Hub-Signature-256` with the App's webhook secret). */
  const deliver = async (event: string, payload: Record<string, unknown>, delivery: string = randomUUID()) => {
    const body = JSON.stringify({
      ...payload,
      repository: { id: 1, name: repo, full_name: `${owner}/${repo}`, owner: { login: owner }, default_branch: 'main' },
      installation: { id: installationId },
    });
    const res = await fetch(`${stack.app.url}/api/github/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': event,
        'x-github-delivery': delivery,
        'x-hub-signature-256': `sha256=${createHmac('sha256', stack.sim.app.webhookSecret).update(body).digest('hex')}`,
      },
      body,
    });
    expect(res.status).toBeLessThan(300);
  };
  const checkRun = (fields: {
    head_sha: string;
    head_branch: string | null;
    pull_requests?: unknown[];
    conclusion: string;
    completed_at: string;
  }) => ({
    action: 'completed',
    check_run: {
      id: Math.floor(Math.random() * 1e9),
      name: 'deploy-staging',
      head_sha: fields.head_sha,
      status: 'completed',
      conclusion: fields.conclusion,
      started_at: fields.completed_at,
      completed_at: fields.completed_at,
      app: ACTIONS,
      pull_requests: fields.pull_requests ?? [],
      check_suite: { id: 1, head_branch: fields.head_branch, head_sha: fields.head_sha },
      output: { title: null, summary: null },
    },
    sender: { login: 'mallory', type: 'User', id: 9 },
  });

  it("ignores a writer's success on a side-branch commit that contains the merge", async () => {
    await quiet();
    const before = await jobsAdded();
    await postStatus(mallory, side, 'success');
    expect(await jobsAdded()).toBe(before);
    expect(await current()).toBeUndefined();
  });

  it("ignores the bound poster's own report on a side-branch commit: only the default branch's heads count", async () => {
    await quiet();
    const before = await jobsAdded();
    await postStatus(fluxBot, side, 'failure');
    expect(await jobsAdded()).toBe(before);
    expect(await current()).toBeUndefined();
  });

  it('ignores an Actions-shaped check run on a commit that was never on the default branch (a fork, a non-writer)', async () => {
    await quiet();
    const before = await jobsAdded();
    await deliver(
      'check_run',
      checkRun({ head_sha: side, head_branch: null, conclusion: 'success', completed_at: new Date().toISOString() }),
    );
    expect(await jobsAdded()).toBe(before);
    expect(await current()).toBeUndefined();
  });

  it('ignores an Actions-shaped check run attached to a pull request, even on the default branch head', async () => {
    await quiet();
    const before = await jobsAdded();
    await deliver(
      'check_run',
      checkRun({
        head_sha: landing,
        head_branch: 'side',
        pull_requests: [{ id: 1, number: 7, head: { ref: 'side', sha: landing }, base: { ref: 'main', sha: landing } }],
        conclusion: 'success',
        completed_at: new Date().toISOString(),
      }),
    );
    expect(await jobsAdded()).toBe(before);
    expect(await current()).toBeUndefined();
  });

  it("ignores a writer's Deployment with a matching environment, whoever posts its status", async () => {
    const { data: deployment } = await mallory.rest.repos.createDeployment({
      owner,
      repo,
      ref: landing,
      environment: 'staging-cluster',
      auto_merge: false,
      required_contexts: [],
    });
    const id = (deployment as { id: number }).id;
    await quiet();
    const before = await jobsAdded();
    await mallory.rest.repos.createDeploymentStatus({ owner, repo, deployment_id: id, state: 'success' });
    // The bound poster's status on the writer's Deployment does not count either: the Deployment is not its.
    await fluxBot.rest.repos.createDeploymentStatus({ owner, repo, deployment_id: id, state: 'success' });
    await stack.client.deliveries({ event: 'deployment_status' });
    expect(await jobsAdded()).toBe(before);
    expect(await current()).toBeUndefined();
  });

  it("records the bound poster's report on the default branch's head: the honest path still works", async () => {
    const status = await postStatus(fluxBot, landing, 'failure');
    const recorded = await recordedAt(new Date(status.updated_at).toISOString());
    expect(recorded).toMatchObject({ revision: landing, health: 'degraded', source: { object: CONTEXT } });
    expect(recorded.degradedSince).toBe(recorded.reportedAt);
    // The spell is shorter than `tolerate`: the job ends by scheduling its own recheck (docs/health.md).
    await quiet();
    expect(await health.getDelayedCount()).toBe(1);
  });

  it('keeps a real degraded spell: a forged success neither ends it nor suppresses its rollback', async () => {
    const spell = await current();
    expect(spell?.health).toBe('degraded');
    await quiet();
    const before = await jobsAdded();
    await postStatus(mallory, landing, 'success');
    await deliver(
      'check_run',
      checkRun({ head_sha: side, head_branch: 'side', conclusion: 'success', completed_at: new Date().toISOString() }),
    );
    expect(await jobsAdded()).toBe(before);
    expect(await current()).toEqual(spell);
  });

  it("records the bound App's check run on the default branch's head, and a forged failure changes nothing after it", async () => {
    const at = new Date(Date.now() + 1_000).toISOString();
    await deliver(
      'check_run',
      checkRun({ head_sha: landing, head_branch: 'main', conclusion: 'success', completed_at: at }),
    );
    const healthy = await eventually(
      async () => {
        const now = await current();
        return now?.health === 'healthy' ? now : undefined;
      },
      { what: 'staging/hello healthy after the bound check run' },
    );
    await quiet();
    const before = await jobsAdded();
    // Another context the pattern matches, so it is no copy of an earlier report.
    await postStatus(mallory, landing, 'failure', 'kustomization/apps-staging/f0f0f0f0');
    expect(await jobsAdded()).toBe(before);
    expect(await current()).toEqual(healthy);
  });

  it('does not take a replayed report again: the same delivery, or the same body under a new delivery id', async () => {
    const healthy = await current();
    expect(healthy?.health).toBe('healthy');
    // An old failure of the bound poster, signed by GitHub, delivered again.
    const statuses = await stack.client.deliveries({ event: 'status' });
    const old = statuses.find(
      (delivery) =>
        delivery.payload.state === 'failure' &&
        (delivery.payload.sender as { login?: string } | undefined)?.login === 'flux-bot',
    )!;
    expect(old).toBeDefined();
    const payload = { ...old.payload };
    await quiet();
    const before = await jobsAdded();
    await deliver('status', payload, old.guid);
    await deliver('status', payload);
    // Each is the report already taken (the health job's id is the report's content, kept a day);
    // after that, the fold ignores a report older than the one recorded (src/planners/health.ts).
    expect(await jobsAdded()).toBe(before);
    expect(await current()).toEqual(healthy);
  });

  it(
    "keeps the promotion's escalator/health gate pending on a writer's success on a side branch; the bound poster's passes it",
    { timeout: 120_000 },
    async () => {
      const gate = 'gate';
      await stack.client.createRepo({
        name: gate,
        files: {
          '.github/escalator.yml': `environments:
  - name: dev
    paths: ["apps/*/overlays/dev"]
    from: registry
    health:
      statuses: [{ context: "kustomization/apps-dev/*", user: flux-bot }]
      deployments: false
  - name: staging
    paths: ["apps/*/overlays/staging"]
    from: dev
`,
          'apps/hello/overlays/dev/kustomization.yaml': overlay('1.0.0'),
          'apps/hello/overlays/staging/kustomization.yaml': overlay('1.0.0'),
        },
        collaborators: { 'flux-bot': 'write', mallory: 'write' },
      });
      await waitIndexed(stack, owner, gate);
      const merge = (
        await stack.client.commit(`${owner}/${gate}`, {
          branch: 'main',
          files: { 'apps/hello/overlays/dev/kustomization.yaml': overlay('1.1.0') },
        })
      ).sha;
      const pull = await eventually(
        async () =>
          (await stack.user.rest.pulls.list({ owner, repo: gate })).data.find(
            (p) => p.head.ref === 'escalator/promote/staging/hello',
          ),
        { what: 'the promotion to staging', timeoutMs: 60_000 },
      );
      const health = async () =>
        (
          await stack.user.rest.checks.listForRef({
            owner,
            repo: gate,
            ref: pull.head.sha,
            check_name: 'escalator/health',
          })
        ).data.check_runs[0];
      await eventually(async () => ((await health())?.status === 'in_progress' ? true : undefined), {
        what: 'escalator/health to wait for a report',
        timeoutMs: 60_000,
      });
      const sideOfGate = (
        await stack.client.commit(`${owner}/${gate}`, { branch: 'side', from: 'main', files: { 'x.md': 'x\n' } })
      ).sha;
      const status = (who: Octokit, sha: string, state: 'success' | 'failure' = 'success') =>
        who.rest.repos.createCommitStatus({
          owner,
          repo: gate,
          sha,
          state,
          context: 'kustomization/apps-dev/5c3a9e01',
        });
      await quiet();
      const before = await jobsAdded();
      await status(mallory, sideOfGate);
      await status(mallory, merge);
      await stack.client.deliveries({ event: 'status' });
      // No report was taken, so nothing can have moved the gate.
      expect(await jobsAdded()).toBe(before);
      expect(await health()).toMatchObject({ status: 'in_progress', conclusion: null });
      await status(fluxBot, merge);
      const passed = await eventually(async () => ((await health())?.conclusion === 'success' ? health() : undefined), {
        what: "escalator/health to pass on the bound poster's report",
        timeoutMs: 60_000,
      });
      // A forged failure after it: no report taken, the gate stays passed (and no rollback can start).
      const after = await jobsAdded();
      await status(mallory, merge, 'failure');
      await stack.client.deliveries({ event: 'status' });
      expect(await jobsAdded()).toBe(after);
      expect(await health()).toMatchObject({ id: passed!.id, conclusion: 'success' });
    },
  );
});
