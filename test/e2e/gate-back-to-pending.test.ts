import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requiredChecksPassed } from '../../src/adapters/github/gates.js';
import type { AppHealth } from '../../src/planners/health.js';
import { healthIntake, type HealthIntake } from '../support/health.js';
import { eventually, startStack, waitIndexed, type Stack } from '../support/stack.js';

/**
 * On GitHub's terms: a passed `escalator/health` whose source goes Degraded (within `tolerate`)
 * shows pending as GitHub keeps check runs — a new run of the name, since a completed run cannot
 * go back (the sandbox keeps it completed, as GitHub does: docs/gates.md) — so the required check
 * holds the merge while the environment is degraded, and passes again once it is healthy.
 */
const owner = 'developer';
const overlay = (tag: string) => `images:\n  - name: ghcr.io/example/hello\n    newTag: ${tag}\n`;
const report = (revision: string, health: 'healthy' | 'degraded', since: string): AppHealth => ({
  revision,
  sync: 'synced',
  health,
  ...(health === 'healthy' ? { healthySince: since } : { degradedSince: since, lastDegradedAt: since }),
  reportedAt: new Date().toISOString(),
  source: { agent: 'argocd', object: 'hello-dev' },
});

describe('a passed gate that must go back to pending (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  let intake: HealthIntake;
  beforeAll(async () => {
    stack = await startStack({}, { name: 'gate-pending' });
    intake = healthIntake(stack);
  });
  afterAll(async () => {
    await intake?.close();
    await stack?.close();
  });

  it(
    'is a new check run: the required check reads pending and GitHub refuses the merge until healthy again',
    {
      timeout: 120_000,
    },
    async () => {
      const repo = 'degraded';
      await stack.client.createRepo({
        name: repo,
        files: {
          '.github/escalator.yml': `environments:
  - name: dev
    paths: ["apps/*/overlays/dev"]
    from: registry
    health: { argocd: "{app}-dev", tolerate: 60s, deployments: false }
  - name: staging
    paths: ["apps/*/overlays/staging"]
    from: dev
`,
          'apps/hello/overlays/dev/kustomization.yaml': overlay('1.0.0'),
          'apps/hello/overlays/staging/kustomization.yaml': overlay('1.0.0'),
        },
      });
      await waitIndexed(stack, owner, repo);
      await stack.user.rest.repos.createRepoRuleset({
        owner,
        repo,
        name: 'escalator gates',
        enforcement: 'active',
        conditions: { ref_name: { include: ['~DEFAULT_BRANCH'], exclude: [] } },
        rules: [
          {
            type: 'required_status_checks',
            parameters: {
              required_status_checks: [{ context: 'escalator/health', integration_id: stack.sim.app.id }],
              strict_required_status_checks_policy: false,
            },
          },
        ],
      });
      const { sha: merge } = await stack.client.commit(`${owner}/${repo}`, {
        branch: 'main',
        files: { 'apps/hello/overlays/dev/kustomization.yaml': overlay('1.1.0') },
      });
      await waitIndexed(stack, owner, repo, merge);
      const pull = await eventually(
        async () =>
          (await stack.user.rest.pulls.list({ owner, repo })).data.find(
            (p) => p.head.ref === 'escalator/promote/staging/hello',
          ),
        { what: 'the promotion PR', timeoutMs: 60_000 },
      );
      const runs = async () =>
        (
          await stack.user.rest.checks.listForRef({
            owner,
            repo,
            ref: pull.head.sha,
            check_name: 'escalator/health',
            filter: 'all',
          })
        ).data.check_runs.map((run) => ({ id: run.id, status: run.status, conclusion: run.conclusion }));
      const newest = (predicate: (run: { status: string; conclusion: string | null }) => boolean, what: string) =>
        eventually(
          async () => {
            const [run] = await runs();
            return run && predicate(run) ? run : undefined;
          },
          { what, timeoutMs: 60_000 },
        );

      await intake.report(
        owner,
        repo,
        'dev',
        'hello',
        report(merge, 'healthy', new Date(Date.now() - 5_000).toISOString()),
      );
      const passed = await newest((run) => run.conclusion === 'success', 'escalator/health to pass');

      // Degraded for a few seconds, within the 60 s tolerated: pending, as a new run.
      await intake.report(owner, repo, 'dev', 'hello', report(merge, 'degraded', new Date().toISOString()));
      const pending = await newest((run) => run.status === 'in_progress', 'escalator/health to be pending again');
      expect(pending.id).toBeGreaterThan(passed.id);
      expect((await runs()).find((run) => run.id === passed.id)).toEqual({
        id: passed.id,
        status: 'completed',
        conclusion: 'success',
      });
      expect(
        await requiredChecksPassed(stack.user, { owner, repo }, pull.head.sha, ['escalator/health']),
      ).toMatchObject({
        passed: false,
        checks: [{ context: 'escalator/health', state: 'pending', via: 'check-run' }],
      });
      await expect(
        stack.user.rest.pulls.merge({ owner, repo, pull_number: pull.number, sha: pull.head.sha }),
      ).rejects.toMatchObject({
        status: 405,
        response: { data: { message: 'Required status check "escalator/health" is expected.' } },
      });

      // Healthy again: the pending run completes in place, and the merge goes through.
      await intake.report(
        owner,
        repo,
        'dev',
        'hello',
        report(merge, 'healthy', new Date(Date.now() - 5_000).toISOString()),
      );
      const again = await newest((run) => run.conclusion === 'success', 'escalator/health to pass again');
      expect(again.id).toBe(pending.id);
      const merged = await stack.user.rest.pulls.merge({ owner, repo, pull_number: pull.number, sha: pull.head.sha });
      expect(merged.data.merged).toBe(true);
    },
  );
});
