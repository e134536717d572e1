import { SandboxClient, type Simulator, startSimulator } from '@escalator/github-sandbox';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitHubClients } from '../../src/adapters/github/client.js';
import { withWritePriority, WriteBudget, writeLimits } from '../../src/adapters/github/write-budget.js';
import { RateLimitError } from '../../src/observability/errors.js';
import { createLogger } from '../../src/observability/logger.js';
import { redisUrl } from '../support/redis.js';

/**
 * The per-installation budget of GitHub writes, shared through real Redis, against the sandbox
 * with GitHub's secondary limits switched on (small numbers, so the test is quick): Escalator
 * stops itself before GitHub would refuse it, keeps a share for people, and delays the job
 * instead of drawing a secondary-limit answer.
 */
const log = createLogger({ level: 'silent' });
const prefix = `test-writes-${process.pid}-${Date.now()}`;

let sim: Simulator;
let redis: Redis;
let installationId: number;
let base: string;
let branch = 0;

beforeAll(async () => {
  sim = await startSimulator({ secondaryLimits: { perMinute: 6, perHour: 100 } });
  const client = new SandboxClient(sim.url, sim.user.token);
  installationId = (await client.createRepo({ owner: 'busy', name: 'gitops', files: { 'a.yaml': 'a\n' } }))
    .installation_id!;
  redis = new Redis(redisUrl);
  const octokit = new GitHubClients({
    appId: sim.app.id,
    privateKey: sim.app.privateKey,
    baseUrl: sim.apiUrl,
    log,
  }).forInstallation(installationId);
  base = (await octokit.rest.git.getRef({ owner: 'busy', repo: 'gitops', ref: 'heads/main' })).data.object.sha;
});

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
  await sim?.close();
});

function worker(budget: WriteBudget, installation = installationId) {
  return new GitHubClients({
    appId: sim.app.id,
    privateKey: sim.app.privateKey,
    baseUrl: sim.apiUrl,
    log,
    writes: budget,
  }).forInstallation(installation);
}

function createRef(octokit: ReturnType<typeof worker>): Promise<unknown> {
  branch += 1;
  return octokit.rest.git.createRef({ owner: 'busy', repo: 'gitops', ref: `refs/heads/w${branch}`, sha: base });
}

describe('the write budget', () => {
  it('is shared by workers through Redis and waits a whole window, never long in process', async () => {
    const limits = writeLimits(5, 100); // routine: 4 a minute, people: 5
    const one = new WriteBudget(redis, `${prefix}-shared`, limits);
    const other = new WriteBudget(redis, `${prefix}-shared`, limits);
    expect(await one.take(1, 'routine')).toBe(0);
    expect(await other.take(1, 'routine')).toBe(0);
    expect(await one.take(1, 'routine')).toBe(0);
    expect(await other.take(1, 'routine')).toBe(0);
    const wait = await one.take(1, 'routine');
    expect(wait).toBeGreaterThan(55_000);
    expect(wait).toBeLessThanOrEqual(60_000);
    // People still have their share; then they wait too.
    expect(await other.take(1, 'person')).toBe(0);
    expect(await other.take(1, 'person')).toBeGreaterThan(0);
    // Another installation has its own window.
    expect(await one.take(2, 'routine')).toBe(0);
  });

  it('stops routine writes before GitHub refuses them, and delays the job instead', async () => {
    const budget = new WriteBudget(redis, `${prefix}-e2e`, writeLimits(6, 100)); // routine: 5 a minute
    const octokit = worker(budget);
    for (let i = 0; i < 5; i++) await createRef(octokit);
    const stopped = await createRef(octokit).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(stopped).toBeInstanceOf(RateLimitError);
    const resetAt = (stopped as RateLimitError).resetAt;
    expect(resetAt - Date.now()).toBeGreaterThan(50_000);
    expect((stopped as Error).message).toMatch(/budget of GitHub writes for installation \d+ \(routine work\)/);
    // A person's command still gets its write, on a second worker sharing the budget.
    await withWritePriority('person', () => createRef(worker(budget)));
    expect(sim.secondaryRefused()).toBe(0);
  });

  it("writes a check run (a merge gate) from routine work with the people's share", async () => {
    // An installation of its own: the simulator's secondary limits count the one above.
    const client = new SandboxClient(sim.url, sim.user.token);
    const gates = (await client.createRepo({ owner: 'gates', name: 'gitops', files: { 'a.yaml': 'a\n' } }))
      .installation_id!;
    const budget = new WriteBudget(redis, `${prefix}-gate`, writeLimits(6, 100)); // routine: 5 a minute
    const octokit = worker(budget, gates);
    const head = (await octokit.rest.git.getRef({ owner: 'gates', repo: 'gitops', ref: 'heads/main' })).data.object.sha;
    const ref = (i: number) =>
      octokit.rest.git.createRef({ owner: 'gates', repo: 'gitops', ref: `refs/heads/g${i}`, sha: head });
    for (let i = 0; i < 5; i++) await ref(i);
    await expect(ref(5)).rejects.toBeInstanceOf(RateLimitError);
    const { data: check } = await octokit.rest.checks.create({
      owner: 'gates',
      repo: 'gitops',
      name: 'escalator/health',
      head_sha: head,
      status: 'completed',
      conclusion: 'success',
    });
    expect(check.name).toBe('escalator/health');
    // The people's share is spent now too: the next write of any kind waits.
    await expect(
      octokit.rest.checks.update({ owner: 'gates', repo: 'gitops', check_run_id: check.id, conclusion: 'failure' }),
    ).rejects.toBeInstanceOf(RateLimitError);
    expect(sim.secondaryRefused()).toBe(0);
  });
});
