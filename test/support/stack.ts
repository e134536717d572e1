/**
 * The whole product on one machine, for the tests and the benches alike: the sandbox GitHub
 * (`@escalator/github-sandbox`), Escalator pointed at it, and real Redis under a random key prefix.
 * - `startStack`: the simulator and Escalator (web and workers, `startEscalator`) in this process
 * - `appEnv` and `spawnEscalator`: Escalator as OS processes of its own, for the runs that kill
 *   them for real (test/e2e/faults.test.ts, scale-out.test.ts, bench/chaos.ts, bench/load/stack.ts)
 * The benches add their own measurements on top (bench/support/stack.ts, bench/load/stack.ts).
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { SandboxClient, type Simulator, startSimulator } from '@escalator/github-sandbox';
import { Octokit } from '@octokit/rest';
import { Queue, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { createLogger, type Logger } from '../../src/observability/logger.js';
import { startEscalator, type RunningEscalator, type StartOptions } from '../../src/main/server.js';
import { testDelays } from './delays.js';
import { redisUrl } from './redis.js';

export { redisUrl, testDelays };

/** The project root: where Escalator processes run `src/main/index.ts`. */
export const root = resolve(import.meta.dirname, '../..');

/** How Escalator reaches the simulator: the App's credentials there, its API, and Redis. Listens on 127.0.0.1. */
export function appEnv(sim: Simulator, redis: string): Record<string, string> {
  return {
    APP_ID: String(sim.app.id),
    PRIVATE_KEY: sim.app.privateKey,
    WEBHOOK_SECRET: sim.app.webhookSecret,
    GITHUB_API_URL: sim.apiUrl,
    REDIS_URL: redis,
    HOST: '127.0.0.1',
    // The sandbox enforces GitHub's secondary limits only when asked (benches that measure them
    // turn both on), and a test suite writes far faster than 80 a minute into one installation:
    // the budget under them is proven on its own (test/adapters/write-budget.test.ts).
    ESCALATOR_GITHUB_WRITES_PER_MINUTE: '10000',
    ESCALATOR_GITHUB_WRITES_PER_HOUR: '100000',
  };
}

/** An Octokit acting as the simulator's user; quiet, since tests provoke 4xx on purpose. */
export function userOctokit(sim: Simulator): Octokit {
  return new Octokit({
    baseUrl: sim.apiUrl,
    auth: sim.user.token,
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
  });
}

/**
 * Escalator in an OS process of its own (`ESCALATOR_ROLE=role`, production mode), so it can be
 * killed for real. `node --import tsx src/main/index.ts`, not the tsx CLI: the CLI runs the script
 * in a child process of its own, and a SIGKILL to the CLI's pid would leave Escalator running.
 */
export function spawnEscalator(
  role: 'web' | 'worker',
  env: Record<string, string>,
  options: { port?: number; stdio?: StdioOptions } = {},
): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/main/index.ts'], {
    cwd: root,
    env: {
      ...process.env,
      ...env,
      ESCALATOR_ROLE: role,
      ...(options.port === undefined ? {} : { PORT: String(options.port) }),
      NODE_ENV: 'production',
    },
    stdio: options.stdio ?? 'ignore',
  });
}

/** The whole product against the sandbox GitHub: simulator, Escalator web + workers, real Redis. */
export interface Stack {
  sim: Simulator;
  client: SandboxClient;
  app: RunningEscalator;
  prefix: string;
  registryToken: string;
  ciToken: string;
  /** Every request Escalator made to GitHub, in order. */
  calls: Array<{ route: string; status: number; durationMs: number; at: number }>;
  /** An Octokit acting as the sandbox user (reads what GitHub holds). */
  user: Octokit;
  close(): Promise<void>;
}

export interface StackOptions {
  /** Start of the random Redis key prefix, `<name>-1a2b3c4d`; default `e2e`. */
  name?: string;
  /** Default `redisUrl` (REDIS_URL, or 127.0.0.1:6379). */
  redisUrl?: string;
  /** Escalator's log level; default E2E_LOG_LEVEL, else silent. */
  logLevel?: string;
  /** Escalator's logger instead of one at `logLevel` (a test that reads what was logged). */
  log?: Logger;
  /** Also told of every request Escalator makes to GitHub, synchronously (inside the request's async call chain). */
  onGitHubRequest?: StartOptions['onGitHubRequest'];
  /** The jobs' clock (windows, freezes, soaks read it); default the system's. */
  now?: StartOptions['now'];
}

/**
 * Starts the simulator and Escalator (every role, in this process) on real Redis under a random
 * prefix, with a registry and a CI token and the short delays of `testDelays`; `env` goes over
 * those (a key set to undefined leaves the product's default). `close()` stops both and deletes the prefix's keys.
 */
