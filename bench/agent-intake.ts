/**
 * `npx tsx bench/agent-intake.ts`: how fast an agent's report is recorded, with the whole product
 * (web and workers) on real Redis and the sandbox GitHub.
 *
 * 1. latency: 200 signed Flux events one after another (a Kustomization for an environment of
 *    five apps, alternating healthy and degraded); time from sending to the 202, and from sending
 *    to `store.health` holding it for every app; print p50, p90, p99, max
 * 2. the store alone: 2,000 `store.health.record` calls by 16 concurrent writers on one app (every
 *    one contends), then on 50 apps; print records per second and how many changed what is recorded
 * 3. exit non-zero when a report answered 202 was not recorded, or the contended run lost one
 *
 * Environment: REDIS_URL (default redis://127.0.0.1:6379), BENCH_LOG_LEVEL. Keys live under a
 * random prefix and are removed at the end.
 */
import { agentKey } from '../src/intake/agent-routes.js';
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HealthReport } from '../src/planners/health.js';
import { startBenchStack, waitIndexed } from './support/stack.js';
import { banner, ms, sleep, summarize } from './support/stats.js';

const REPORTS = Number(process.env.AGENT_REPORTS ?? 200);
const APPS = 5;
const STORE_CALLS = 2_000;
/** Health workers run 4 jobs at once per process: four replicas. */
const WRITERS = 16;
const token = `agent-${randomUUID()}`;
const fixture = JSON.parse(
  readFileSync(join(import.meta.dirname, '../test/fixtures/agents/flux-kustomization-succeeded.json'), 'utf8'),
) as Record<string, unknown>;

function line(label: string, samples: number[]): void {
  const s = summarize(samples);
  console.log(`  ${label.padEnd(34)} n=${s.n}  p50 ${ms(s.p50)}  p90 ${ms(s.p90)}  p99 ${ms(s.p99)}  max ${ms(s.max)}`);
}

async function main(): Promise<number> {
  banner('Agent report → recorded health (bench/agent-intake.ts)');
  const stack = await startBenchStack({ ESCALATOR_AGENT_TOKEN: token });
  let failures = 0;
  try {
    const files: Record<string, string> = {
      '.github/escalator.yml':
        'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n    health: { flux: "flux-system/apps-staging" }\n',
    };
    for (let i = 0; i < APPS; i++)
      files[`apps/app${i}/overlays/dev/kustomization.yaml`] =
        `images:\n  - name: ghcr.io/example/app${i}\n    newTag: "1.0.0"\n`;
    const created = await stack.client.createRepo({ name: 'gitops', files });
    const owner = created.full_name.split('/')[0]!;
    await waitIndexed(stack, owner, 'gitops', APPS);

    const accepted: number[] = [];
    const recorded: number[] = [];
    const base = Date.parse('2026-01-01T00:00:00Z');
    for (let n = 0; n < REPORTS; n++) {
      const at = new Date(base + n * 1000).toISOString();
      const body = JSON.stringify({
        ...fixture,
        timestamp: at,
        ...(n % 2 ? { severity: 'error', reason: 'HealthCheckFailed' } : {}),
      });
      const start = performance.now();
      const res = await fetch(`${stack.app.url}/agents/flux/${owner}/gitops`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-signature': `sha256=${createHmac('sha256', agentKey(token, owner)).update(body).digest('hex')}`,
        },
        body,
      });
      const answer = (await res.json()) as { targets?: string[] };
      accepted.push(performance.now() - start);
      if (res.status !== 202 || answer.targets?.length !== APPS) {
        failures++;
        console.log(`  report ${n} answered ${res.status} ${JSON.stringify(answer)}`);
        continue;
      }
      const deadline = Date.now() + 10_000;
      for (;;) {
        const all = await Promise.all(
          Array.from({ length: APPS }, (_, i) => stack.store.health.load({ owner, repo: 'gitops' }, 'dev', `app${i}`)),
        );
        if (all.every((health) => health?.reportedAt === at)) break;
        if (Date.now() > deadline) {
          failures++;
          console.log(`  report ${n} was not recorded for every app within 10 s`);
          break;
        }
        await sleep(2);
      }
      recorded.push(performance.now() - start);
    }
    console.log(`\n1. ${REPORTS} signed Flux events, one Kustomization for ${APPS} apps (sequential)`);
    line('POST → 202', accepted);
    line(`POST → recorded for all ${APPS} apps`, recorded);

    console.log(
      `\n2. store.health.record on real Redis: ${STORE_CALLS} calls by ${WRITERS} concurrent writers (as many as the health workers of four replicas)`,
    );
    for (const keys of [1, 50]) {
      const reports: HealthReport[] = Array.from({ length: STORE_CALLS }, (_, i) => ({
        owner,
        repo: `store-${keys}`,
        environment: 'dev',
        app: `app${i % keys}`,
        revision: 'a'.repeat(40),
        sync: 'synced',
        health: i % 3 === 0 ? 'degraded' : 'healthy',
        at: new Date(base + i * 1000).toISOString(),
        source: { agent: 'flux', object: 'flux-system/apps-dev' },
      }));
      const start = performance.now();
      let next = 0;
      const results = (
        await Promise.all(
          Array.from({ length: WRITERS }, async () => {
            const mine = [];
            for (let i = next++; i < reports.length; i = next++)
              mine.push(await stack.store.health.record({ owner, repo: `store-${keys}` }, reports[i]!, 60_000));
            return mine;
          }),
        )
      ).flat();
      const seconds = (performance.now() - start) / 1000;
      const changed = results.filter((result) => result.changed).length;
      // The newest report of each app must be what is recorded: none lost to a concurrent write.
      for (let app = 0; app < keys; app++) {
        const newest = reports.filter((report) => report.app === `app${app}`).at(-1)!;
        const health = await stack.store.health.load({ owner, repo: `store-${keys}` }, 'dev', `app${app}`);
        if (health?.reportedAt !== newest.at) {
          failures++;
          console.log(`  store-${keys} app${app}: recorded ${health?.reportedAt}, newest ${newest.at}`);
        }
      }
      console.log(
        `  ${String(keys).padStart(2)} app(s): ${Math.round(STORE_CALLS / seconds)} records/s, ${changed} changed what is recorded, ${STORE_CALLS - changed} were older than it`,
      );
    }
  } finally {
    await stack.close();
  }
  console.log(failures ? `\n${failures} failure(s)` : '\nevery accepted report recorded; no record lost');
  return failures ? 1 : 0;
}

process.exitCode = await main();
