/**
 * `npx tsx bench/intake.ts`: how many signed GitHub webhook deliveries per second Escalator's web
 * role takes, against a bare Probot app that verifies and drops the same payloads.
 *
 * 1. start two receivers, each in its own process (bench/support/intake-server.ts): Escalator's web
 *    role (`ESCALATOR_ROLE=web`, real Redis) and a bare Probot app (`new Probot` +
 *    `createNodeMiddleware` on node:http)
 * 2. with autocannon from this process: the same signed `push` payload (@octokit/webhooks-examples,
 *    to the default branch of a repository nobody indexed, so Escalator enqueues an index job per
 *    delivery), a fresh `X-GitHub-Delivery` per request so deduplication makes nothing free;
 *    INTAKE_CONNECTIONS connections (default 10) for INTAKE_SECONDS (default 10) per run, after a
 *    3 s warm-up each, in the order Probot, Escalator, Escalator, Probot so drift in the machine's
 *    load affects both alike
 * 3. `POST /api/v1/images` (CI API, bearer token, a distinct tag per request): throughput and p99
 * 4. print throughput, p50/p99 latency, the ratio to Probot (target ≥ 0.7) and p99 (target < 25 ms);
 *    count the index jobs in Redis to show every accepted delivery was enqueued
 * Figures only. Keys live under a random prefix and are removed at the end.
 * INTAKE_PROFILE=<dir> writes a V8 CPU profile of each receiver process into <dir>.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, generateKeyPairSync, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { deleteKeys, redisUrl } from './support/stack.js';
import { banner, loadavg, ms, sleep } from './support/stats.js';

const CONNECTIONS = Number(process.env.INTAKE_CONNECTIONS ?? 10);
const SECONDS = Number(process.env.INTAKE_SECONDS ?? 10);
const WARMUP_SECONDS = 3;
const RATIO_TARGET = 0.7;
const P99_TARGET_MS = 25;

interface Run {
  receiver: string;
  rps: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  load: string;
}

const secret = `bench-${randomUUID()}`;
const prefix = `bench-intake-${randomUUID().slice(0, 8)}`;
const ciToken = `ci-${randomUUID()}`;
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();

/** The push example that targets the default branch and carries an installation. */
function pushPayload(): string {
  const require = createRequire(import.meta.url);
  const examples = JSON.parse(
    readFileSync(require.resolve('@octokit/webhooks-examples/api.github.com/index.json'), 'utf8'),
  ) as Array<{ name: string; examples: Array<Record<string, unknown>> }>;
  const push = examples
    .find((group) => group.name === 'push')
    ?.examples.find((example) => {
      const repository = example.repository as { default_branch?: string } | undefined;
      return example.installation && example.ref === `refs/heads/${repository?.default_branch}`;
    });
  if (!push)
    throw new Error('no push example to the default branch with an installation in @octokit/webhooks-examples');
  return JSON.stringify(push);
}

