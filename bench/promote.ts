/**
 * `npx tsx bench/promote.ts`: merge of a dev bump PR → staging promotion PR, end to end in the
 * sandbox GitHub with real Redis, and the GitHub API calls each promotion costs.
 *
 * 1. PROMOTE_REPOS GitOps repositories (default 5) of 2 apps each, environments dev (from the
 *    registry) and staging (from dev, no soak); wait until all are indexed and Escalator is idle
 * 2. per app, one at a time: `POST /api/v1/images` → wait for the dev bump PR and for Escalator to
 *    go idle → merge it through the sandbox control API (what a person's click does: a real git
 *    merge, then signed `push` and `pull_request.closed` webhooks to Escalator) → time until the PR
 *    on `escalator/promote/staging/<app>` is listable with its two labels
 * 3. GitHub calls from the merge until Escalator is idle again, by the job that made them: the
 *    re-index the push to the default branch triggers, the promotion itself, and the rendered
 *    diff of the new PR
 * The loop stops early when its 120 s budget is spent (n says how many promotions were measured).
 * Each time is also split into time waiting on GitHub (any call in flight) and the rest.
 * Figures only; it stops by itself. Keys live under a random prefix and are removed at the end.
 */
import { appName, gitopsFiles, startBenchStack, waitIdle, waitIndexed } from './support/stack.js';
import { measureImagePromotion, printPromotionCalls, timeLine, type PromotionSample } from './support/promotion.js';
import { banner, loadavg } from './support/stats.js';

const REPOS = Number(process.env.PROMOTE_REPOS ?? 5);
const APPS_PER_REPO = 2;
const repoName = (r: number) => `gitops-${r}`;
const appOf = (r: number, a: number) => r * APPS_PER_REPO + a;
const image = (i: number) => `ghcr.io/example/${appName(i)}`;
const digest = (i: number) => `sha256:${(i % 256).toString(16).padStart(2, '0').repeat(32)}`;
/** Wall-time budget of the measured loop (ms): on a loaded machine fewer samples are taken, never more time. */
const BUDGET_MS = 120_000;
const config = `environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n  - name: staging\n    paths: ["apps/*/overlays/staging"]\n    from: dev\n`;

banner(
  'bench/promote.ts — merge of the dev PR → staging promotion PR (sandbox GitHub, real Redis, all in one process)',
);
const stack = await startBenchStack({ ESCALATOR_DEBOUNCE_MS: '0' });
const samples: PromotionSample[] = [];
let owner = '';
try {
  for (let r = 0; r < REPOS; r++) {
    const created = await stack.client.createRepo({
      name: repoName(r),
      files: gitopsFiles({
        apps: Array.from({ length: APPS_PER_REPO }, (_, a) => appOf(r, a)),
        environments: ['dev', 'staging'],
        config,
        image,
      }),
    });
    owner = created.full_name.split('/')[0] as string;
  }
  for (let r = 0; r < REPOS; r++) await waitIndexed(stack, owner, repoName(r), APPS_PER_REPO * 2);
  await waitIdle(stack);
  const load = loadavg();
  const started = Date.now();
  for (let a = 0; a < APPS_PER_REPO; a++) {
    for (let r = 0; r < REPOS && Date.now() - started < BUDGET_MS; r++) {
      const i = appOf(r, a);
      samples.push(
        await measureImagePromotion(stack, {
          owner,
          repo: repoName(r),
          app: appName(i),
          image: image(i),
          tag: '1.1.0',
          digest: digest(i),
        }),
      );
    }
  }

  console.log('');
  console.log(
    `merge → staging promotion PR listable with its labels (${REPOS} repositories × ${APPS_PER_REPO} apps, dev and staging; load at start ${load}, at end ${loadavg()})`,
  );
  console.log(
    `  ${timeLine(
      'merge call returned → promotion PR',
      samples.map((s) => s.ms),
    )}`,
  );
  console.log(
    `    ${timeLine(
      '  of which a GitHub call was in flight',
      samples.map((s) => s.githubMs),
    )}`,
  );
  console.log(
    `    ${timeLine(
      '  the rest (Escalator, Redis, webhooks)',
      samples.map((s) => s.ms - s.githubMs),
    )}`,
  );
  console.log(
    `  ${timeLine(
      'the merge call itself (simulator git merge)',
      samples.map((s) => s.mergeMs),
    )}`,
  );
  console.log('');
  console.log(
    `GitHub API calls per promotion, from the merge until Escalator is idle, by the job that made them (${APPS_PER_REPO * 2} environment files per repository)`,
  );
  printPromotionCalls(samples);
} finally {
  await stack.close();
}
console.log(`done ${new Date().toISOString()}  load average ${loadavg()}`);
