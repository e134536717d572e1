/**
 * `npm run bench:chaos [-- --minutes N] [--seed S] [--keep] [--cluster] [--no-secondary]`: the whole
 * product under a steady mix of work while faults are injected, then a check that nothing was lost
 * or done twice.
 * Stops by itself within `--minutes` (default 6). Listens on 127.0.0.1 only. Exit code 0 when no
 * invariant is violated, 1 otherwise. docs/chaos.md explains it and shows the last run.
 *
 * 1. start a private `redis-server --appendonly yes` (own directory, free port) or, with `--cluster`,
 *    a private Redis Cluster (3 masters, 3 replicas, append-only files), the sandbox GitHub in this
 *    process with GitHub's secondary rate limits (`--no-secondary` turns them off), an Argo CD
 *    receiver (the relay target), 2 Escalator web processes and 3 worker processes
 *    (`node --import tsx src/main/index.ts`), and seed 3 GitOps repositories
 * 2. drive: registry events (`POST /api/v1/images`, increasing semver per image), people's own
 *    pull requests (open, push, merge) and merges of promotion PRs
 * 3. meanwhile inject faults in rotation: worker SIGKILL, web restart, Redis restart (on a cluster:
 *    a master SIGKILLed and restarted, a master failover), rate limit
 * 4. stop driving; retry what was refused (as a registry would); wait for every queue to drain
 * 5. check the invariants (bench/chaos/invariants.ts) and print the report
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { SandboxClient, startSimulator } from '@escalator/github-sandbox';
import { clusterSafePrefix, createRedis, waitForRedis } from '../src/queue/connection.js';
import { startArgoCd } from '../test/relay/support/agents.js';
import { startCluster, type LocalCluster } from '../test/support/redis-cluster.js';
import { appEnv, userOctokit } from '../test/support/stack.js';
import { drain } from './chaos/drain.js';
import { EventDriver, seededRandom, UserDriver, WebhookLog } from './chaos/driver.js';
import { runFaults, type FaultRecord, type RedisUnderTest } from './chaos/faults.js';
import { owner, repoFiles, repos } from './chaos/fixture.js';
import { checkInvariants, type Check } from './chaos/invariants.js';
import { Fleet, freePort, killOnExit, PrivateRedis, waitUntil } from './chaos/processes.js';
import { banner, sleep, summarize } from './support/stats.js';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '6' },
    seed: { type: 'string' },
    keep: { type: 'boolean', default: false },
    cluster: { type: 'boolean', default: false },
    secondary: { type: 'boolean', default: true },
  },
  allowNegative: true,
});
const minutes = Number(args.minutes);
if (!Number.isFinite(minutes) || minutes < 2)
  throw new Error('--minutes must be a number of at least 2 (setup, drain and checks need about 2.5 minutes)');
if (args.secondary && minutes < 5)
  throw new Error(
    '--minutes must be at least 5 with secondary limits on (the drain alone takes 2–3 minutes at the write budget); pass --no-secondary for a shorter run',
  );
const seed = args.seed === undefined ? randomBytes(4).readUInt32BE() : Number(args.seed);
const budgetMs = minutes * 60_000;
/**
 * With GitHub's secondary limits on (the default), Escalator runs at its default write budget
 * (72 a minute, 460 an hour, routine work 5/6 of each) and that budget, not the machine, sets the
 * pace: the mix needs more writes than 60 a minute at any event rate that keeps work in flight
 * during the faults, and the drain still has about 120 writes to make (a bump, a promotion and a
 * diff per repository and app) at 60 a minute. So the drive is shorter (more of the budget kept for
 * the drain), faults come every 12 s (the whole rotation fits in it) and events come once a second.
 * With `--no-secondary`, the test suites' unlimited budget and the earlier pace (docs/chaos.md).
 */
