/**
 * The whole product on one machine for the end-to-end benches: the stack the tests use
 * (test/support/stack.ts: the sandbox GitHub simulator, Escalator web + workers, real Redis under a
 * random key prefix), plus what the benches measure with:
 * - every GitHub call carries its start and end time, so calls can be attributed to the BullMQ job
 *   whose active window contains them (bump, promote, index, image);
 * - `waitForPull` notices a pull request the moment the simulator handles the write that
 *   completed it (no fixed polling interval in the measured time), then confirms it by listing.
 */
import type { Octokit } from '@octokit/rest';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { RepoState } from '../../src/adapters/store/repo-state.js';
import { type RepoIndex } from '../../src/adapters/store/subscriptions.js';
import type { QueueName } from '../../src/queue/names.js';
import { startStack, type Stack } from '../../test/support/stack.js';
import { sleep } from './stats.js';

export { deleteKeys } from '../../test/support/stack.js';

/**
 * The Redis the benches use: REDIS_URL, or 127.0.0.1:6379. A bench sends load, so it refuses a
 * Redis anywhere but this machine's loopback, whatever the environment it was started in says.
 */
export const redisUrl = loopbackOnly(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

function loopbackOnly(url: string): string {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    throw new Error(
      `REDIS_URL is not a URL (${url.replace(/\/\/[^@]*@/, '//…@')}); the benches need redis://127.0.0.1:<port>`,
    );
  }
  if (!/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(host)) {
    throw new Error(
      `REDIS_URL points at ${host}; the benches send load only to this machine's loopback. Unset REDIS_URL or point it at redis://127.0.0.1:<port>`,
    );
  }
  return url;
}

/** One HTTP request Escalator made to GitHub. Times are `Date.now()` milliseconds. */
export interface GitHubCall {
  route: string;
  status: number;
  startedAt: number;
  endedAt: number;
  /** The job that made it (see `callerJob`). */
  job: CallerJob;
}

export type CallerJob =
  | 'image'
  | 'bump'
  | 'promote'
  | 'landing'
  | 'diff'
  | 'index'
  | 'command'
  | 'recover'
  | 'relay'
  | 'health'
  | 'dashboard'
  | 'other';

/**
 * The queues whose jobs talk to GitHub or lead to jobs that do (health enqueues promotions, a
 * landing records configuration changes and enqueues their promotions; recover runs on a schedule).
 */
export const workQueues: QueueName[] = [
  'image',
  'bump',
  'promote',
  'landing',
  'index',
  'command',
  'diff',
  'relay',
  'health',
  'dashboard',
];

/**
 * Job folders (`src/jobs/<kind>/`, one per kind since the job table) in the order that decides a
 * call's job when several are on the stack. A job folder imports no other job folder, so only one
 * is: src/jobs/shared/ modules are attributed to the job whose processor called them.
 */
const jobFiles: Array<[CallerJob, RegExp]> = (
  [
    'bump',
    'promote',
    'landing',
    'diff',
    'index',
    'command',
    'recover',
    'relay',
    'health',
    'dashboard',
    'image',
  ] as const
).map((job) => [job, new RegExp(`src/jobs/${job}/`)]);

/**
 * Which job is making the GitHub call being reported: Node's async stack traces follow the
 * `await` chain from Octokit's request hook back to the job's processor, so the job file is on
 * the stack. No product code is changed to tell calls apart.
 */
function callerJob(): CallerJob {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 200;
  const trace = new Error().stack ?? '';
  Error.stackTraceLimit = limit;
  return jobFiles.find(([, pattern]) => pattern.test(trace))?.[0] ?? 'other';
}

/** Paginated calls report a full URL; make them look like the others: `GET /repos/{owner}/{repo}/issues/{n}/comments`. */
export function normalizeRoute(route: string): string {
  const match = /^(\S+) https?:\/\/[^/]+(?:\/api\/v3)?([^?]*)/.exec(route);
  if (!match) return route;
  const path = (match[2] ?? '')
    .replace(/^\/repos\/[^/]+\/[^/]+/, '/repos/{owner}/{repo}')
    .replace(/\/\d+(?=\/|$)/g, '/{n}');
  return `${match[1]} ${path}`;
}

export interface BenchStack extends Omit<Stack, 'calls'> {
  calls: GitHubCall[];
  redis: Redis;
  store: RepoState;
  queue(name: QueueName): Queue;
}

