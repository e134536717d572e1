/**
 * `npx tsx bench/bump.ts`: registry event → bump pull request, end to end in the sandbox GitHub
 * with real Redis, and the GitHub API calls each bump costs.
 *
 * 1. BUMP_REPOS GitOps repositories (default 6) of 6 apps each; every app uses its own image in
 *    `apps/<app>/overlays/dev`; wait until all are indexed and Escalator is idle
 * 2. warm index, new PR: for 5 apps per repository (30 images), one at a time, `POST /api/v1/images`
 *    and time until the PR on `escalator/dev/<app>` is listable with its two labels
 *    (`ESCALATOR_DEBOUNCE_MS=0`); count the GitHub calls made while that bump's job ran
 * 3. warm index, living PR: a newer tag for 5 of those images updates their open PRs
 * 4. cold index: the subscription index is deleted from Redis (as after Redis lost its data) before
 *    the sixth app of 3 repositories; the event rebuilds it from GitHub first
 * 5. a burst of 100 pushes of one image, one every 80 ms: calls, commits, time to the final PR, with
 *    no debounce and with the default 1.5 s window (a second stack)
 * Each phase stops early when its time budget is spent (n says how many samples were taken).
 * Each end-to-end time is also split into time waiting on GitHub (any call in flight) and the rest
 * (Escalator, Redis, webhooks): the simulator is much slower than GitHub at writing trees.
 * Figures only; it stops by itself. Keys live under a random prefix and are removed at the end.
 */
import {
  appName,
  byJob,
  deleteKeys,
  githubBusyMs,
  gitopsFiles,
  postImage,
  routeSummary,
  startBenchStack,
  waitForPull,
  waitIdle,
  waitIndexed,
  type BenchStack,
  type CallerJob,
  type GitHubCall,
} from './support/stack.js';
import { banner, loadavg, ms, summarize } from './support/stats.js';

const REPOS = Number(process.env.BUMP_REPOS ?? 6);
const WARM_PER_REPO = 5;
const APPS_PER_REPO = WARM_PER_REPO + 1;
const UPDATES = 5;
const COLD = Math.min(3, REPOS);
const BURST = 100;
const BURST_EVERY_MS = 80;
const CALL_BUDGET = 5;
/** Wall-time budgets per phase (ms): on a loaded machine fewer samples are taken, never more time. */
const BUDGET = { warm: 60_000, updates: 15_000, cold: 30_000 };
const within = (start: number, budget: number) => Date.now() - start < budget;
const image = (i: number) => `ghcr.io/example/${appName(i)}`;
const burstImage = 'ghcr.io/example/burst';
const digest = (i: number) => `sha256:${(i % 256).toString(16).padStart(2, '0').repeat(32)}`;
const config = `environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\nimages:\n  - name: ${burstImage}\n    policy: semver\n`;
const tokenRoute = 'POST /app/installations/{installation_id}/access_tokens';
const repoName = (r: number) => `gitops-${r}`;
/** Global app index of app `a` in repository `r`. */
const appOf = (r: number, a: number) => r * APPS_PER_REPO + a;

interface Sample {
  ms: number;
  githubMs: number;
  calls: GitHubCall[];
  byJob: Map<CallerJob, GitHubCall[]>;
}

async function setUp(env: Record<string, string>, repos: number): Promise<{ stack: BenchStack; owner: string }> {
  const stack = await startBenchStack(env);
  for (let r = 0; r < repos; r++) {
    const files = gitopsFiles({
      apps: Array.from({ length: APPS_PER_REPO }, (_, a) => appOf(r, a)),
      environments: ['dev'],
      config,
      image,
    });
    await stack.client.createRepo({ name: repoName(r), files });
  }
  const burst = await stack.client.createRepo({
    name: 'burst',
    files: {
      '.github/escalator.yml': config,
      'apps/burst/overlays/dev/kustomization.yaml': `images:\n  - name: ${burstImage}\n    newTag: 1.0.0\n`,
    },
  });
  const owner = burst.full_name.split('/')[0] as string;
  for (let r = 0; r < repos; r++) await waitIndexed(stack, owner, repoName(r), APPS_PER_REPO);
  await waitIndexed(stack, owner, 'burst', 1);
  await waitIdle(stack);
  return { stack, owner };
}

/** POST one image, wait for its PR to be ready, wait for idle, and attribute the calls. */
async function bumpOnce(
  stack: BenchStack,
  owner: string,
  input: { repo: string; image: string; app: string; tag: string },
): Promise<Sample> {
  const title = `Bump ${input.app} to ${input.tag} in dev`;
  const pending = waitForPull(stack, {
    owner,
    repo: input.repo,
    branch: `escalator/dev/${input.app}`,
    ready: (pull) => pull.labels.length >= 2 && pull.title === title,
  });
  const from = Date.now();
  await postImage(stack, input.image);
  const { at } = await pending;
  await waitIdle(stack);
  const calls = stack.calls.filter((call) => call.startedAt >= from);
  return { ms: at - from, githubMs: githubBusyMs(calls, from, at), calls, byJob: byJob(calls) };
}

