/**
 * `npx tsx bench/relay.ts`: how fast a push reaches the in-cluster agents, with real Redis, the
 * relay worker, and test receivers that verify signatures the way Argo CD and Flux do.
 *
 * 1. latency: 200 pushes one after another, each to three targets (Argo CD, Flux github, Flux
 *    generic-hmac); time from `enqueueRelay` being called (the webhook handler has verified and
 *    parsed the push) to each agent having read the whole request; print p50, p90, p99, max
 * 2. throughput: 20 targets, 50 pushes to distinct refs (no coalescing: 1,000 deliveries) enqueued
 *    as fast as Redis takes them; print deliveries per second until the last agent has them all
 * 3. exit non-zero when p50 latency is 100 ms or more (the goal of issue 7)
 *
 * Environment: REDIS_URL (default redis://127.0.0.1:6379), RELAY_CONCURRENCY (default 16). Keys live under a random prefix and
 * are removed at the end.
 */
import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { RelayTarget } from '../src/config/relay-targets.js';
import { startArgoCd, startFluxReceiver, type TestAgent } from '../test/relay/support/agents.js';
import { pushInput, startRelay, target } from '../test/relay/support/relay.js';

const LATENCY_PUSHES = 200;
const THROUGHPUT_TARGETS = 20;
const THROUGHPUT_PUSHES = 50;
/** The relay worker's default; RELAY_CONCURRENCY tries another. */
const CONCURRENCY = Number(process.env.RELAY_CONCURRENCY ?? 16);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * Wait until the jobs of the last push have finished: a push that arrives while the previous
 * delivery is still being recorded is coalesced (delayed by the window), which is a burst, not
 * the single-push latency measured here.
 */
async function idle(queue: Queue): Promise<void> {
  for (;;) {
    const counts = await queue.getJobCounts('active', 'waiting', 'delayed', 'prioritized');
    if (Object.values(counts).every((count) => count === 0)) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

async function latency(): Promise<number[]> {
  const agents = await Promise.all([
    startArgoCd({ secret: 'argo' }),
    startFluxReceiver({ type: 'github', token: 'flux' }),
    startFluxReceiver({ type: 'generic-hmac', token: 'hmac' }),
  ]);
  const [argocd, flux, hmac] = agents as [TestAgent, TestAgent, TestAgent];
  const targets: RelayTarget[] = [
    target({ name: 'argocd', type: 'argocd', url: argocd.url, secret: 'argo', repos: ['example/*'] }),
    target({ name: 'flux', type: 'flux-github', url: flux.url, secret: 'flux', repos: ['example/*'] }),
    target({ name: 'hmac', type: 'flux-generic-hmac', url: hmac.url, secret: 'hmac', repos: ['example/*'] }),
  ];
  const rig = await startRelay(targets);
  const samples: number[] = [];
  try {
    // Warm up connections and scripts.
    for (let n = 0; n < 10; n++) {
      await rig.enqueue(pushInput({ paths: ['apps/web/overlays/dev/kustomization.yaml'], n }));
      await waitFor(() => agents.every((agent) => agent.requests.length === n + 1), 10_000, 'warm-up delivery');
      await idle(rig.producer.queue('relay'));
    }
    const base = agents.map((agent) => agent.requests.length);
    for (let n = 0; n < LATENCY_PUSHES; n++) {
      const started = performance.now();
      await rig.enqueue(pushInput({ paths: ['apps/web/overlays/prod/kustomization.yaml'], n: n + 100 }));
      await waitFor(
        () => agents.every((agent, i) => agent.requests.length === base[i]! + n + 1),
        10_000,
        `delivery ${n}`,
      );
      for (const agent of agents) samples.push(agent.requests.at(-1)!.at - started);
      await idle(rig.producer.queue('relay'));
    }
    const refused = agents.flatMap((agent) => agent.requests).filter((request) => request.verdict !== 'accepted');
    if (refused.length > 0) throw new Error(`agents refused ${refused.length} requests: ${refused[0]!.verdict}`);
  } finally {
    await rig.close();
    await Promise.all(agents.map((agent) => agent.close()));
  }
  return samples.sort((a, b) => a - b);
}

async function throughput(): Promise<{ deliveries: number; seconds: number }> {
  const agents = await Promise.all(
    Array.from({ length: THROUGHPUT_TARGETS }, (_, i) =>
      i % 2 === 0 ? startArgoCd({ secret: `s${i}` }) : startFluxReceiver({ type: 'github', token: `s${i}` }),
    ),
  );
  const targets = agents.map((agent, i) =>
    target({
      name: `agent-${i}`,
      type: i % 2 === 0 ? 'argocd' : 'flux-github',
      url: agent.url,
      secret: `s${i}`,
      repos: ['example/gitops'],
      paths: ['apps/**'],
    }),
  );
  const rig = await startRelay(targets, { concurrency: CONCURRENCY });
  const total = THROUGHPUT_TARGETS * THROUGHPUT_PUSHES;
  try {
    const started = performance.now();
    await Promise.all(
      Array.from({ length: THROUGHPUT_PUSHES }, (_, n) =>
        rig.enqueue(
          pushInput({
            deliveryId: randomUUID(),
            ref: `refs/heads/branch-${n}`,
            paths: [`apps/app-${n}/overlays/dev/kustomization.yaml`],
            n: n + 1,
          }),
        ),
      ),
    );
    await waitFor(
      () => agents.reduce((sum, agent) => sum + agent.requests.length, 0) >= total,
      120_000,
      'all deliveries',
    );
    const seconds = (Math.max(...agents.map((agent) => agent.requests.at(-1)!.at)) - started) / 1000;
    const refused = agents.flatMap((agent) => agent.requests).filter((request) => request.verdict !== 'accepted');
    if (refused.length > 0) throw new Error(`agents refused ${refused.length} requests: ${refused[0]!.verdict}`);
    return { deliveries: agents.reduce((sum, agent) => sum + agent.requests.length, 0), seconds };
  } finally {
    await rig.close();
    await Promise.all(agents.map((agent) => agent.close()));
  }
}

const samples = await latency();
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
console.log(
  `relay latency, enqueue → agent has the request (${samples.length} deliveries: ${LATENCY_PUSHES} pushes × 3 targets)`,
);
console.log(
  `  p50 ${fmt(percentile(samples, 50))}   p90 ${fmt(percentile(samples, 90))}   p99 ${fmt(percentile(samples, 99))}   max ${fmt(samples.at(-1)!)}`,
);
const { deliveries, seconds } = await throughput();
console.log(
  `relay throughput, ${THROUGHPUT_PUSHES} pushes × ${THROUGHPUT_TARGETS} targets, worker concurrency ${CONCURRENCY}`,
);
console.log(
  `  ${deliveries} deliveries in ${seconds.toFixed(2)} s = ${(deliveries / seconds).toFixed(0)} deliveries/s`,
);
const p50 = percentile(samples, 50);
if (p50 >= 100) {
  console.error(`p50 latency ${fmt(p50)} is over the 100 ms goal`);
  process.exitCode = 1;
}
