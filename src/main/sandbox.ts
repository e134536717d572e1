/**
 * `npm run sandbox`: the whole product on one machine, with only Redis.
 * 1. parse the options
 * 2. start the simulated GitHub, seed the GitOps repository, start Escalator (@escalator/github-sandbox/launch)
 * 3. start the simulated agent (Argo CD by default) that reports sync and health after each
 *    push; print `SANDBOX_READY {json}`, the next steps, `AGENT_READY {json}` and its controls,
 *    then "Press Ctrl-C"
 * 4. stop everything on Ctrl-C, SIGINT, SIGTERM or SIGHUP (npm forwards SIGINT and SIGTERM: the
 *    script `exec`s this process), when the parent is gone, or when Escalator or a private Redis
 *    exits, and remove this run's Redis keys (each run has its own prefix)
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { renderNextSteps, runSandbox, SandboxStoppedError } from '@escalator/github-sandbox/launch';
import type { Redis } from 'ioredis';
import {
  checkSeededConfig,
  SimulatedAgent,
  withAgentHealth,
  type SeedConfigCheck,
  type SimulatedAgentKind,
} from '@escalator/github-sandbox/agents';
import { configPath, parseDuration, parseRepoConfig, repoConfigProblems } from '../config/repo-config.js';
import { DASHBOARD_TITLE } from '../planners/dashboard.js';
import { agentKey } from '../intake/agent-routes.js';
import { clusterSafePrefix, createRedis, redactUrl, waitForRedis } from '../queue/connection.js';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const usage = `Usage: npm run sandbox -- [options]

  --repo <dir>             folder seeded as example/gitops (default examples/gitops-repo)
  --github-port <port>     port of the simulated GitHub (default: a free port)
  --app-port <port>        port Escalator listens on (default 3000)
  --soak <duration>        every soak of the seeded .github/escalator.yml becomes this (30s, 2m),
                           to watch a soak end; your folder is not changed (default: its own soaks)
  --registry-token <token> token registries send to Escalator (default: random)
  --app-command <command>  how to start Escalator (default: node dist/main/index.js, or the sources via tsx)
  --agent <argocd|flux|none>
                           the simulated agent reporting sync and health a few seconds after each
                           push (default argocd); the seeded .github/escalator.yml gets the matching
                           health: on every environment (your folder is not changed)
`;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

function port(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0 || number > 65535)
    fail(`--${name} must be a port number (0-65535), not "${value}".\n\n${usage}`);
  return number;
}

let values: Record<string, string | boolean | undefined>;
try {
  ({ values } = parseArgs({
    options: {
      repo: { type: 'string' },
      'github-port': { type: 'string' },
      'app-port': { type: 'string' },
      'registry-token': { type: 'string' },
      soak: { type: 'string' },
      'app-command': { type: 'string' },
      agent: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (error) {
  fail(`${(error as Error).message}\n\n${usage}`);
}
if (values.help) {
  process.stdout.write(usage);
  process.exit(0);
}

const str = (key: string) => (typeof values[key] === 'string' ? (values[key] as string) : undefined);
const appCommand = str('app-command')?.split(' ').filter(Boolean);
const soak = str('soak');
if (soak !== undefined) {
  try {
    parseDuration(soak);
  } catch (error) {
    fail(`--soak: ${(error as Error).message}\n\n${usage}`);
  }
}

const agentKind = str('agent') ?? 'argocd';
if (!['argocd', 'flux', 'none'].includes(agentKind))
  fail(`--agent must be argocd, flux or none, not "${agentKind}".\n\n${usage}`);

/**
 * REDIS_URL, when set, must answer now: otherwise Escalator would print half a minute of
 * connection warnings before failing. One clear message instead, at once.
 */