function line(label: string, samples: number[]): string {
  const s = summarize(samples);
  return `${label.padEnd(42)} n=${String(s.n).padEnd(3)} p50 ${ms(s.p50).padStart(8)}   p90 ${ms(s.p90).padStart(8)}   p99 ${ms(s.p99).padStart(8)}   max ${ms(s.max).padStart(8)}`;
}

function count(sample: Sample, job: CallerJob): number {
  return sample.byJob.get(job)?.length ?? 0;
}

function callLine(label: string, values: number[]): string {
  const s = summarize(values);
  return `${label.padEnd(42)} min ${Math.min(...values)}   p50 ${s.p50}   max ${s.max}`;
}

function timeLines(label: string, samples: Sample[], load: string): string[] {
  return [
    `  ${line(
      label,
      samples.map((s) => s.ms),
    )}   load ${load}`,
    `    ${line(
      '  of which a GitHub call was in flight',
      samples.map((s) => s.githubMs),
    )}`,
    `    ${line(
      '  the rest (Escalator, Redis, webhooks)',
      samples.map((s) => s.ms - s.githubMs),
    )}`,
  ];
}

async function burst(
  stack: BenchStack,
  owner: string,
): Promise<{ calls: number; other: number; commits: number; lastToPr: number; routes: string[] }> {
  const from = Date.now();
  const title = `Bump burst to 1.0.${BURST} in dev`;
  const pending = waitForPull(stack, {
    owner,
    repo: 'burst',
    branch: 'escalator/dev/burst',
    ready: (pull) => pull.title === title && pull.labels.length >= 2,
    timeoutMs: 90_000,
  });
  const sent: Array<Promise<number>> = [];
  for (let i = 1; i <= BURST; i++) {
    const due = from + (i - 1) * BURST_EVERY_MS;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
    sent.push(postImage(stack, `${burstImage}:1.0.${i}`));
  }
  await Promise.all(sent);
  const lastSent = Date.now();
  const { pull, at } = await pending;
  await waitIdle(stack, { quietMs: 500 });
  const calls = stack.calls.filter((call) => call.startedAt >= from);
  const groups = byJob(calls);
  const commits = (await stack.user.rest.pulls.listCommits({ owner, repo: 'burst', pull_number: pull.number })).data
    .length;
  const bumpCalls = groups.get('bump') ?? [];
  return {
    calls: bumpCalls.length,
    other: calls.length - bumpCalls.length,
    commits,
    lastToPr: at - lastSent,
    routes: routeSummary(bumpCalls),
  };
}