const EVENT_EVERY_MS = args.secondary ? 1_000 : 500;
const USER_EVERY_MS = 2_000;
const FAULT_EVERY_MS = args.secondary ? 12_000 : 15_000;
const RECOVER_EVERY_MS = 10_000;
/** Kept at the end of the budget: 20 s for a person's last action, 20 s of retries, the drain, 30 s for checks and shutdown. */
const RESERVE_MS = args.secondary ? 210_000 : 150_000;

const startedAt = Date.now();
const deadline = startedAt + budgetMs;
const runDir = mkdtempSync(join(tmpdir(), 'escalator-chaos-'));
const random = seededRandom(seed);

/** Progress lines, so a slow phase on a loaded machine is visible while it runs. */
function phase(text: string): void {
  console.log(`  [+${((Date.now() - startedAt) / 1000).toFixed(1).padStart(5)} s] ${text}`);
}

banner(
  `bench/chaos.ts — faults under a steady mix, then invariants (seed ${seed}, budget ${minutes} min, ${args.cluster ? 'Redis Cluster' : 'one Redis'}, secondary limits ${args.secondary ? 'on' : 'off'})`,
);
console.log(`  run directory (logs of every process, Redis AOF): ${runDir}`);

const running: { fleet?: Fleet; single?: PrivateRedis; cluster?: LocalCluster } = {};
// If the run itself dies, take down what it started (by pid).
killOnExit(() => [
  ...(running.fleet?.pids() ?? []),
  ...(running.single?.pid ? [running.single.pid] : []),
  ...(running.cluster?.pids() ?? []),
]);

