import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppHealth } from '../../src/planners/health.js';
import { chainConfig, overlays, seedRepo } from '../support/environments.js';
import { healthIntake, type HealthIntake } from '../support/health.js';
import { eventually, readFile, startStack, waitIndexed, type Stack } from '../support/stack.js';

/** A dev → staging chain, each environment's extra lines after its `from:`. */
const devStaging = (dev: string, staging = '') =>
  chainConfig({ environments: ['dev', 'staging'], extra: { dev, staging } });

/**
 * Promote what runs, not what merged: promotions out of an environment whose agent reports health
 * wait until it runs the merged versions synced and healthy (`escalator/health`), the merge gets a
 * GitHub Deployment whose statuses follow the reports, and `rollback: auto` rolls a degraded
 * environment back to the last version that was healthy there. Health comes in through the store
 * and `followHealth`, as the report-taking side hands it over.
 */
const owner = 'developer';
const overlay = (tag: string) => `images:\n  - name: ghcr.io/example/hello\n    newTag: ${tag}\n`;
const source = (object: string) => ({
  agent: 'argocd' as const,
  object,
  url: `https://argocd.example/applications/argocd/${object}`,
});
const healthy = (revision: string, since: number, object = 'hello-dev'): AppHealth => ({
  revision,
  sync: 'synced',
  health: 'healthy',
  healthySince: new Date(since).toISOString(),
  reportedAt: new Date(since).toISOString(),
  source: source(object),
});
const degraded = (revision: string, since: number, object: string): AppHealth => ({
  revision,
  sync: 'synced',
  health: 'degraded',
  degradedSince: new Date(since).toISOString(),
  lastDegradedAt: new Date(since).toISOString(),
  reportedAt: new Date().toISOString(),
  source: source(object),
  message: 'Deployment hello: 0/3 replicas ready',
});