banner('bench/bump.ts — registry event → bump PR (sandbox GitHub, real Redis, all in one process)');
const { stack, owner } = await setUp({ ESCALATOR_DEBOUNCE_MS: '0' }, REPOS);
const warm: Sample[] = [];
const updates: Sample[] = [];
const cold: Sample[] = [];
try {
  const warmLoad = loadavg();
  const warmStart = Date.now();
  // Round-robin over the repositories, so consecutive bumps do not hit the same repository.
  for (let a = 0; a < WARM_PER_REPO; a++) {
    for (let r = 0; r < REPOS && within(warmStart, BUDGET.warm); r++) {
      const i = appOf(r, a);
      warm.push(
        await bumpOnce(stack, owner, {
          repo: repoName(r),
          image: `${image(i)}:1.1.0@${digest(i)}`,
          app: appName(i),
          tag: '1.1.0',
        }),
      );
    }
  }
  const updateLoad = loadavg();
  const updateStart = Date.now();
  for (let u = 0; u < UPDATES && u < warm.length && within(updateStart, BUDGET.updates); u++) {
    const r = u % REPOS;
    const i = appOf(r, Math.floor(u / REPOS));
    updates.push(
      await bumpOnce(stack, owner, {
        repo: repoName(r),
        image: `${image(i)}:1.2.0@${digest(100 + i)}`,
        app: appName(i),
        tag: '1.2.0',
      }),
    );
  }
  const coldLoad = loadavg();
  const coldStart = Date.now();
  for (let r = 0; r < COLD && within(coldStart, BUDGET.cold); r++) {
    const i = appOf(r, WARM_PER_REPO);
    // Redis lost the index (not the queues): the next image event rebuilds it from GitHub.
    await deleteKeys(stack.redis, `${stack.prefix}:index:*`);
    cold.push(
      await bumpOnce(stack, owner, {
        repo: repoName(r),
        image: `${image(i)}:1.1.0@${digest(i)}`,
        app: appName(i),
        tag: '1.1.0',
      }),
    );
  }
  const burstLoad = loadavg();
  const noDebounce = await burst(stack, owner);

  console.log('');
  console.log(
    `event → PR listable with its labels (POST /api/v1/images → open PR on escalator/dev/<app>, ESCALATOR_DEBOUNCE_MS=0)`,
  );
  console.log(`  ${REPOS} repositories × ${APPS_PER_REPO} apps, plus one repository for the burst; one installation`);
  for (const text of timeLines('warm index, new PR', warm, warmLoad)) console.log(text);
  for (const text of timeLines('warm index, living PR updated', updates, updateLoad)) console.log(text);
  for (const text of timeLines('cold index (rebuilt from GitHub first)', cold, coldLoad)) console.log(text);
  const p50 = summarize(warm.map((s) => s.ms)).p50;
  console.log(`  warm p50 / 1 s target: ${(p50 / 1000).toFixed(2)}`);

  console.log('');
  console.log(
    'GitHub API calls per bump (each call is attributed to the job whose code made it, from its async stack)',
  );
  const warmBump = warm.map((s) => count(s, 'bump'));
  console.log(
    `  ${callLine('warm index, new PR: bump job', warmBump)}   (target ≤ ${CALL_BUDGET}; worst / target ${(Math.max(...warmBump) / CALL_BUDGET).toFixed(2)})`,
  );
  console.log(
    `  ${callLine(
      'warm index, new PR: rendered diff job',
      warm.map((s) => count(s, 'diff')),
    )}   (the PR it opened is rendered and commented on)`,
  );
  console.log(
    `  ${callLine(
      'warm index, new PR: index / other jobs',
      warm.map((s) => s.calls.length - count(s, 'bump') - count(s, 'diff')),
    )}`,
  );
  console.log(
    `  ${callLine(
      'warm index, living PR: bump job',
      updates.map((s) => count(s, 'bump')),
    )}`,
  );
  console.log(
    `  ${callLine(
      'cold index: bump job',
      cold.map((s) => count(s, 'bump')),
    )}`,
  );
  console.log(
    `  ${callLine(
      'cold index: index rebuild',
      cold.map((s) => count(s, 'index')),
    )}   (${REPOS + 1} repositories installed)`,
  );
  console.log(
    `  ${callLine(
      'cold index: rendered diff job',
      cold.map((s) => count(s, 'diff')),
    )}`,
  );
  const tokens = warm.flatMap((s) => s.calls).filter((call) => call.route === tokenRoute).length;
  console.log(`  installation tokens minted during the ${warm.length} warm bumps: ${tokens}`);
  const one = warm[Math.min(REPOS, warm.length - 1)]!;
  console.log(`  routes of one warm bump (new PR, ${count(one, 'bump')} calls, ${ms(one.ms)} end to end):`);
  for (const call of one.byJob.get('bump') ?? [])
    console.log(`    ${String(call.status)} ${call.route.padEnd(58)} ${ms(call.endedAt - call.startedAt).padStart(8)}`);
  const oneUpdate = updates[0]!;
  console.log(
    `  routes of the rendered diff of that PR (${count(one, 'diff')} calls): ${routeSummary(one.byJob.get('diff') ?? []).join(', ')}`,
  );
  console.log(
    `  routes of one living-PR update (${count(oneUpdate, 'bump')} calls): ${routeSummary(oneUpdate.byJob.get('bump') ?? []).join(', ')}`,
  );
  const oneCold = cold[0]!;
  const rebuild = oneCold.byJob.get('index') ?? [];
  console.log(`  routes of one index rebuild (${rebuild.length} calls): ${routeSummary(rebuild).join(', ')}`);
  const byRoute = new Map<string, number[]>();
  for (const call of warm.flatMap((s) => s.byJob.get('bump') ?? []))
    byRoute.set(call.route, [...(byRoute.get(call.route) ?? []), call.endedAt - call.startedAt]);
  console.log('  simulator time per route over the warm bumps (p50 / max):');
  for (const [route, durations] of [...byRoute].sort((a, b) => summarize(b[1]).p50 - summarize(a[1]).p50)) {
    const s = summarize(durations);
    console.log(`    ${route.padEnd(58)} ${ms(s.p50).padStart(8)} / ${ms(s.max).padStart(8)}`);
  }

  console.log('');
  console.log(`burst: ${BURST} pushes of one image, one every ${BURST_EVERY_MS} ms (semver policy)`);
  const b = noDebounce;
  console.log(
    `  ESCALATOR_DEBOUNCE_MS=0     bump calls ${String(b.calls).padStart(4)}   commits on the PR ${String(b.commits).padStart(3)}   other jobs' calls ${String(b.other).padStart(4)}   last push → PR at 1.0.${BURST} ${ms(b.lastToPr).padStart(8)}   load ${burstLoad}`,
  );
} finally {
  await stack.close();
}

// The shipped coalescing window, on a fresh stack with only the burst repository's neighbours.
const second = await setUp({}, 1);
try {
  const load = loadavg();
  const b = await burst(second.stack, second.owner);
  console.log(
    `  default window (1.5 s)      bump calls ${String(b.calls).padStart(4)}   commits on the PR ${String(b.commits).padStart(3)}   other jobs' calls ${String(b.other).padStart(4)}   last push → PR at 1.0.${BURST} ${ms(b.lastToPr).padStart(8)}   load ${load}`,
  );
  console.log(`    routes: ${b.routes.join(', ')}`);
} finally {
  await second.stack.close();
}
console.log(`done ${new Date().toISOString()}  load average ${loadavg()}`);