async function checkRedisUrl(url: string | undefined): Promise<void> {
  if (!url) return;
  const redis = createRedis(url, 'producer', { lazyConnect: false, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await waitForRedis(redis, url, 3_000);
  } catch {
    throw new Error(
      [
        `Redis at ${redactUrl(url)} (REDIS_URL) does not answer, so nothing was started.`,
        'Start that Redis, or unset REDIS_URL: the sandbox then uses 127.0.0.1:6379, or starts its own redis-server.',
      ].join('\n'),
    );
  } finally {
    redis.disconnect();
  }
}

/** True when the folder's .github/escalator.yml asks for the dashboard issue (`dashboard: true`). */
function wantsDashboard(dir: string): boolean {
  const path = join(dir, configPath);
  if (!existsSync(path)) return false;
  const parsed = parseRepoConfig(readFileSync(path, 'utf8'), path);
  return parsed.ok && parsed.config.dashboard;
}

/**
 * With `dashboard: true` Escalator opens its dashboard issue when it indexes the repository (wait up
 * to a minute). Issues and pull requests share numbers, and the promotions the first index opens
 * may come before it, so it is found by its title among the repository's issues, not by number.
 * Undefined when it did not come.
 */
async function waitForDashboardIssue(apiUrl: string, repository: string, token: string): Promise<number | undefined> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && !starting.signal.aborted) {
    const issues = await fetch(`${apiUrl}/repos/${repository}/issues?state=all&per_page=100`, {
      headers: { authorization: `token ${token}`, accept: 'application/vnd.github+json' },
    }).then(
      async (response) =>
        response.ok
          ? ((await response.json()) as Array<{ title: string; number: number; pull_request?: unknown }>)
          : [],
      () => [],
    );
    const dashboard = issues.find((issue) => !issue.pull_request && issue.title === DASHBOARD_TITLE);
    if (dashboard) return dashboard.number;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return undefined;
}

/** Removes every key of one sandbox run (its queues, index and leases) from a shared Redis. */
async function forgetRedisKeys(url: string, prefix: string): Promise<void> {
  const redis = createRedis(url, 'worker');
  redis.on('error', () => undefined);
  let removed = 0;
  try {
    await waitForRedis(redis, url);
    const cluster = redis as unknown as { nodes?: (role: 'master') => Redis[] };
    const nodes = typeof cluster.nodes === 'function' ? cluster.nodes('master') : [redis];
    for (const node of nodes) {
      for await (const keys of node.scanStream({ match: `${clusterSafePrefix(url, prefix)}:*`, count: 500 })) {
        if ((keys as string[]).length > 0) removed += await node.unlink(...(keys as string[]));
      }
    }
    process.stderr.write(`Removed this run's ${removed} Redis keys (prefix ${prefix}).\n`);
  } catch (error) {
    // The Redis this run used: REDIS_URL (named, never printed: it may hold a password) or the local one.
    const target = url === process.env.REDIS_URL ? '"$REDIS_URL"' : `'${url}'`;
    process.stderr.write(
      `Could not remove this run's Redis keys (prefix ${prefix}): ${(error as Error).message}. Remove them with: redis-cli -u ${target} --scan --pattern '${prefix}:*' | xargs redis-cli -u ${target} unlink\n`,
    );
  } finally {
    redis.disconnect();
  }
}

// A parent that is gone leaves stdout and stderr as closed pipes: writing to them must never
// stop the clean-up half-way.
process.stdout.on('error', () => undefined);
process.stderr.on('error', () => undefined);

/**
 * Every way of stopping lands here, at any moment: Ctrl-C (SIGINT to the group), SIGINT, SIGTERM
 * or SIGHUP to this process (npm forwards SIGINT and SIGTERM to it: package.json `exec`s it), the
 * parent gone (npm killed, a terminal closed: this process is re-parented), Escalator or a private
 * Redis exiting. Before the sandbox is ready, the start is aborted and stops what it started.
 */
const starting = new AbortController();
let stopRunning: ((code: number) => void) | undefined;
let stopRequested: number | undefined;
function stop(code: number, why?: string): void {
  if (stopRequested !== undefined) return;
  stopRequested = code;
  if (why) process.stderr.write(`${why}\n`);
  if (stopRunning) stopRunning(code);
  else starting.abort();
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stop(0));
const parentPid = process.ppid;
setInterval(() => {
  if (process.ppid !== parentPid) stop(0, 'The process that started the sandbox is gone; stopping the sandbox.');
}, 500).unref();