async function startReceiver(kind: 'escalator' | 'probot'): Promise<{ url: string; child: ChildProcess }> {
  // INTAKE_PROFILE=<dir> writes a V8 CPU profile of each receiver there (open it in Chrome DevTools).
  const profile = process.env.INTAKE_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.INTAKE_PROFILE}`] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', 'bench/support/intake-server.ts', kind], {
    env: {
      ...process.env,
      APP_ID: '1',
      PRIVATE_KEY: pem,
      WEBHOOK_SECRET: secret,
      REDIS_URL: redisUrl,
      BENCH_PREFIX: prefix,
      ESCALATOR_CI_TOKEN: ciToken,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.once('line', (line) => resolve((JSON.parse(line) as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`the ${kind} receiver exited with ${code} before listening`)));
  });
  return { url, child };
}

async function stopReceiver(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(10_000)]);
}

function cannon(input: {
  url: string;
  path: string;
  body: string | ((n: number) => string);
  headers: Record<string, string>;
  seconds: number;
  perRequest?: (n: number) => Record<string, string>;
}): Promise<autocannon.Result> {
  let n = 0;
  const fixedBody = typeof input.body === 'string' ? input.body : undefined;
  const makeBody = typeof input.body === 'function' ? input.body : undefined;
  return autocannon({
    url: `${input.url}${input.path}`,
    connections: CONNECTIONS,
    duration: input.seconds,
    requests: [
      {
        method: 'POST',
        path: input.path,
        headers: input.headers,
        ...(fixedBody !== undefined ? { body: fixedBody } : {}),
        setupRequest: (request) => {
          n += 1;
          return {
            ...request,
            headers: { ...request.headers, ...input.perRequest?.(n) },
            ...(makeBody ? { body: makeBody(n) } : {}),
          };
        },
      },
    ],
  });
}

function toRun(receiver: string, result: autocannon.Result, load: string): Run {
  return {
    receiver,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    load,
  };
}

function print(run: Run): void {
  console.log(
    `  ${run.receiver.padEnd(30)} ${run.rps.toFixed(0).padStart(6)} req/s   p50 ${ms(run.p50).padStart(7)}   p99 ${ms(run.p99).padStart(7)}   ${String(run.total).padStart(6)} requests, ${run.non2xx} non-2xx, ${run.errors} errors   load ${run.load}`,
  );
}

banner(
  `bench/intake.ts — signed webhook intake, ${CONNECTIONS} connections, ${SECONDS} s per run (autocannon in this process, each receiver in its own)`,
);
const body = pushPayload();
const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const webhookHeaders = {
  'content-type': 'application/json',
  'x-github-event': 'push',
  'x-hub-signature-256': signature,
  'user-agent': 'GitHub-Hookshot/bench',
};
const delivery = () => ({ 'x-github-delivery': randomUUID() });
const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
const indexQueue = new Queue('index', { connection: redis, prefix });

const escalator = await startReceiver('escalator');
const probot = await startReceiver('probot');
const runs: Run[] = [];
let ci: Run | undefined;
let enqueued = 0;
try {
  // Correctness first: both accept the delivery, and Escalator enqueues one index job for it.
  for (const target of [escalator, probot]) {
    const response = await fetch(`${target.url}/api/github/webhooks`, {
      method: 'POST',
      headers: { ...webhookHeaders, ...delivery() },
      body,
    });
    if (response.status >= 300)
      throw new Error(
        `${target === escalator ? 'Escalator' : 'Probot'} answered ${response.status}: ${await response.text()}`,
      );
  }
  if ((await indexQueue.getJobCounts('waiting')).waiting !== 1)
    throw new Error('Escalator did not enqueue an index job for the push delivery');

  const order: Array<['escalator' | 'probot', { url: string }]> = [
    ['probot', probot],
    ['escalator', escalator],
    ['escalator', escalator],
    ['probot', probot],
  ];
  for (const [kind, target] of order) {
    await cannon({
      url: target.url,
      path: '/api/github/webhooks',
      body,
      headers: webhookHeaders,
      perRequest: delivery,
      seconds: WARMUP_SECONDS,
    });
    const load = loadavg();
    const before = kind === 'escalator' ? ((await indexQueue.getJobCounts('waiting')).waiting ?? 0) : 0;
    const result = await cannon({
      url: target.url,
      path: '/api/github/webhooks',
      body,
      headers: webhookHeaders,
      perRequest: delivery,
      seconds: SECONDS,
    });
    runs.push(toRun(kind === 'escalator' ? 'Escalator web role' : 'bare Probot (verify, drop)', result, load));
    if (kind === 'escalator') enqueued += ((await indexQueue.getJobCounts('waiting')).waiting ?? 0) - before;
  }

  const load = loadavg();
  const result = await cannon({
    url: escalator.url,
    path: '/api/v1/images',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ciToken}` },
    body: (n) => JSON.stringify({ image: `ghcr.io/example/bench:1.0.${n}` }),
    seconds: SECONDS,
  });
  ci = toRun('Escalator POST /api/v1/images', result, load);
} finally {
  await stopReceiver(escalator.child);
  await stopReceiver(probot.child);
  await indexQueue.close();
  await deleteKeys(redis, `${prefix}:*`);
  await redis.quit();
}

console.log('');
console.log('signed GitHub webhook deliveries (push, 7.6 kB, a new delivery id per request)');
for (const run of runs) print(run);
const mean = (receiver: string, field: 'rps' | 'p99' | 'p50') => {
  const chosen = runs.filter((run) => run.receiver.startsWith(receiver));
  return chosen.reduce((sum, run) => sum + run[field], 0) / chosen.length;
};
const ratio = mean('Escalator', 'rps') / mean('bare', 'rps');
const worstP99 = Math.max(...runs.filter((run) => run.receiver.startsWith('Escalator')).map((run) => run.p99));
console.log(
  `  throughput ratio Escalator / Probot (mean of both runs each): ${ratio.toFixed(2)}   (target ≥ ${RATIO_TARGET})`,
);
console.log(
  `  Escalator p99, worse run: ${ms(worstP99)}   (target < ${P99_TARGET_MS} ms; worse run / target ${(worstP99 / P99_TARGET_MS).toFixed(2)})`,
);
const accepted = runs
  .filter((run) => run.receiver.startsWith('Escalator'))
  .reduce((sum, run) => sum + run.total - run.non2xx, 0);
console.log(
  `  index jobs enqueued during the measured Escalator runs: ${enqueued} for ${accepted} deliveries answered 2xx within the runs (requests still in flight when a run ends are enqueued but not counted)`,
);
console.log('');
console.log('registry intake (CI API, a distinct tag per request)');
if (ci) print(ci);
console.log(`done ${new Date().toISOString()}  load average ${loadavg()}`);