export async function startStack(
  env: Record<string, string | undefined> = {},
  options: StackOptions = {},
): Promise<Stack> {
  const sim = await startSimulator();
  const redis = options.redisUrl ?? redisUrl;
  const prefix = `${options.name ?? 'e2e'}-${randomUUID().slice(0, 8)}`;
  const registryToken = `registry-${randomUUID()}`;
  const ciToken = `ci-${randomUUID()}`;
  const level = options.logLevel ?? process.env.E2E_LOG_LEVEL ?? 'silent';
  const calls: Stack['calls'] = [];
  const app = await startEscalator(
    {
      ...appEnv(sim, redis),
      PORT: '0',
      LOG_LEVEL: level,
      ESCALATOR_REGISTRY_TOKEN: registryToken,
      ESCALATOR_CI_TOKEN: ciToken,
      ...testDelays,
      ...env,
    },
    {
      prefix,
      log: options.log ?? createLogger({ level }),
      ...(options.now ? { now: options.now } : {}),
      onGitHubRequest: (info) => {
        calls.push({ route: info.route, status: info.status, durationMs: Math.round(info.durationMs), at: Date.now() });
        options.onGitHubRequest?.(info);
      },
    },
  );
  sim.setWebhookUrl(`${app.url}/api/github/webhooks`);
  return {
    sim,
    client: new SandboxClient(sim.url, sim.user.token),
    app,
    prefix,
    registryToken,
    ciToken,
    calls,
    user: userOctokit(sim),
    async close() {
      await app.close();
      await sim.close();
      // A Redis Cluster is the test's own, thrown away whole (test/support/redis-cluster.ts).
      if (redis.startsWith('redis+cluster://') || redis.startsWith('rediss+cluster://')) return;
      const connection = new Redis(redis);
      await deleteKeys(connection, `${prefix}:*`);
      await connection.quit();
    },
  };
}

/** Delete every key matching `pattern` (SCAN, not KEYS). */
export async function deleteKeys(redis: Redis, pattern: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.del(...keys);
  } while (cursor !== '0');
  return deleted;
}

/** Poll until `check` returns a value (not undefined), or fail with what was last seen. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  options: { timeoutMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 45_000);
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${options.what ?? 'a condition'}${last ? `: ${(last as Error).message}` : ''}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function postImage(stack: Stack, image: string): Promise<Response> {
  return fetch(`${stack.app.url}/api/v1/images`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.ciToken}` },
    body: JSON.stringify({ image }),
  });
}

export async function readFile(stack: Stack, owner: string, repo: string, path: string, ref: string): Promise<string> {
  const { data } = await stack.user.rest.repos.getContent({ owner, repo, path, ref });
  if (Array.isArray(data) || data.type !== 'file') throw new Error(`${path} is not a file`);
  return Buffer.from(data.content, 'base64').toString('utf8');
}

/**
 * Wait until Escalator has indexed a repository (at a given commit, when `sha` is set) and the
 * index job that wrote it has finished: the index is saved before the job records each app's
 * version history and plans promotions (src/jobs/subscription-index.ts), so a test acting on the
 * first sight of the index would race the rest of that job.
 */
export async function waitIndexed(stack: Stack, owner: string, repo: string, sha?: string): Promise<void> {
  const redis = new Redis(redisUrl);
  const index = new Queue('index', { connection: redis, prefix: stack.prefix });
  const same = (a: unknown, b: string) => typeof a === 'string' && a.toLowerCase() === b.toLowerCase();
  try {
    await eventually(
      async () => {
        const text = await redis.get(`${stack.prefix}:index:repo:${owner}/${repo}`);
        if (!text) return undefined;
        if (sha && (JSON.parse(text) as { sha: string }).sha !== sha) return undefined;
        // A resync indexes every repository in one job; an index job names its repository.
        const running = (await index.getActive()).some(
          (job) => !('owner' in (job.data as object)) || (same(job.data.owner, owner) && same(job.data.repo, repo)),
        );
        return running ? undefined : true;
      },
      { what: `${owner}/${repo} to be indexed${sha ? ` at ${sha.slice(0, 7)}` : ''}` },
    );
  } finally {
    await index.close();
    await redis.quit();
  }
}

/**
 * Wait until a delayed job of `queue` matches `match` (a re-check the product scheduled), then
 * run it now (`job.promote()`), after `before` (a test moves the jobs' clock to the job's time
 * there), instead of waiting for it in real time. Returns the job as it was found.
 */
export async function runDelayedNow(
  stack: Stack,
  queue: string,
  match: (job: Job) => boolean,
  options: { what: string; before?: (job: Job) => void },
): Promise<Job> {
  const redis = new Redis(redisUrl);
  const jobs = new Queue(queue, { connection: redis, prefix: stack.prefix });
  try {
    const job = await eventually(async () => (await jobs.getDelayed()).find(match), { what: options.what });
    options.before?.(job);
    await job.promote();
    return job;
  } finally {
    await jobs.close();
    await redis.quit();
  }
}
