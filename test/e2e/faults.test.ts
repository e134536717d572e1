import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxClient, type Simulator, startSimulator } from '@escalator/github-sandbox';
import type { Octokit } from '@octokit/rest';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { startEscalator, type RunningEscalator } from '../../src/main/server.js';
import { healthIntake } from '../support/health.js';
import { freePort } from '../support/net.js';
import { appEnv, eventually, redisUrl, spawnEscalator, testDelays, userOctokit } from '../support/stack.js';

const config = 'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n';
const overlay = 'images:\n  - name: ghcr.io/example/hello # app\n    newTag: 1.0.0\n';

function faultEnv(sim: Simulator, redis: string, prefix: string): Record<string, string> {
  return {
    ...appEnv(sim, redis),
    ...testDelays,
    PORT: '0',
    LOG_LEVEL: 'silent',
    ESCALATOR_CI_TOKEN: 'ci-token-for-fault-tests',
    ESCALATOR_DEBOUNCE_MS: '100',
    ESCALATOR_REDIS_PREFIX: prefix,
    ESCALATOR_LOCK_MS: '2000',
  };
}

/** A worker in its own process, so it can be killed for real. */
function spawnWorker(env: Record<string, string>): ChildProcess {
  return spawnEscalator('worker', env);
}

describe('faults', () => {
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()?.();
  });

  async function setup(redis: string) {
    const sim = await startSimulator();
    cleanups.push(() => sim.close());
    const prefix = `faults-${randomUUID().slice(0, 8)}`;
    const env = faultEnv(sim, redis, prefix);
    const web = await startEscalator({ ...env, ESCALATOR_ROLE: 'web' }, { log: createLogger({ level: 'silent' }) });
    cleanups.push(() => web.close());
    sim.setWebhookUrl(`${web.url}/api/github/webhooks`);
    const client = new SandboxClient(sim.url, sim.user.token);
    await client.createRepo({
      name: 'gitops',
      files: { '.github/escalator.yml': config, 'apps/hello/overlays/dev/kustomization.yaml': overlay },
    });
    const user = userOctokit(sim);
    return { sim, env, web, user, prefix };
  }

  const post = (web: RunningEscalator, image: string) =>
    fetch(`${web.url}/api/v1/images`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer ci-token-for-fault-tests' },
      body: JSON.stringify({ image }),
    });

  async function theOnePull(user: Octokit, tag: string) {
    return eventually(
      async () => {
        const open = (await user.rest.pulls.list({ owner: 'developer', repo: 'gitops', state: 'all' })).data;
        const pull = open.find((p) => p.title === `Bump hello to ${tag} in dev` && p.labels.length > 0);
        if (!pull) return undefined;
        const { data } = await user.rest.repos.getContent({
          owner: 'developer',
          repo: 'gitops',
          path: 'apps/hello/overlays/dev/kustomization.yaml',
          ref: pull.head.sha,
        });
        return { all: open, pull, text: Buffer.from((data as { content: string }).content, 'base64').toString('utf8') };
      },
      { what: `the PR at ${tag}`, timeoutMs: 60_000 },
    );
  }

  it(
    'a worker killed with SIGKILL in the middle of a bump leaves exactly one correct PR after restart',
    { timeout: 120_000 },
    async () => {
      const { env, web, user, prefix } = await setup(redisUrl);
      const redis = new Redis(redisUrl);
      cleanups.push(() => redis.quit());
      const first = spawnWorker(env);
      cleanups.push(() => first.kill('SIGKILL'));
      expect((await post(web, 'ghcr.io/example/hello:1.5.0')).status).toBe(202);
      // Kill as soon as the bump job is active (it is then between reads and writes to GitHub).
      await eventually(async () => ((await redis.llen(`${prefix}:bump:active`)) > 0 ? true : undefined), {
        what: 'an active bump job',
        timeoutMs: 60_000,
      });
      first.kill('SIGKILL');
      const second = spawnWorker(env);
      cleanups.push(() => second.kill('SIGTERM'));
      const { all, text } = await theOnePull(user, '1.5.0');
      expect(all).toHaveLength(1);
      expect(text).toBe(overlay.replace('1.0.0', '1.5.0'));
    },
  );

  it(
    'answers 503 while Redis is down, and resumes with nothing half-done when it is back',
    { timeout: 120_000 },
    async () => {
      const port = await freePort();
      const dir = mkdtempSync(join(tmpdir(), 'escalator-redis-'));
      const startRedis = () =>
        execFileSync('redis-server', [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--daemonize',
          'yes',
          '--dir',
          dir,
          '--appendonly',
          'yes',
          '--save',
          '',
        ]);
      startRedis();
      cleanups.push(() => execFileSync('redis-cli', ['-p', String(port), 'shutdown', 'nosave'], { stdio: 'ignore' }));
      const url = `redis://127.0.0.1:${port}`;
      await eventually(
        async () =>
          execFileSync('redis-cli', ['-p', String(port), 'ping'])
            .toString()
            .trim() === 'PONG'
            ? true
            : undefined,
        { what: 'the private Redis' },
      );
      const { env, web, user } = await setup(url);
      const worker = await startEscalator(
        { ...env, ESCALATOR_ROLE: 'worker' },
        { log: createLogger({ level: 'silent' }) },
      );
      cleanups.push(() => worker.close());

      execFileSync('redis-cli', ['-p', String(port), 'shutdown']);
      const refused = await post(web, 'ghcr.io/example/hello:2.0.0');
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect((await fetch(`${web.url}/readyz`)).status).toBe(503);

      startRedis();
      await eventually(async () => ((await fetch(`${web.url}/readyz`)).status === 200 ? true : undefined), {
        what: 'readiness after Redis returns',
      });
      expect((await post(web, 'ghcr.io/example/hello:2.0.0')).status).toBe(202);
      const { all, text } = await theOnePull(user, '2.0.0');
      expect(all).toHaveLength(1);
      expect(text).toBe(overlay.replace('1.0.0', '2.0.0'));
    },
  );

  /**
   * Escalator (web in this process, one worker as a process of its own) with a repository whose
   * staging soaks 8 s after dev, and dev moved to 1.1.0 by a merge; `check(name)` reads that
   * check run on the staging promotion pull request.
   */
  async function soakingPromotion(repo: string, devSettings = '') {
    const sim = await startSimulator();
    cleanups.push(() => sim.close());
    const prefix = `faults-${randomUUID().slice(0, 8)}`;
    const env = faultEnv(sim, redisUrl, prefix);
    const web = await startEscalator({ ...env, ESCALATOR_ROLE: 'web' }, { log: createLogger({ level: 'silent' }) });
    cleanups.push(() => web.close());
    sim.setWebhookUrl(`${web.url}/api/github/webhooks`);
    const client = new SandboxClient(sim.url, sim.user.token);
    const user = userOctokit(sim);
    const first = spawnWorker(env);
    cleanups.push(() => first.kill('SIGKILL'));
    await client.createRepo({
      name: repo,
      files: {
        '.github/escalator.yml': `${config}${devSettings}  - name: staging\n    paths: ["apps/*/overlays/staging"]\n    from: dev\n    soak: 8s\n`,
        'apps/hello/overlays/dev/kustomization.yaml': overlay,
        'apps/hello/overlays/staging/kustomization.yaml': overlay,
      },
    });
    const redis = new Redis(redisUrl);
    cleanups.push(() => redis.quit());
    const indexedAt = async (sha?: string) =>
      eventually(
        async () => {
          const text = await redis.get(`${prefix}:index:repo:developer/${repo}`);
          return text && (!sha || (JSON.parse(text) as { sha: string }).sha === sha) ? true : undefined;
        },
        { what: 'the index', timeoutMs: 60_000 },
      );
    await indexedAt();
    const merge = await client.commit(`developer/${repo}`, {
      branch: 'main',
      files: { 'apps/hello/overlays/dev/kustomization.yaml': overlay.replace('1.0.0', '1.1.0') },
    });
    await indexedAt(merge.sha);
    const check = async (name: string) => {
      const pull = (await user.rest.pulls.list({ owner: 'developer', repo, state: 'open' })).data.find(
        (p) => p.head.ref === 'escalator/promote/staging/hello',
      );
      return pull
        ? (await user.rest.checks.listForRef({ owner: 'developer', repo, ref: pull.head.sha, check_name: name })).data
            .check_runs[0]
        : undefined;
    };
    const passes = (name: string, what: string) =>
      eventually(
        async () => {
          const run = await check(name);
          return run?.conclusion === 'success' ? run : undefined;
        },
        { what, timeoutMs: 60_000 },
      );
    /** The worker dies during the soak; the delayed re-check lives in Redis, not in the process. */
    const killWorker = () => {
      first.kill('SIGKILL');
      const second = spawnWorker(env);
      cleanups.push(() => second.kill('SIGTERM'));
    };
    return { sim, prefix, merge: merge.sha, check, passes, killWorker };
  }

  it('a worker restarted during a soak still turns the soak check green on time', { timeout: 120_000 }, async () => {
    const { check, passes, killWorker } = await soakingPromotion('soak');
    const pending = await eventually(check.bind(null, 'escalator/soak'), {
      what: 'the pending soak check',
      timeoutMs: 60_000,
    });
    expect(pending.status).toBe('in_progress');
    killWorker();
    const green = await passes('escalator/soak', 'the soak check to pass after the restart');
    expect(green.status).toBe('completed');
  });

  it(
    'a worker SIGKILLed while a soak counts from healthy-since still passes the health and soak checks on time',
    { timeout: 120_000 },
    async () => {
      const { sim, prefix, merge, check, passes, killWorker } = await soakingPromotion(
        'healthy-soak',
        '    health: { argocd: "{app}-dev" }\n',
      );
      // Argo CD reports dev synced and healthy on the merge: the soak starts now, not at the merge.
      const intake = healthIntake({ sim, prefix });
      cleanups.push(() => intake.close());
      const healthySince = new Date().toISOString();
      await intake.report('developer', 'healthy-soak', 'dev', 'hello', {
        revision: merge,
        sync: 'synced',
        health: 'healthy',
        healthySince,
        reportedAt: healthySince,
        source: { agent: 'argocd', object: 'hello-dev' },
      });
      const healthy = await passes('escalator/health', 'the health check to pass');
      expect(healthy.output.title).toBeTruthy();
      const pending = await eventually(check.bind(null, 'escalator/soak'), {
        what: 'the soak check',
        timeoutMs: 60_000,
      });
      expect(pending.status).toBe('in_progress');
      killWorker();
      const green = await passes('escalator/soak', 'the soak check to pass after the restart');
      // Not before the soak counted from healthy-since (8 s), whatever the merge time (GitHub's
      // timestamps are whole seconds).
      expect(Date.parse(green.completed_at!)).toBeGreaterThanOrEqual(
        Math.floor((Date.parse(healthySince) + 8_000) / 1000) * 1000,
      );
    },
  );
});