describe('health gate (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  let intake: HealthIntake;
  beforeAll(async () => {
    stack = await startStack({}, { name: 'health' });
    intake = healthIntake(stack);
  });
  afterAll(async () => {
    await intake?.close();
    await stack?.close();
  });

  async function seed(repo: string, config: string, extra: Record<string, string> = {}) {
    await seedRepo(stack, repo, config, { ...overlays('hello', overlay('1.0.0')), ...extra });
    return (await stack.user.rest.repos.getBranch({ owner, repo, branch: 'main' })).data.commit.sha;
  }
  const commit = async (repo: string, files: Record<string, string>) => {
    const { sha } = await stack.client.commit(`${owner}/${repo}`, { branch: 'main', files });
    await waitIndexed(stack, owner, repo, sha);
    return sha;
  };
  const pullOn = (
    repo: string,
    branch: string,
    predicate: (title: string) => boolean = () => true,
    state: 'open' | 'all' = 'open',
  ) =>
    eventually(
      async () =>
        (await stack.user.rest.pulls.list({ owner, repo, state })).data.find(
          (p) => p.head.ref === branch && predicate(p.title),
        ),
      { what: `a PR on ${branch}`, timeoutMs: 60_000 },
    );
  const checkRun = (
    repo: string,
    sha: string,
    name: string,
    ok: (run: { status: string; conclusion: string | null; output: { summary: string | null } }) => boolean,
  ) =>
    eventually(
      async () => {
        const run = (await stack.user.rest.checks.listForRef({ owner, repo, ref: sha, check_name: name })).data
          .check_runs[0];
        return run && ok(run) ? run : undefined;
      },
      { what: `${name} on ${sha.slice(0, 7)}`, timeoutMs: 60_000 },
    );
  const bodyOf = (repo: string, number: number, text: string) =>
    eventually(
      async () => {
        const { data } = await stack.user.rest.pulls.get({ owner, repo, pull_number: number });
        // The body escapes repository text for markdown (`hello\-dev`); read it as a person does.
        const plain = data.body?.replaceAll('\\', '');
        return plain?.includes(text) ? plain : undefined;
      },
      { what: `the body of #${number} to say "${text}"`, timeoutMs: 60_000 },
    );
  const deploymentStates = async (repo: string, environment: string) => {
    const { data } = await stack.user.rest.repos.listDeployments({ owner, repo, environment });
    return Promise.all(
      data.map(async (deployment) => ({
        sha: deployment.sha,
        payload: deployment.payload,
        production: deployment.production_environment,
        statuses: (
          await stack.user.rest.repos.listDeploymentStatuses({ owner, repo, deployment_id: deployment.id })
        ).data.map((status) => ({ state: status.state, log: status.log_url ?? '' })),
      })),
    );
  };

  it(
    'waits for dev healthy on the merged revision, ignores a report about an older one, fails on a sustained Degraded and recovers; the merge has a Deployment that follows',
    { timeout: 180_000 },
    async () => {
      const repo = 'waits';
      const seeded = await seed(
        repo,
        devStaging('    health: { argocd: "{app}-dev", tolerate: 60s, timeout: 15m }\n', '    soak: 1s\n'),
      );
      const merge = await commit(repo, { 'apps/hello/overlays/dev/kustomization.yaml': overlay('1.1.0') });
      const pull = await pullOn(repo, 'escalator/promote/staging/hello');
      await checkRun(repo, pull.head.sha, 'escalator/health', (run) => run.status === 'in_progress');
      await bodyOf(repo, pull.number, 'waiting for Argo CD app hello-dev to report merge');
      expect(await deploymentStates(repo, 'dev')).toEqual([
        {
          sha: merge,
          payload: { app: 'hello', images: ['ghcr.io/example/hello:1.1.0'] },
          production: false,
          statuses: [{ state: 'in_progress', log: '' }],
        },
      ]);

      // Healthy, but about the commit before the merge: it does not count.
      await intake.report(owner, repo, 'dev', 'hello', healthy(seeded, Date.now() - 3_600_000));
      await bodyOf(repo, pull.number, `is about a revision older than merge ${merge.slice(0, 7)}`);
      expect((await checkRun(repo, pull.head.sha, 'escalator/health', () => true)).status).toBe('in_progress');

      // Healthy on the merge: the gate passes, the body says what runs, the Deployment succeeds.
      await intake.report(owner, repo, 'dev', 'hello', healthy(merge, Date.now() - 5_000));
      await checkRun(repo, pull.head.sha, 'escalator/health', (run) => run.conclusion === 'success');
      await bodyOf(repo, pull.number, `dev runs hello 1.1.0, healthy for`);
      await bodyOf(repo, pull.number, `(Argo CD app hello-dev, synced to ${merge.slice(0, 7)})`);
      await eventually(
        async () => {
          const [deployment] = await deploymentStates(repo, 'dev');
          return deployment?.statuses[0]?.state === 'success' ? deployment : undefined;
        },
        { what: 'the dev Deployment to succeed' },
      );
      expect((await deploymentStates(repo, 'dev'))[0]?.statuses[0]?.log).toBe(
        'https://argocd.example/applications/argocd/hello-dev',
      );
      await checkRun(repo, pull.head.sha, 'escalator/soak', (run) => run.conclusion === 'success');

      // Degraded for five minutes: the gate fails and says why; healthy again: it recovers on its own.
      await intake.report(owner, repo, 'dev', 'hello', degraded(merge, Date.now() - 300_000, 'hello-dev'));
      const failed = await checkRun(repo, pull.head.sha, 'escalator/health', (run) => run.conclusion === 'failure');
      // Five minutes and the seconds the run took since.
      expect(failed.output.summary).toMatch(/Degraded for 5m( \d+s)?, longer than the 60s tolerated/);
      await bodyOf(repo, pull.number, 'promotion halts until it reports healthy');
      await intake.report(owner, repo, 'dev', 'hello', healthy(merge, Date.now()));
      await checkRun(repo, pull.head.sha, 'escalator/health', (run) => run.conclusion === 'success');
    },
  );

  it(
    'two apps in one commit, promoted together: the gate waits for each app and names the one still missing',
    { timeout: 120_000 },
    async () => {
      const repo = 'two-apps';
      const world = (tag: string) => `images:\n  - name: ghcr.io/example/world\n    newTag: ${tag}\n`;
      await seed(repo, devStaging('    health: { argocd: "{app}-dev", deployments: false }\n', '    group: true\n'), {
        'apps/world/overlays/dev/kustomization.yaml': world('2.0.0'),
        'apps/world/overlays/staging/kustomization.yaml': world('2.0.0'),
      });
      const merge = await commit(repo, {
        'apps/hello/overlays/dev/kustomization.yaml': overlay('1.1.0'),
        'apps/world/overlays/dev/kustomization.yaml': world('2.1.0'),
      });
      const pull = await pullOn(repo, 'escalator/promote/staging');
      await intake.report(owner, repo, 'dev', 'hello', healthy(merge, Date.now() - 1_000));
      await bodyOf(repo, pull.number, 'dev runs hello 1.1.0, healthy for');
      // The body and the check are written by the same re-plan, one after the other: wait for the check too.
      const waiting = await checkRun(
        repo,
        pull.head.sha,
        'escalator/health',
        (run) => run.status === 'in_progress' && !run.output.summary?.includes('hello-dev'),
      );
      expect(waiting.output.summary).toBe(
        `dev runs world 2.1.0: waiting for Argo CD app world-dev to report merge ${merge.slice(0, 7)} synced and healthy (no report from Argo CD app world-dev yet)`,
      );
      await intake.report(owner, repo, 'dev', 'world', healthy(merge, Date.now() - 1_000, 'world-dev'));
      await checkRun(repo, pull.head.sha, 'escalator/health', (run) => run.conclusion === 'success');
      await bodyOf(repo, pull.number, 'dev runs world 2.1.0, healthy for');
    },
  );

  it(
    'fails the gate when no report comes within the timeout, naming the agent object',
    { timeout: 120_000 },
    async () => {
      const repo = 'silent';
      await seed(repo, devStaging('    health: { argocd: "{app}-dev", timeout: 2s, deployments: false }\n'));
      const merge = await commit(repo, { 'apps/hello/overlays/dev/kustomization.yaml': overlay('1.1.0') });
      const pull = await pullOn(repo, 'escalator/promote/staging/hello');
      const run = await checkRun(repo, pull.head.sha, 'escalator/health', (r) => r.conclusion === 'failure');
      expect(run.output.summary).toBe(
        `no report from Argo CD app hello-dev on hello 1.1.0 within 2s of merge ${merge.slice(0, 7)} (no report from Argo CD app hello-dev yet); check the Argo CD notifications subscription of that app (docs/health.md)`,
      );
      expect(await deploymentStates(repo, 'dev')).toEqual([]);
    },
  );

  const stagingReports = (rollback: 'manual' | 'auto') =>
    chainConfig({
      extra: {
        staging: `    autoMerge: true\n    rollback: ${rollback}\n    health: { argocd: "{app}-staging", tolerate: 60s }\n`,
      },
    });

  it(
    'halts prod on a sustained Degraded in staging (rollback: manual opens nothing)',
    { timeout: 120_000 },
    async () => {
      const repo = 'halt';
      await seed(repo, stagingReports('manual'));
      // Dev moves too, as after a promotion from it.
      const merge = await commit(repo, {
        'apps/hello/overlays/dev/kustomization.yaml': overlay('1.1.0'),
        'apps/hello/overlays/staging/kustomization.yaml': overlay('1.1.0'),
      });
      const prod = await pullOn(repo, 'escalator/promote/prod/hello');
      await checkRun(repo, prod.head.sha, 'escalator/health', (run) => run.status === 'in_progress');
      const followed = await intake.report(
        owner,
        repo,
        'staging',
        'hello',
        degraded(merge, Date.now() - 300_000, 'hello-staging'),
      );
      expect(followed.rollback).toBeUndefined();
      const failed = await checkRun(repo, prod.head.sha, 'escalator/health', (run) => run.conclusion === 'failure');
      expect(failed.output.summary).toContain('staging runs hello 1.1.0 Degraded for 5m');
      await bodyOf(repo, prod.number, 'promotion halts until it reports healthy');
      const open = (await stack.user.rest.pulls.list({ owner, repo, state: 'all' })).data.map((p) => p.head.ref);
      expect(open).toEqual(['escalator/promote/prod/hello']);
    },
  );

  it(
    'with rollback: auto, rolls staging back to the last version healthy there once per degraded spell, and autoMerge merges it',
    { timeout: 180_000 },
    async () => {
      const repo = 'rollback';
      const seeded = await seed(repo, stagingReports('auto'));
      // Staging ran 1.0.0 healthy; then 1.1.0 lands there.
      const before = await intake.report(
        owner,
        repo,
        'staging',
        'hello',
        healthy(seeded, Date.now() - 600_000, 'hello-staging'),
      );
      expect(before.healthy).toEqual(['ghcr.io/example/hello:1.0.0']);
      // Dev moves too, so no promotion from dev proposes 1.0.0 to staging: the rollback is the only one.
      const merge = await commit(repo, {
        'apps/hello/overlays/dev/kustomization.yaml': overlay('1.1.0'),
        'apps/hello/overlays/staging/kustomization.yaml': overlay('1.1.0'),
      });
      await pullOn(repo, 'escalator/promote/prod/hello');

      const bad = degraded(merge, Date.now() - 300_000, 'hello-staging');
      const followed = await intake.report(owner, repo, 'staging', 'hello', bad);
      expect(followed.rollback).toEqual({ delayMs: 0 });
      // The same spell reported again schedules no second rollback (one job id per spell).
      await intake.report(owner, repo, 'staging', 'hello', { ...bad, reportedAt: new Date().toISOString() });

      const rollback = await pullOn(repo, 'escalator/promote/staging/hello', (title) => title.includes('1.0.0'), 'all');
      expect(rollback.body?.replaceAll('\\', '')).toMatch(
        /hello 1\.1\.0 went Degraded in staging at \d\d:\d\d for 5m( \d+s)? \(Argo CD app hello-staging: Deployment hello: 0\/3 replicas ready\); rolling back to 1\.0\.0, healthy there until \d\d:\d\d/,
      );
      // autoMerge: the rollback lands in staging.
      await eventually(
        async () =>
          (await readFile(stack, owner, repo, 'apps/hello/overlays/staging/kustomization.yaml', 'main')) ===
          overlay('1.0.0')
            ? true
            : undefined,
        { what: 'staging back at 1.0.0 on main', timeoutMs: 60_000 },
      );
      const all = (await stack.user.rest.pulls.list({ owner, repo, state: 'all' })).data.filter(
        (p) => p.head.ref === 'escalator/promote/staging/hello' && p.title.includes('1.0.0'),
      );
      expect(all).toHaveLength(1);
      // Two deployments of staging: 1.1.0 failed, then the rollback's, in progress.
      const staging = await eventually(
        async () => {
          const list = await deploymentStates(repo, 'staging');
          // A Deployment exists a moment before its first status is posted.
          return list.length === 2 && list.every((d) => d.statuses.length > 0) ? list : undefined;
        },
        { what: "the rollback's Deployment" },
      );
      expect(staging.map((d) => [d.sha === merge, d.statuses[0]?.state])).toEqual([
        [false, 'in_progress'],
        [true, 'failure'],
      ]);
      expect(staging.every((d) => d.production === false)).toBe(true);
    },
  );
  it(
    'a rollback that cannot be written (no digest on record for the good version) is said within seconds: the failing health gate of the halted promotion, the dashboard, a failing check on the default branch',
    { timeout: 180_000 },
    async () => {
      const repo = 'rollback-refused';
      const pinned = `images:\n  - {name: ghcr.io/example/hello, newTag: 1.1.0, digest: sha256:${'b'.repeat(64)}}\n`;
      // Staging ran 1.0.0 by tag, healthy; 1.1.0 then lands pinned by digest.
      const seeded = await seed(repo, `dashboard: true\n${stagingReports('auto')}`);
      await intake.report(owner, repo, 'staging', 'hello', healthy(seeded, Date.now() - 600_000, 'hello-staging'));
      const merge = await commit(repo, {
        'apps/hello/overlays/dev/kustomization.yaml': pinned,
        'apps/hello/overlays/staging/kustomization.yaml': pinned,
      });
      const prod = await pullOn(repo, 'escalator/promote/prod/hello');
      const followed = await intake.report(
        owner,
        repo,
        'staging',
        'hello',
        degraded(merge, Date.now() - 300_000, 'hello-staging'),
      );
      expect(followed.rollback).toEqual({ delayMs: 0 });
      const reason =
        'the automatic rollback to hello 1.0.0 could not be written: Escalator could not change apps/hello/overlays/staging/kustomization.yaml:2 (images[0] pins a digest but no digest of 1.0.0 is on record to roll back to (this environment ran it by tag); roll back by hand with ghcr.io/example/hello:1.0.0@sha256:… (or remove the pin))';
      const failed = await checkRun(
        repo,
        prod.head.sha,
        'escalator/health',
        (run) => run.conclusion === 'failure' && (run.output.summary ?? '').includes('could not be written'),
      );
      expect(failed.output.summary).toContain(`promotion halts until it reports healthy; ${reason}`);
      expect(failed.output.summary).not.toContain('event');
      const onMain = await checkRun(
        repo,
        await (async () => (await stack.user.rest.repos.getBranch({ owner, repo, branch: 'main' })).data.commit.sha)(),
        'escalator/promote escalator/promote/staging/hello',
        (run) => run.conclusion === 'failure',
      );
      expect(onMain.output.summary?.replaceAll('\\', '')).toContain('no digest of 1.0.0 is on record');
      await eventually(
        async () => {
          const issue = (await stack.user.rest.issues.listForRepo({ owner, repo, state: 'open' })).data.find(
            (i) => i.title === 'Escalator: environments',
          );
          const body = issue?.body?.replaceAll('\\', '') ?? '';
          return body.includes('rollback of hello in staging from 1.1.0 to 1.0.0') &&
            body.includes('no digest of 1.0.0 is on record')
            ? body
            : undefined;
        },
        { what: 'the dashboard to say why the rollback was not written', timeoutMs: 60_000 },
      );
      // No pull request was opened for it: only the promotion to prod.
      expect((await stack.user.rest.pulls.list({ owner, repo, state: 'all' })).data.map((p) => p.head.ref)).toEqual([
        'escalator/promote/prod/hello',
      ]);
    },
  );

  it(
    'a configuration promotion out of dev waits for dev to report the change’s merge synced and healthy; an older healthy report does not pass',
    { timeout: 150_000 },
    async () => {
      const repo = 'config-health';
      const env = (level: string) =>
        `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: hello\nspec:\n  template:\n    spec:\n      containers:\n        - name: hello\n          env:\n            - name: LOG_LEVEL\n              value: ${level}\n`;
      const kustomization = `resources: [../../base]\n${overlay('1.0.0')}patches:\n  - path: env.yaml\n`;
      const seeded = await seed(
        repo,
        devStaging(
          '    health: { argocd: "{app}-dev", tolerate: 60s, timeout: 15m }\n',
          '    soak: 1s\n    promote: { config: true }\n',
        ),
        {
          'apps/hello/base/kustomization.yaml': 'resources: [deployment.yaml]\n',
          'apps/hello/base/deployment.yaml': env('info'),
          'apps/hello/overlays/dev/kustomization.yaml': kustomization,
          'apps/hello/overlays/dev/env.yaml': env('info'),
          'apps/hello/overlays/staging/kustomization.yaml': kustomization,
          'apps/hello/overlays/staging/env.yaml': env('info'),
        },
      );
      // dev runs 1.0.0 healthy for an hour: a report about a revision before the change.
      await intake.report(owner, repo, 'dev', 'hello', healthy(seeded, Date.now() - 3_600_000));

      // A person's pull request changes dev's log level and merges.
      await stack.client.commit(`${owner}/${repo}`, {
        branch: 'debug-logs',
        from: 'main',
        files: { 'apps/hello/overlays/dev/env.yaml': env('debug') },
        message: 'Debug logs for hello',
      });
      const change = await stack.client.openPull(`${owner}/${repo}`, {
        title: 'Debug logs for hello',
        head: 'debug-logs',
      });
      const { sha: merge } = await stack.client.mergePull(`${owner}/${repo}`, change.number);
      const pull = await pullOn(repo, 'escalator/promote/staging/hello', (title) => title.includes('configuration'));
      expect(pull.title).toBe('Promote hello configuration to staging');
      // The healthy report about the commit before the change does not pass the gate.
      await bodyOf(
        repo,
        pull.number,
        `waiting for Argo CD app hello-dev to report configuration change ${merge.slice(0, 7)} (#${change.number}) synced and healthy (the last report (${seeded.slice(0, 7)}, synced/healthy) is about a revision older than configuration change ${merge.slice(0, 7)} (#${change.number}))`,
      );
      expect((await checkRun(repo, pull.head.sha, 'escalator/health', () => true)).status).toBe('in_progress');

      // The agent names the change's merge, synced and healthy (the fold keeps the versions' landing as the revision).
      await intake.report(owner, repo, 'dev', 'hello', {
        ...healthy(seeded, Date.now() - 3_600_000),
        reportedAt: new Date().toISOString(),
        reported: merge,
      });
      await checkRun(repo, pull.head.sha, 'escalator/health', (run) => run.conclusion === 'success');
      await bodyOf(repo, pull.number, `(Argo CD app hello-dev, synced to ${merge.slice(0, 7)})`);
      await checkRun(repo, pull.head.sha, 'escalator/soak', (run) => run.conclusion === 'success');
    },
  );
});