const prefix = `chaos-${randomBytes(4).toString('hex')}`;
let redis: RedisUnderTest;
let redisUrl: string;
if (args.cluster) {
  // A node that misses pings for this long is failed over: long enough that a CPU-starved node on
  // a loaded 2-core machine is not, short enough that a killed master's slots come back in seconds.
  const cluster = await startCluster({ dir: join(runDir, 'redis'), appendonly: true, nodeTimeoutMs: 3_000 });
  running.cluster = cluster;
  redisUrl = cluster.url;
  // Every key of Escalator shares the slot of its hash-tagged prefix (src/queue/connection.ts).
  redis = { kind: 'cluster', cluster, slotKey: clusterSafePrefix(redisUrl, prefix) };
} else {
  const server = new PrivateRedis(join(runDir, 'redis'), await freePort());
  running.single = server;
  await server.start();
  redisUrl = server.url;
  redis = { kind: 'single', server };
}
/** The prefix Escalator's keys really have: `{prefix}` on a cluster. */
const keyPrefix = clusterSafePrefix(redisUrl, prefix);
const argocdSecret = randomBytes(16).toString('hex');
const receiver = await startArgoCd({ secret: argocdSecret });
const sim = await startSimulator({ secondaryLimits: args.secondary });
const webhooks = new WebhookLog(sim);
// GitHub API answers the rate-limit switch gave to Escalator (installation tokens), to prove the fault bit.
const rateLimited = { escalator: 0, others: 0 };
// When Escalator wrote to GitHub (content-creating requests, as the secondary limits count them).
const writesAt: number[] = [];
const writesByRoute = new Map<string, number>();
sim.onExchange((exchange) => {
  if (
    /^(token|Bearer) ghs_/.test(exchange.requestHeaders.authorization ?? '') &&
    ((exchange.surface === 'api' && exchange.method !== 'GET' && exchange.method !== 'HEAD') ||
      (exchange.surface === 'graphql' &&
        /^\s*mutation\b/.test(String((exchange.requestBody as { query?: unknown })?.query))))
  ) {
    writesAt.push(Date.now());
    const route = `${exchange.method} ${exchange.path
      .replace(/^\/repos\/[^/]+\/[^/]+/, '/repos/{repo}')
      .replace(/\/[0-9a-f]{40}\b/g, '/{sha}')
      .replace(/\/\d+\b/g, '/{n}')}`;
    writesByRoute.set(route, (writesByRoute.get(route) ?? 0) + 1);
  }
  if (exchange.surface !== 'api' || (exchange.status !== 403 && exchange.status !== 429)) return;
  if (
    exchange.responseHeaders['retry-after'] === undefined &&
    exchange.responseHeaders['x-ratelimit-remaining'] !== '0'
  )
    return;
  if (/^(token|Bearer) ghs_/.test(exchange.requestHeaders.authorization ?? ''))
    rateLimited.escalator++; // an installation token
  else rateLimited.others++;
});
const client = new SandboxClient(sim.url, sim.user.token);
const user = userOctokit(sim);
const ciToken = `ci-${randomBytes(16).toString('hex')}`;
// With the secondary limits on, Escalator's own write budget at its defaults (72 a minute, 460 an
// hour per installation), not the test suites' unlimited one: the run proves it keeps Escalator
// under the limits. Without them, the unlimited one, as before they existed.
const {
  ESCALATOR_GITHUB_WRITES_PER_MINUTE: unlimitedPerMinute,
  ESCALATOR_GITHUB_WRITES_PER_HOUR: unlimitedPerHour,
  ...stackEnv
} = appEnv(sim, redisUrl);
const env: Record<string, string> = {
  ...stackEnv,
  ...(args.secondary
    ? {}
    : { ESCALATOR_GITHUB_WRITES_PER_MINUTE: unlimitedPerMinute, ESCALATOR_GITHUB_WRITES_PER_HOUR: unlimitedPerHour }),
  LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? 'info',
  ESCALATOR_CI_TOKEN: ciToken,
  ESCALATOR_DEBOUNCE_MS: '300',
  ESCALATOR_REDIS_PREFIX: prefix,
  ESCALATOR_LOCK_MS: '10000',
  ESCALATOR_RECOVER_EVERY_MS: String(RECOVER_EVERY_MS),
  ESCALATOR_CACHE_DIR: join(runDir, 'cache'),
  ESCALATOR_RELAY_TARGETS: JSON.stringify([
    {
      name: 'argocd',
      type: 'argocd',
      url: receiver.url,
      secret: { env: 'CHAOS_ARGOCD_SECRET' },
      repos: [`${owner}/*`],
    },
  ]),
  CHAOS_ARGOCD_SECRET: argocdSecret,
};
const fleet = new Fleet(env, runDir);
running.fleet = fleet;
await Promise.all([fleet.startWeb(0), fleet.startWeb(1)]);
sim.setWebhookUrl(`${fleet.webs[0]?.url}/api/github/webhooks`);
for (let i = 0; i < 3; i++) fleet.startWorker();
for (const repo of repos) await client.createRepo({ name: repo, files: repoFiles(repo) });
const probe = createRedis(redisUrl, 'worker');
probe.on('error', () => undefined);
await waitForRedis(probe, redisUrl, 20_000);
await waitUntil(
  async () =>
    (await Promise.all(repos.map((repo) => probe.exists(`${keyPrefix}:index:repo:${owner}/${repo}`)))).every(
      (n) => n === 1,
    ),
  'Escalator to index the seeded repositories',
  120_000,
  250,
);
const setupMs = Date.now() - startedAt;
phase('seeded repositories indexed');
const driveMs = Math.max(30_000, deadline - Date.now() - RESERVE_MS);
console.log(
  `  set up in ${(setupMs / 1000).toFixed(1)} s: ${redis.kind === 'single' ? `redis-server :${redis.server.port} (AOF)` : `Redis Cluster ${redis.cluster.ports.map((port) => `:${port}`).join(' ')} (AOF; Escalator's slot ${keyPrefix})`}, sandbox ${sim.url}, Argo CD receiver ${receiver.url}`,
);
console.log(
  `  webs ${fleet.webs.map((w) => `${w.name} :${w.port}`).join(', ')}; workers ${fleet.workers.map((w) => w.name).join(', ')}; prefix ${keyPrefix}`,
);
console.log(
  `  ${repos.length} repositories × 2 apps (dev from registry, autoMerge; staging from dev); driving for ${(driveMs / 1000).toFixed(0)} s`,
);

// 2 + 3. Drive the mix and inject faults until the drive ends.
const events = new EventDriver(
  fleet.webs.map((web) => web.url),
  ciToken,
  random,
);
const people = new UserDriver(client, webhooks, seededRandom(seed ^ 0x5eed));
const driveStart = Date.now();
const driveEnd = driveStart + driveMs;
const eventLoop = (async () => {
  for (let next = Date.now(); next < driveEnd; next += EVENT_EVERY_MS) {
    await sleep(Math.max(0, next - Date.now()));
    events.sendNext();
  }
})();
const userLoop = (async () => {
  // One action at a time: when the simulator is slow, people act less often (they wait for it).
  while (Date.now() < driveEnd) {
    const next = Date.now() + USER_EVERY_MS;
    await people.step();
    await sleep(Math.max(0, Math.min(next, driveEnd) - Date.now()));
  }
})();
const faultOptions = {
  fleet,
  redis,
  client,
  random: seededRandom(seed ^ 0xfa17),
  redisDownMs: 3_000,
  rateLimitCount: 40,
};
const faults: FaultRecord[] = await runFaults(
  faultOptions,
  { startedAt: driveStart, firstMs: 10_000, everyMs: FAULT_EVERY_MS, until: driveEnd - 25_000 },
  (fault) =>
    phase(
      `${fault.kind}: ${fault.detail} (${(fault.tookMs / 1000).toFixed(1)} s); events accepted ${events.stats.accepted}/${events.stats.sent}`,
    ),
);
// A person's action in flight when the drive ends may take long on a loaded machine: give it 20 s.
const stopped = await Promise.race([
  Promise.all([eventLoop, userLoop]).then(() => true),
  sleep(Math.max(0, driveEnd + 20_000 - Date.now())).then(() => false),
]);
if (!stopped)
  phase(
    `a person's action is still running after ${((Date.now() - (people.stats.current?.since ?? Date.now())) / 1000).toFixed(0)} s: ${people.stats.current?.action}; going on without it`,
  );

phase(`drive over: ${faults.length} faults, ${events.pending} events still being retried`);
// 4. Retry what is still refused for a little while, make sure everything runs, then drain.
await events.settle(Date.now() + 20_000);
await client.setRateLimit({ count: 0 });
if (redis.kind === 'single' && !redis.server.up) await redis.server.start();
while (fleet.workers.length < 3) fleet.startWorker();
const drainTimeoutMs = Math.max(20_000, deadline - Date.now() - 30_000);
phase('draining');
const drained = await drain({
  redis: probe,
  prefix: keyPrefix,
  webhooks,
  idle: () => sim.context.webhooks.idle(),
  recoverEveryMs: RECOVER_EVERY_MS,
  timeoutMs: drainTimeoutMs,
  origin: driveStart,
});

// 5. Invariants.
phase(`drained: ${drained.drained} after ${(drained.tookMs / 1000).toFixed(1)} s; checking invariants`);
const checks: Check[] = await checkInvariants({
  user,
  acceptedVersion: events.acceptedVersion,
  mergedNotes: people.merged,
  webhooks,
  receiver,
});
checks.push({
  name: 'every GitHub webhook reached Escalator (failed deliveries recovered by redelivery)',
  checked: webhooks.attempts.filter((a) => !a.redelivery).length,
  violations: drained.undeliveredDetail.map((line) => `never accepted: ${line}`),
  notes: [],
});
if (!drained.drained)
  checks.unshift({
    name: 'queues drained',
    checked: 1,
    violations: [`not drained after ${(drained.tookMs / 1000).toFixed(0)} s: ${JSON.stringify(drained.busy)}`],
    notes: [],
  });
if (events.stats.refused.length > 0)
  checks.unshift({
    name: 'no valid event refused',
    checked: events.stats.sent,
    violations: events.stats.refused,
    notes: [],
  });
if (events.stats.gaveUp.length > 0)
  checks.unshift({
    name: 'every event accepted in the end',
    checked: events.stats.sent,
    violations: events.stats.gaveUp.map((reference) => `never accepted: ${reference}`),
    notes: [],
  });
const failedJobs = Object.values(drained.failed).reduce((sum, count) => sum + count, 0);
checks.push({
  name: 'no job failed for good (every one finished within its attempts)',
  checked: 1,
  violations:
    failedJobs > 0
      ? drained.failedReasons.length > 0
        ? drained.failedReasons
        : [`${failedJobs} failed jobs: ${JSON.stringify(drained.failed)}`]
      : [],
  notes: [],
});
const rateLimitFaults = faults.filter((fault) => fault.kind === 'rate limit').length;
checks.push({
  name: 'the rate-limit switch answered Escalator rate-limited, and Escalator waited it out',
  checked: rateLimitFaults,
  violations:
    rateLimitFaults > 0 && rateLimited.escalator === 0
      ? ['no rate-limited answer reached Escalator: the fault did not bite']
      : [],
  notes: [`${rateLimited.escalator} rate-limited answers to Escalator, ${rateLimited.others} to the bench's people`],
});

if (redis.kind === 'cluster') {
  const missing = (['master SIGKILL', 'master failover'] as const).filter(
    (kind) => !faults.some((fault) => fault.kind === kind),
  );
  checks.push({
    name: 'the Redis Cluster faults happened (a master SIGKILLed and back as a replica, a master failover)',
    checked: faults.filter((fault) => fault.kind.startsWith('master ')).length,
    violations: missing.map(
      (kind) =>
        `no ${kind} in this run: the drive (${(driveMs / 1000).toFixed(0)} s after a setup of ${(setupMs / 1000).toFixed(0)} s) was too short; give it more --minutes`,
    ),
    notes: [],
  });
}
const secondaryRefused = sim.secondaryRefused();
checks.push({
  name: "Escalator drew no answer of GitHub's secondary limits (its write budget kept it under them)",
  checked: args.secondary ? 1 : 0,
  violations: secondaryRefused > 0 ? [`${secondaryRefused} requests refused by the simulator's secondary limits`] : [],
  notes: [
    args.secondary
      ? `${secondaryRefused} secondary-limit answers drawn (80 writes a minute, 500 an hour, 100 concurrent per installation; the rate-limit switch's answers are not counted here)`
      : 'secondary limits off (--no-secondary)',
  ],
});

phase('checked');
// Report.
const violations = checks.reduce((sum, check) => sum + check.violations.length, 0);
const retried = summarize(events.stats.retriedForMs);
const byKind = new Map<string, number>();
for (const fault of faults) byKind.set(fault.kind, (byKind.get(fault.kind) ?? 0) + 1);
console.log('');
console.log('events (POST /api/v1/images)');
console.log(
  `  sent ${events.stats.sent}, accepted ${events.stats.accepted}, gave up ${events.stats.gaveUp.length}, refused ${events.stats.refused.length}`,
);
console.log(
  `  answered 503 (Redis down) ${events.stats.unavailable} times, no answer (web restarting) ${events.stats.connectionErrors} times; all retried`,
);
if (events.stats.retriedForMs.length > 0)
  console.log(
    `  ${events.stats.retriedForMs.length} events needed retries: accepted after p50 ${(retried.p50 / 1000).toFixed(1)} s, max ${(retried.max / 1000).toFixed(1)} s`,
  );
console.log(
  `  highest tag accepted per image: ${[...events.acceptedVersion].map(([image, v]) => `${image.replace('ghcr.io/chaos/', '')} 1.${v}.0`).join(', ')}`,
);
console.log('people');
console.log(
  `  own PRs opened ${people.stats.opened}, pushes to them ${people.stats.pushed}, merged ${people.stats.merged}; promotion PRs merged ${people.stats.promotionsMerged} (${people.stats.promotionsRaced} merges refused: head moved or PR closed)`,
);
if (people.stats.slow.length > 0)
  console.log(
    `  slow actions (> 5 s): ${people.stats.slow.map((a) => `${a.action} ${(a.ms / 1000).toFixed(1)} s`).join(', ')}`,
  );
if (people.stats.errors.length > 0)
  console.log(
    `  control API errors ${people.stats.errors.length}: ${[...new Set(people.stats.errors)].slice(0, 3).join(' | ')}`,
  );
console.log(
  `webhooks: ${webhooks.attempts.filter((a) => !a.redelivery).length} sent, ${webhooks.attempts.filter((a) => !a.ok).length} attempts failed, ${webhooks.attempts.filter((a) => a.redelivery).length} redelivered by Escalator's recovery`,
);
if (Object.keys(drained.undelivered).length > 0)
  console.log(`  never delivered: ${JSON.stringify(drained.undelivered)}`);
let peakWrites = 0;
for (let from = 0, to = 0; to < writesAt.length; to++) {
  while ((writesAt[to] as number) - (writesAt[from] as number) >= 60_000) from++;
  peakWrites = Math.max(peakWrites, to - from + 1);
}
const budgetDelays = readdirSync(runDir)
  .filter((name) => name.endsWith('.log') && !name.startsWith('redis'))
  .reduce(
    (sum, name) =>
      sum +
      readFileSync(join(runDir, name), 'utf8')
        .split('\n')
        .filter((line) => line.includes('Job delayed until the GitHub rate limit resets')).length,
    0,
  );
console.log(
  `GitHub writes by Escalator: ${writesAt.length}, at most ${peakWrites} in any 60 s (its budget: ${env.ESCALATOR_GITHUB_WRITES_PER_MINUTE ?? process.env.ESCALATOR_GITHUB_WRITES_PER_MINUTE ?? 72} a minute, routine work 5/6 of it; GitHub's secondary limit 80); jobs delayed ${budgetDelays} times by a spent budget or the rate-limit switch`,
);
console.log(
  `  by route: ${[...writesByRoute]
    .sort((a, b) => b[1] - a[1])
    .map(([route, n]) => `${route} ${n}`)
    .join(', ')}`,
);
console.log(`faults injected: ${faults.length} (${[...byKind].map(([kind, n]) => `${kind} ×${n}`).join(', ')})`);
for (const fault of faults)
  console.log(
    `  +${(fault.at / 1000).toFixed(0).padStart(4)} s  ${fault.kind.padEnd(22)} ${fault.detail} (${(fault.tookMs / 1000).toFixed(1)} s)`,
  );
console.log(
  `drain: ${drained.drained ? 'every queue empty' : 'NOT drained'} after ${(drained.tookMs / 1000).toFixed(1)} s; failed jobs ${JSON.stringify(drained.failed)}`,
);
for (const line of drained.timeline) console.log(`  ${line}`);
for (const reason of drained.failedReasons.slice(0, 6)) console.log(`  failed: ${reason}`);
console.log('invariants');
for (const check of checks) {
  console.log(
    `  ${check.violations.length === 0 ? 'ok  ' : 'FAIL'} ${check.name} — ${check.checked} checked, ${check.violations.length} violations`,
  );
  for (const note of check.notes) console.log(`         ${note}`);
  for (const violation of check.violations.slice(0, 10)) console.log(`         ✗ ${violation}`);
  if (check.violations.length > 10) console.log(`         … and ${check.violations.length - 10} more`);
}
console.log(
  `violations: ${violations}   duration ${((Date.now() - startedAt) / 1000).toFixed(0)} s (setup ${(setupMs / 1000).toFixed(0)} s, drive ${(driveMs / 1000).toFixed(0)} s, drain ${(drained.tookMs / 1000).toFixed(0)} s)`,
);

// Shut down what was started; keep the logs when something went wrong (or with --keep).
await fleet.stopAll();
await probe.quit().catch(() => probe.disconnect());
if (redis.kind === 'single') await redis.server.stop();
else await redis.cluster.stop();
webhooks.close();
await sim.close();
await receiver.close();
if (violations === 0 && !args.keep) rmSync(runDir, { recursive: true, force: true });
else console.log(`logs kept in ${runDir}`);
process.exitCode = violations === 0 ? 0 : 1;