const repoDir = resolve(str('repo') ?? resolve(root, 'examples/gitops-repo'));
const agentToken = randomBytes(24).toString('hex');
// The simulated agents (dev-only, in the simulator package) check a seeded configuration as `escalator validate-config` does.
const seedConfig: SeedConfigCheck = { path: configPath, problems: repoConfigProblems };
let seeded: ReturnType<typeof withAgentHealth> | null = null;
let sandbox: Awaited<ReturnType<typeof runSandbox>> | undefined;
let agent: SimulatedAgent | undefined;
try {
  await checkRedisUrl(process.env.REDIS_URL);
  // A configuration problem stops here, before anything starts (withAgentHealth checks it too).
  if (agentKind === 'none') checkSeededConfig(repoDir, seedConfig);
  seeded = agentKind === 'none' ? null : withAgentHealth(repoDir, agentKind as SimulatedAgentKind, seedConfig);
  sandbox = await runSandbox({
    repoDir: seeded?.dir ?? repoDir,
    githubPort: port(str('github-port'), 0, 'github-port'),
    appPort: port(str('app-port'), 3000, 'app-port'),
    root,
    env: agentKind === 'none' ? process.env : { ...process.env, ESCALATOR_AGENT_TOKEN: agentToken },
    ...(str('registry-token') ? { registryToken: str('registry-token') } : {}),
    ...(appCommand ? { appCommand } : {}),
    ...(soak !== undefined ? { soak } : {}),
    forgetRedisKeys,
    signal: starting.signal,
  });
  const more: string[] = [];
  if (wantsDashboard(repoDir)) {
    const dashboard = await waitForDashboardIssue(
      sandbox.ready.api_url,
      sandbox.ready.repository,
      sandbox.ready.user.token,
    );
    if (dashboard !== undefined) {
      more.push(
        `Issue ${dashboard} is the dashboard (dashboard: true): ${sandbox.ready.repository_url}/issues/${dashboard}.`,
        '',
      );
    } else
      more.push(
        'dashboard: true, but the dashboard issue was not open a minute after the start: look for it in the repository issues once Escalator has read the repository.',
        '',
      );
  }
  if (seeded) {
    const [owner = '', repo = ''] = sandbox.ready.repository.split('/');
    agent = new SimulatedAgent({
      agent: agentKind as SimulatedAgentKind,
      escalatorUrl: sandbox.ready.app_url,
      key: agentKey(agentToken, owner),
      owner,
      repo,
      branch: 'main',
      githubApiUrl: sandbox.ready.api_url,
      githubToken: sandbox.ready.user.token,
      repoURL: `${sandbox.ready.repository_url}.git`,
      objects: seeded.objects,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    const control = await agent.start();
    const first = seeded.objects[0]?.object ?? '';
    more.push(
      `AGENT_READY ${JSON.stringify({ agent: agentKind, control_url: control, objects: seeded.objects })}`,
      `The simulated ${agentKind === 'argocd' ? 'Argo CD' : 'Flux'} reports every object synced and healthy a few seconds after each push.`,
      `  Make one go Degraded:  curl -X POST '${control}/degrade?object=${encodeURIComponent(first)}'`,
      `  and recover:           curl -X POST '${control}/recover?object=${encodeURIComponent(first)}'`,
      '',
    );
  }
  if (str('repo'))
    more.push(
      'The steps above are written for the shipped example (examples/gitops-repo); with --repo, adapt the image and pull request numbers.',
      `The local registry serves only the example's images (${sandbox.ready.registry.stands_for}/example/hello and /world): for other images of ${sandbox.ready.registry.stands_for} the pull requests say the registry has no such tag, and no other registry host is contacted.`,
      '',
    );
  const running = sandbox;
  stopRunning = (code) =>
    void (agent?.close() ?? Promise.resolve()).then(() => running.close()).finally(() => process.exit(code));
  if (stopRequested !== undefined) stopRunning(stopRequested);
  else {
    process.stdout.write(`SANDBOX_READY ${JSON.stringify(sandbox.ready)}\n${renderNextSteps(sandbox.ready, more)}`);
    void sandbox.appExited.then((code) => stop(code ?? 1, `Escalator exited (code ${code}); stopping the sandbox.`));
    void sandbox.redisExited.then(() => stop(1, 'The Redis the sandbox started has exited; stopping the sandbox.'));
  }
} catch (error) {
  seeded?.remove();
  await agent?.close();
  await sandbox?.close();
  if (error instanceof SandboxStoppedError) process.exit(stopRequested ?? 0);
  fail(`The sandbox could not start: ${(error as Error).message}`);
} finally {
  // The seeded copy is in the simulated GitHub now (or the start failed): never leave it in the temporary folder.
  seeded?.remove();
}