export async function startBenchStack(env: Record<string, string> = {}): Promise<BenchStack> {
  const calls: GitHubCall[] = [];
  const stack = await startStack(
    // The benches measure with the product's own debounce, not the tests' shorter one.
    { ESCALATOR_DEBOUNCE_MS: undefined, ...env },
    {
      name: 'bench',
      redisUrl,
      logLevel: process.env.BENCH_LOG_LEVEL ?? 'silent',
      onGitHubRequest: (info) => {
        const endedAt = Date.now();
        calls.push({
          route: normalizeRoute(info.route),
          status: info.status,
          startedAt: endedAt - info.durationMs,
          endedAt,
          job: callerJob(),
        });
      },
    },
  );
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queues = new Map<QueueName, Queue>();
  return {
    ...stack,
    calls,
    redis,
    store: new RepoState(redis, stack.prefix),
    queue(name) {
      let queue = queues.get(name);
      if (!queue) {
        queue = new Queue(name, { connection: redis, prefix: stack.prefix });
        queues.set(name, queue);
      }
      return queue;
    },
    async close() {
      await stack.close();
      await Promise.all([...queues.values()].map((queue) => queue.close()));
      await redis.quit();
    },
  };
}

/** POST /api/v1/images, the CI API. */
export async function postImage(stack: BenchStack, image: string): Promise<number> {
  const response = await fetch(`${stack.app.url}/api/v1/images`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.ciToken}` },
    body: JSON.stringify({ image }),
  });
  await response.arrayBuffer();
  if (response.status !== 202) throw new Error(`POST /api/v1/images answered ${response.status} for ${image}`);
  return response.status;
}

/**
 * Wait until no work queue has a job waiting, delayed or running, and Escalator made no GitHub
 * call for `quietMs`. Used between samples so one sample's work never leaks into the next.
 */
export async function waitIdle(
  stack: BenchStack,
  options: { quietMs?: number; timeoutMs?: number } = {},
): Promise<void> {
  const quietMs = options.quietMs ?? 300;
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    const counts = await Promise.all(
      workQueues.map((name) =>
        stack.queue(name).getJobCounts('active', 'waiting', 'delayed', 'prioritized', 'waiting-children'),
      ),
    );
    const busy = counts.some((c) => Object.values(c).some((n) => n > 0));
    const lastCall = stack.calls.at(-1)?.endedAt ?? 0;
    if (!busy && Date.now() - lastCall >= quietMs) return;
    if (Date.now() > deadline)
      throw new Error(`Escalator did not go idle within ${options.timeoutMs ?? 60_000} ms: ${JSON.stringify(counts)}`);
    await sleep(25);
  }
}

/** Wait until the subscription index holds the repository with `files` indexed files. */
export async function waitIndexed(
  stack: BenchStack,
  owner: string,
  repo: string,
  files: number,
  timeoutMs = 60_000,
): Promise<RepoIndex> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const index = await stack.store.subscriptions.loadRepo(owner, repo);
    if (index && index.files.length >= files) return index;
    if (Date.now() > deadline)
      throw new Error(
        `${owner}/${repo} was not indexed with ${files} files within ${timeoutMs} ms (has ${index?.files.length ?? 'no entry'})`,
      );
    await sleep(50);
  }
}

type PullList = Awaited<ReturnType<Octokit['rest']['pulls']['list']>>['data'];

/**
 * Resolve when an open pull request on `branch` satisfies `ready`. The check runs right after
 * every write the simulator handles for that repository (and every 250 ms as a fallback); the time
 * returned is when the write that made it ready was handled, `Date.now()` milliseconds.
 */
export function waitForPull(
  stack: BenchStack,
  input: {
    owner: string;
    repo: string;
    branch: string;
    ready: (pull: PullList[number]) => boolean;
    timeoutMs?: number;
  },
): Promise<{ pull: PullList[number]; at: number }> {
  const prefix = `/repos/${input.owner}/${input.repo}/`.toLowerCase();
  return new Promise((resolve, reject) => {
    let done = false;
    let checking = false;
    let again: number | undefined;
    const finish = (error: Error | null, value?: { pull: PullList[number]; at: number }) => {
      if (done) return;
      done = true;
      unsubscribe();
      clearInterval(poll);
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(value!);
    };
    const check = async (at: number) => {
      if (checking) {
        again = Math.max(again ?? 0, at);
        return;
      }
      checking = true;
      try {
        const { data } = await stack.user.rest.pulls.list({
          owner: input.owner,
          repo: input.repo,
          state: 'open',
          head: `${input.owner}:${input.branch}`,
        });
        const pull = data.find(input.ready);
        if (pull) finish(null, { pull, at });
      } catch {
        // A transient failure of the read; the next write or poll checks again.
      } finally {
        checking = false;
        if (again !== undefined && !done) {
          const next = again;
          again = undefined;
          void check(next);
        }
      }
    };
    const unsubscribe = stack.sim.onExchange((exchange) => {
      if (exchange.surface !== 'api' || exchange.method === 'GET' || exchange.status >= 300) return;
      if (!exchange.path.toLowerCase().startsWith(prefix)) return;
      void check(Date.now());
    });
    const poll = setInterval(() => void check(Date.now()), 250);
    const timer = setTimeout(
      () =>
        finish(
          new Error(`no open pull request on ${input.branch} became ready within ${input.timeoutMs ?? 60_000} ms`),
        ),
      input.timeoutMs ?? 60_000,
    );
    void check(Date.now());
  });
}

/** Calls grouped by the job that made them. */
export function byJob(calls: GitHubCall[]): Map<CallerJob, GitHubCall[]> {
  const groups = new Map<CallerJob, GitHubCall[]>();
  for (const call of calls) groups.set(call.job, [...(groups.get(call.job) ?? []), call]);
  return groups;
}

export function callsBetween(stack: BenchStack, from: number, to: number): GitHubCall[] {
  return stack.calls.filter((call) => call.startedAt >= from && call.startedAt <= to);
}

/** The files of a GitOps repository whose apps (by global index) each use their own image, in the given environments. */
export function gitopsFiles(input: {
  apps: number[];
  environments: string[];
  config: string;
  image: (app: number) => string;
  /**
   * Each overlay also patches its Deployment's environment from `env.yaml` (`envPatch`, LOG_LEVEL
   * info): the file a person changes for a configuration promotion.
   */
  envPatch?: boolean;
}): Record<string, string> {
  const files: Record<string, string> = { '.github/escalator.yml': input.config };
  for (const i of input.apps) {
    const app = appName(i);
    files[`apps/${app}/base/deployment.yaml`] =
      `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ${app}}\nspec:\n  template:\n    spec:\n      containers:\n        - name: ${app}\n          image: ${input.image(i)}:1.0.0\n`;
    for (const environment of input.environments) {
      const overlay = `apps/${app}/overlays/${environment}`;
      files[`${overlay}/kustomization.yaml`] =
        `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ../../base\n${input.envPatch ? 'patches:\n  - path: env.yaml\n' : ''}images:\n  - name: ${input.image(i)} # bumped by Escalator\n    newTag: 1.0.0\n`;
      if (input.envPatch) files[`${overlay}/env.yaml`] = envPatch(app, 'info');
    }
  }
  return files;
}

