/**
 * `npx tsx bench/dashboard.ts`: how often the dashboard issue is edited under a burst of changes,
 * end to end in the sandbox GitHub with real Redis.
 *
 * 1. DASH_REPOS repositories (default 3) with `dashboard: true` and 20 apps in three
 *    environments; wait until each has its dashboard issue and Escalator is idle
 * 2. burst: for DASH_BURST_MS (default 20 s), every 100 ms and in every repository, something the
 *    dashboard shows changes (a hold on staging put or lifted, as `/escalator hold` records it)
 *    and a render is asked for, as every job does after a change
 * 3. quiet: for DASH_QUIET_MS (default 10 s), renders are asked for as often, but nothing changes
 * Printed: changes, edits (PATCH of the issue) per repository and per minute, the shortest gap
 * between two edits of one issue, and GitHub calls per render. Target: at most one edit per
 * repository every couple of seconds during the burst, none in the quiet phase. Figures only; it
 * stops by itself. Keys live under a random prefix and are removed at the end.
 */
import { enqueueDashboard } from '../src/queue/enqueue.js';
import { Producer } from '../src/queue/producer.js';
import { deleteKeys, startBenchStack, waitIdle, type BenchStack } from './support/stack.js';
import { banner, loadavg, sleep } from './support/stats.js';

const REPOS = Number(process.env.DASH_REPOS ?? 3);
const BURST_MS = Number(process.env.DASH_BURST_MS ?? 20_000);
const QUIET_MS = Number(process.env.DASH_QUIET_MS ?? 10_000);
const EVERY_MS = 100;
const APPS = 20;
const owner = 'developer';
const overlay = (app: string, tag: string) => `images:\n  - name: ghcr.io/example/${app}\n    newTag: ${tag}\n`;
const config = [
  'dashboard: true',
  'environments:',
  '  - name: dev',
  '    paths: ["apps/*/overlays/dev"]',
  '    from: registry',
  '  - name: staging',
  '    paths: ["apps/*/overlays/staging"]',
  '    from: dev',
  '  - name: prod',
  '    paths: ["apps/*/overlays/prod"]',
  '    from: staging',
  '',
].join('\n');

async function seed(stack: BenchStack, repo: string): Promise<void> {
  const files: Record<string, string> = { '.github/escalator.yml': config };
  for (let a = 0; a < APPS; a++)
    for (const env of ['dev', 'staging', 'prod'])
      files[`apps/app-${a}/overlays/${env}/kustomization.yaml`] = overlay(`app-${a}`, '1.0.0');
  await stack.client.createRepo({ name: repo, files });
}

async function dashboardOf(stack: BenchStack, repo: string): Promise<number> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(200)) {
    const issue = (await stack.user.rest.issues.listForRepo({ owner, repo, state: 'open' })).data.find(
      (i) => i.title === 'Escalator: environments',
    );
    if (issue) return issue.number;
  }
  throw new Error(`no dashboard issue in ${repo} within 60 s`);
}

async function main(): Promise<void> {
  banner(`dashboard edits under a burst: ${REPOS} repositories × ${APPS} apps × 3 environments; ${loadavg()}`);
  const stack = await startBenchStack();
  const producer = new Producer(stack.redis, stack.prefix);
  const repos = Array.from({ length: REPOS }, (_, r) => `dash-${r}`);
  // Each edit is attributed to its repository through the issue it patches.
  const patched: Array<{ repo: string; at: number }> = [];
  const unsubscribe = stack.sim.onExchange((exchange) => {
    const match = /^\/repos\/[^/]+\/([^/]+)\/issues\/\d+$/.exec(exchange.path);
    if (exchange.method === 'PATCH' && match && exchange.status < 300)
      patched.push({ repo: match[1]!, at: Date.now() });
  });
  try {
    for (const repo of repos) await seed(stack, repo);
    for (const repo of repos) await dashboardOf(stack, repo);
    await waitIdle(stack, { quietMs: 3_000, timeoutMs: 120_000 });
    const installation = (await stack.store.subscriptions.loadRepo(owner, repos[0]!))!.installationId;

    let changes = 0;
    const ask = (repo: string) =>
      enqueueDashboard(producer, { installationId: installation, owner, repo }, `${Date.now()}-${changes}`);
    const run = async (ms: number, change: boolean) => {
      const from = Date.now();
      let held = false;
      while (Date.now() - from < ms) {
        held = !held;
        for (const repo of repos) {
          if (change) {
            const key = { installationId: installation, owner, repo };
            await stack.store.holds.setHold(key, 'staging', '', held ? '@bench' : null);
            changes++;
          }
          await ask(repo);
        }
        await sleep(EVERY_MS);
      }
      await waitIdle(stack, { quietMs: 3_000, timeoutMs: 60_000 });
      return { from, to: Date.now() };
    };

    const burst = await run(BURST_MS, true);
    const quiet = await run(QUIET_MS, false);
    const perRepo = (window: { from: number; to: number }) =>
      repos.map((repo) =>
        patched.filter((p) => p.repo === repo && p.at >= window.from && p.at < window.to).map((p) => p.at),
      );
    const burstEdits = perRepo(burst);
    const quietEdits = perRepo(quiet).flat().length;
    const gaps = burstEdits.flatMap((times) => times.slice(1).map((t, i) => t - times[i]!));
    const total = burstEdits.flat().length;
    const minutes = (burst.to - burst.from) / 60_000;
    console.log(
      `burst:  ${changes} changes in ${((burst.to - burst.from) / 1000).toFixed(1)} s over ${REPOS} repositories`,
    );
    console.log(
      `        ${total} edits: ${(total / REPOS / minutes).toFixed(1)} per repository per minute (per repository: ${burstEdits.map((t) => t.length).join(', ')})`,
    );
    console.log(
      `        shortest gap between two edits of one issue: ${gaps.length ? `${Math.min(...gaps)} ms` : 'n/a'}`,
    );
    console.log(`        changes per edit: ${(changes / Math.max(1, total)).toFixed(0)}`);
    console.log(
      `quiet:  ${quietEdits} edits in ${((quiet.to - quiet.from) / 1000).toFixed(1)} s, renders asked every ${EVERY_MS} ms, nothing changed`,
    );
  } finally {
    unsubscribe?.();
    await stack.close();
    await deleteKeys(stack.redis, `${stack.prefix}:*`).catch(() => 0);
    await stack.redis.quit().catch(() => undefined);
  }
}

await main();
