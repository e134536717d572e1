import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { SandboxClient, type Simulator, startSimulator } from '@escalator/github-sandbox';
import type { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { startEscalator, type RunningEscalator } from '../../src/main/server.js';
import { appEnv, eventually, redisUrl, spawnEscalator, userOctokit } from '../support/stack.js';

const apps = ['api', 'web'];
const repos = ['alpha', 'beta'];
const overlay = (app: string, tag: string) => `images:\n  - name: ghcr.io/example/${app}\n    newTag: ${tag}\n`;

/** Two web processes and three worker processes on one Redis take one burst. */
describe('scale out: 2 web + 3 worker processes', () => {
  let sim: Simulator;
  const webs: RunningEscalator[] = [];
  const workers: ChildProcess[] = [];
  let user: Octokit;

  beforeAll(async () => {
    sim = await startSimulator();
    const env = {
      ...appEnv(sim, redisUrl),
      PORT: '0',
      LOG_LEVEL: 'silent',
      ESCALATOR_CI_TOKEN: 'ci-token-for-scale-out',
      ESCALATOR_DEBOUNCE_MS: '300',
      ESCALATOR_BUSY_RETRY_MS: '100',
      ESCALATOR_REDIS_PREFIX: `scale-${randomUUID().slice(0, 8)}`,
    };
    for (let i = 0; i < 2; i++)
      webs.push(await startEscalator({ ...env, ESCALATOR_ROLE: 'web' }, { log: createLogger({ level: 'silent' }) }));
    for (let i = 0; i < 3; i++) workers.push(spawnEscalator('worker', env));
    sim.setWebhookUrl(`${webs[0]!.url}/api/github/webhooks`);
    const client = new SandboxClient(sim.url, sim.user.token);
    for (const repo of repos) {
      await client.createRepo({
        name: repo,
        files: {
          '.github/escalator.yml':
            'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\nimages:\n  - {name: ghcr.io/example/api, policy: semver}\n  - {name: ghcr.io/example/web, policy: semver}\n',
          ...Object.fromEntries(
            apps.map((app) => [`apps/${app}/overlays/dev/kustomization.yaml`, overlay(app, '1.0.0')]),
          ),
        },
      });
    }
    user = userOctokit(sim);
  });
  afterAll(async () => {
    for (const worker of workers) worker.kill('SIGTERM');
    for (const web of webs) await web.close();
    await sim?.close();
  });

  it(
    'opens exactly one PR per (repository, app) at the newest version, with no duplicate commit',
    { timeout: 300_000 },
    async () => {
      // 12 versions of each image, sent alternately to both web processes, newest last.
      const sends: Array<Promise<Response>> = [];
      for (let version = 1; version <= 12; version++) {
        for (const app of apps) {
          const web = webs[(version + apps.indexOf(app)) % 2]!;
          sends.push(
            fetch(`${web.url}/api/v1/images`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: 'Bearer ci-token-for-scale-out' },
              body: JSON.stringify({ image: `ghcr.io/example/${app}:1.${version}.0` }),
            }),
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect((await Promise.all(sends)).every((r) => r.status === 202)).toBe(true);

      for (const repo of repos) {
        const pulls = await eventually(
          async () => {
            const all = (await user.rest.pulls.list({ owner: 'developer', repo, state: 'all', per_page: 100 })).data;
            const done = apps.every((app) => all.some((p) => p.title === `Bump ${app} to 1.12.0 in dev`));
            return done ? all : undefined;
          },
          { what: `both PRs of ${repo} at 1.12.0`, timeoutMs: 240_000 },
        );
        expect(pulls.map((p) => p.head.ref).sort()).toEqual(apps.map((app) => `escalator/dev/${app}`));
        for (const pull of pulls) {
          const commits = (await user.rest.pulls.listCommits({ owner: 'developer', repo, pull_number: pull.number }))
            .data;
          const trees = commits.map((c) => c.commit.tree.sha);
          expect(new Set(trees).size).toBe(trees.length);
        }
      }
    },
  );
});
