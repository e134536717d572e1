/**
 * The product as the load runs drive it: the sandbox GitHub simulator in this process, Escalator's
 * web role and worker role(s) as separate OS processes (the chaos run's `Fleet`,
 * bench/chaos/processes.ts), the shared Redis under a random key prefix, and the seeded GitOps
 * repositories (bench/load/fixture.ts), indexed before anything is measured.
 *
 * 1. start the simulator, one web process (its URL becomes the App's webhook URL), N workers
 * 2. seed the repositories, wait until Escalator has indexed every one
 * 3. `close()`: SIGTERM every process (SIGKILL after 10 s), delete the prefix's keys, stop the
 *    simulator; the run directory (one log per process) is kept when asked
 * If the bench dies, its exit handler SIGKILLs the processes it started (by pid).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxClient, type Simulator, startSimulator } from '@escalator/github-sandbox';
import type { Octokit } from '@octokit/rest';
import { Redis } from 'ioredis';
import { WebhookLog } from '../chaos/driver.js';
import { Fleet, killOnExit, waitUntil } from '../chaos/processes.js';
import { appEnv, userOctokit } from '../../test/support/stack.js';
import { deleteKeys, redisUrl } from '../support/stack.js';
import { loadFixture, ownerOf, repoFiles, type Environment, type LoadFixture } from './fixture.js';
import type { Watched } from './memory.js';
import { GitHubObserver } from './observe.js';

export interface LoadStack {
  fixture: LoadFixture;
  sim: Simulator;
  client: SandboxClient;
  user: Octokit;
  fleet: Fleet;
  webUrl: string;
  prefix: string;
  tokens: { ci: string; registry: string };
  /** A connection to the shared Redis, for the drain and the job counts. */
  probe: Redis;
  webhooks: WebhookLog;
  observer: GitHubObserver;
  recoverEveryMs: number;
  runDir: string;
  /** The Escalator processes running now, for the memory sampler. */
  processes(): Watched[];
  close(keepLogs: boolean): Promise<void>;
}

/** Failed webhook deliveries are redelivered this often (the drain waits for two runs). */
const RECOVER_EVERY_MS = 30_000;

export async function startLoadStack(input: {
  name: string;
  repos: number;
  apps: number;
  environments: Environment[];
  /** Organizations besides the simulator's user that hold repositories, each its own App installation. */
  moreOwners?: string[];
  workers: number;
  env?: Record<string, string>;
  /** Passed to the simulator: enforce GitHub's secondary rate limits per installation. */
  secondaryLimits?: boolean;
  progress: (text: string) => void;
}): Promise<LoadStack> {
  const runDir = mkdtempSync(join(tmpdir(), `escalator-${input.name}-`));
  const sim = await startSimulator({ secondaryLimits: input.secondaryLimits ?? false });
  const fixture = loadFixture({
    owner: sim.user.login,
    moreOwners: input.moreOwners,
    repos: input.repos,
    apps: input.apps,
    environments: input.environments,
  });
  const prefix = `${input.name}-${randomBytes(4).toString('hex')}`;
  const tokens = {
    ci: `ci-${randomBytes(16).toString('hex')}`,
    registry: `registry-${randomBytes(16).toString('hex')}`,
  };
  const env: Record<string, string> = {
    ...appEnv(sim, redisUrl),
    LOG_LEVEL: process.env.LOAD_LOG_LEVEL ?? 'warn',
    ESCALATOR_CI_TOKEN: tokens.ci,
    ESCALATOR_REGISTRY_TOKEN: tokens.registry,
    ESCALATOR_REDIS_PREFIX: prefix,
    ESCALATOR_RECOVER_EVERY_MS: String(RECOVER_EVERY_MS),
    ESCALATOR_CACHE_DIR: join(runDir, 'cache'),
    // The processes inherit this environment (and a .env file): no relay target of the machine's own.
    ESCALATOR_RELAY_TARGETS: '[]',
    ...input.env,
  };
  if (process.env.ESCALATOR_RELAY_TARGETS_FILE)
    throw new Error('ESCALATOR_RELAY_TARGETS_FILE is set; a load run relays to no agent. Unset it for the bench');
  const fleet = new Fleet(env, runDir);
  killOnExit(() => fleet.pids());

  const web = await fleet.startWeb(0);
  sim.setWebhookUrl(`${web.url}/api/github/webhooks`);
  for (let i = 0; i < input.workers; i++) fleet.startWorker();
  const webhooks = new WebhookLog(sim);
  const observer = new GitHubObserver(sim, sim.user.token);
  const client = new SandboxClient(sim.url, sim.user.token);
  const user = userOctokit(sim);
  const probe = new Redis(redisUrl, { maxRetriesPerRequest: null });
  for (const repo of fixture.repos)
    await client.createRepo({ owner: ownerOf(fixture, repo), name: repo, files: repoFiles(fixture, repo) });
  input.progress(`${fixture.repos.length} repositories created`);
  const indexKey = (repo: string) => `${prefix}:index:repo:${ownerOf(fixture, repo)}/${repo}`;
  await waitUntil(
    async () => (await Promise.all(fixture.repos.map((repo) => probe.exists(indexKey(repo))))).every((n) => n === 1),
    'Escalator to index the seeded repositories',
    600_000,
    500,
  );
  input.progress('seeded repositories indexed');

  return {
    fixture,
    sim,
    client,
    user,
    fleet,
    webUrl: web.url,
    prefix,
    tokens,
    probe,
    webhooks,
    observer,
    recoverEveryMs: RECOVER_EVERY_MS,
    runDir,
    processes: () =>
      [...fleet.webs, ...fleet.workers]
        .filter((p) => p.child.pid && p.child.exitCode === null && p.child.signalCode === null)
        .map((p) => ({ name: p.name, pid: p.child.pid as number })),
    async close(keepLogs) {
      await fleet.stopAll();
      await deleteKeys(probe, `${prefix}:*`);
      await probe.quit().catch(() => probe.disconnect());
      observer.close();
      webhooks.close();
      await sim.close();
      if (!keepLogs) rmSync(runDir, { recursive: true, force: true });
    },
  };
}
