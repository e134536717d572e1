/**
 * `npm run bench:health` (`npx tsx bench/health.ts`): an agent's report about the source
 * environment → the promotion's `escalator/health` gate decided → its check run updated on GitHub,
 * end to end in the sandbox GitHub with real Redis, and the GitHub calls each report costs.
 *
 * 1. one GitOps repository: dev (from the registry) reports health through Argo CD (`{app}-dev`,
 *    with Deployments), staging is promoted from dev; a push sets dev to 1.1.0 and the staging
 *    promotion pull request opens with `escalator/health` pending
 * 2. HEALTH_REPORTS times (default 40), one at a time: record a report (alternately Degraded for
 *    5 minutes and Healthy, both on the merged commit) and follow it as the report-taking job does
 *    (`followHealth`), then time until the simulator has handled the check-run write that turns
 *    `escalator/health` to failure or success; wait until Escalator is idle before the next one
 * 3. GitHub calls per report, from the report until idle: followHealth's own (compare, deployment
 *    statuses) and the promotion job's
 * The loop stops early when its 90 s budget is spent (n says how many reports were measured).
 * Figures only; it stops by itself. Keys live under a random prefix and are removed at the end.
 */
import type { Exchange } from '@escalator/github-sandbox';
import type { AppHealth } from '../src/planners/health.js';
import { healthIntake } from '../test/support/health.js';
import { routeSummary, startBenchStack, waitForPull, waitIdle, waitIndexed, type GitHubCall } from './support/stack.js';
import { banner, loadavg, ms, summarize } from './support/stats.js';

const REPORTS = Number(process.env.HEALTH_REPORTS ?? 40);
const BUDGET_MS = 90_000;
const owner = 'developer';
const repo = 'health';
const overlay = (tag: string) =>
  `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nimages:\n  - name: ghcr.io/example/hello\n    newTag: ${tag}\n`;
const config = `environments:
  - name: dev
    paths: ["apps/*/overlays/dev"]
    from: registry
    health: { argocd: "{app}-dev", tolerate: 60s, timeout: 15m }
  - name: staging
    paths: ["apps/*/overlays/staging"]
    from: dev
`;

banner(`bench/health.ts — ${REPORTS} agent reports → escalator/health updated (90 s budget)`);
const startLoad = loadavg();
const stack = await startBenchStack();
const followCalls: GitHubCall[] = [];
const intake = healthIntake(stack, (info) => {
  const endedAt = Date.now();
  followCalls.push({
    route: info.route,
    status: info.status,
    startedAt: endedAt - info.durationMs,
    endedAt,
    job: 'other',
  });
});
try {
  await stack.client.createRepo({
    name: repo,
    files: {
      '.github/escalator.yml': config,
      'apps/hello/overlays/dev/kustomization.yaml': overlay('1.0.0'),
      'apps/hello/overlays/staging/kustomization.yaml': overlay('1.0.0'),
    },
  });
  await waitIndexed(stack, owner, repo, 2);
  const { sha: merge } = await stack.client.commit(`${owner}/${repo}`, {
    branch: 'main',
    files: { 'apps/hello/overlays/dev/kustomization.yaml': overlay('1.1.0') },
  });
  await waitForPull(stack, { owner, repo, branch: 'escalator/promote/staging/hello', ready: () => true });
  // The pending gate's re-check at its 15 m timeout is a delayed job: not part of what is measured.
  const settle = async () => {
    for (;;) {
      const delayed = await stack.queue('promote').getDelayed();
      for (const job of delayed) await job.remove();
      try {
        await waitIdle(stack, { timeoutMs: 5_000 });
        return;
      } catch {
        // a re-check was scheduled meanwhile; remove it and wait again
      }
    }
  };
  await settle();

  // When the simulator handled a check-run write that set escalator/health to a conclusion.
  let waiting: { conclusion: string; resolve: (at: number) => void } | null = null;
  stack.sim.onExchange((exchange: Exchange) => {
    if (!waiting || exchange.surface !== 'api' || exchange.status >= 300) return;
    if (!/\/check-runs/.test(exchange.path) || exchange.method === 'GET') return;
    const body = exchange.responseBody as { name?: string; conclusion?: string | null } | undefined;
    if (body?.name === 'escalator/health' && body.conclusion === waiting.conclusion) {
      const done = waiting.resolve;
      waiting = null;
      done(Date.now());
    }
  });

  const source = {
    agent: 'argocd' as const,
    object: 'hello-dev',
    url: 'https://argocd.example/applications/hello-dev',
  };
  const samples: number[] = [];
  const calls: number[] = [];
  const allCalls: GitHubCall[] = [];
  const loopStart = Date.now();
  for (let i = 0; i < REPORTS && Date.now() - loopStart < BUDGET_MS; i++) {
    const now = Date.now();
    const bad = i % 2 === 0;
    const health: AppHealth = bad
      ? {
          revision: merge,
          sync: 'synced',
          health: 'degraded',
          degradedSince: new Date(now - 300_000).toISOString(),
          lastDegradedAt: new Date(now - 300_000).toISOString(),
          reportedAt: new Date(now).toISOString(),
          source,
        }
      : {
          revision: merge,
          sync: 'synced',
          health: 'healthy',
          healthySince: new Date(now).toISOString(),
          reportedAt: new Date(now).toISOString(),
          source,
        };
    const updated = new Promise<number>((resolve) => {
      waiting = { conclusion: bad ? 'failure' : 'success', resolve };
    });
    const start = Date.now();
    await intake.report(owner, repo, 'dev', 'hello', health);
    const at = await Promise.race([
      updated,
      new Promise<number>((_, reject) => setTimeout(() => reject(new Error('check not updated in 30 s')), 30_000)),
    ]);
    samples.push(at - start);
    await waitIdle(stack);
    const spent = [
      ...stack.calls.filter((call) => call.startedAt >= start),
      ...followCalls.filter((call) => call.startedAt >= start),
    ];
    calls.push(spent.length);
    allCalls.push(...spent);
  }
  const s = summarize(samples);
  const c = summarize(calls);
  console.log(`  reports measured: ${s.n} (load before ${startLoad}, after ${loadavg()})`);
  console.log(
    `  report → escalator/health updated: p50 ${ms(s.p50)}  p90 ${ms(s.p90)}  p99 ${ms(s.p99)}  max ${ms(s.max)}`,
  );
  console.log(`  GitHub calls per report: mean ${c.mean.toFixed(1)}  p50 ${c.p50}  max ${c.max}`);
  console.log(`  calls over all reports, by route:`);
  for (const line of routeSummary(allCalls)) console.log(`    ${line}`);
} finally {
  await intake.close();
  await stack.close();
}