/** A strategic-merge patch setting one environment variable of the app's container (`gitopsFiles` with `envPatch`). */
export function envPatch(app: string, logLevel: string): string {
  return `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${app}\nspec:\n  template:\n    spec:\n      containers:\n        - name: ${app}\n          env:\n            - name: LOG_LEVEL\n              value: ${logLevel}\n`;
}

export function appName(index: number): string {
  return `app-${String(index).padStart(2, '0')}`;
}

/**
 * How long at least one GitHub call was in flight between `from` and `to` (union of the calls'
 * intervals): the part of an end-to-end time spent waiting on GitHub (here, the simulator).
 */
export function githubBusyMs(calls: GitHubCall[], from: number, to: number): number {
  const intervals = calls
    .map((call) => [Math.max(from, call.startedAt), Math.min(to, call.endedAt)] as const)
    .filter(([start, end]) => end > start)
    .sort((a, b) => a[0] - b[0]);
  let busy = 0;
  let cursor = -Infinity;
  for (const [start, end] of intervals) {
    if (end <= cursor) continue;
    busy += end - Math.max(start, cursor);
    cursor = end;
  }
  return busy;
}

/** Count routes: "GET /repos/{owner}/{repo}/contents/{path} ×3". */
export function routeSummary(calls: GitHubCall[]): string[] {
  const counts = new Map<string, number>();
  for (const call of calls) counts.set(call.route, (counts.get(call.route) ?? 0) + 1);
  return [...counts].map(([route, count]) => (count > 1 ? `${route} ×${count}` : route));
}
