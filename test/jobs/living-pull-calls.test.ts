import { randomUUID } from 'node:crypto';
import { SandboxClient, type Simulator, startSimulator } from '@escalator/github-sandbox';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GitHubClients, type Octokit } from '../../src/adapters/github/client.js';
import { commitOnBranch } from '../../src/adapters/github/repo.js';
import { RepoState } from '../../src/adapters/store/repo-state.js';
import { ensureLivingPull, type BranchPlan } from '../../src/jobs/shared/living-pull.js';
import { ConflictError } from '../../src/observability/errors.js';
import { createLogger } from '../../src/observability/logger.js';
import { redisUrl } from '../support/stack.js';

/**
 * What one living pull request costs in GitHub calls, through the App's own client against the
 * sandbox GitHub: a new one is the default branch read, the branch, one commit (GraphQL
 * `createCommitOnBranch`), the pull request and its labels; an update reads its pull request once.
 * And what the fewer calls must not lose: a crash between creating the branch and committing, a
 * branch someone else holds while Redis remembers nothing, a branch moved under the commit.
 */
describe('ensureLivingPull calls (App installation, sandbox GitHub)', () => {
  let sim: Simulator;
  let client: SandboxClient;
  let redis: Redis;
  let store: RepoState;
  let octokit: Octokit;
  const owner = 'calls';
  const repo = 'gitops';
  const id = { owner, repo };
  const log = createLogger({ level: 'silent' });
  const calls: string[] = [];
  let failCommit = false;

  beforeAll(async () => {
    sim = await startSimulator();
    client = new SandboxClient(sim.url, sim.user.token);
    const created = await client.createRepo({ owner, name: repo, files: { 'app.txt': '0\n' } });
    redis = new Redis(redisUrl);
    store = new RepoState(redis, `living-calls-${randomUUID().slice(0, 8)}`);
    const clients = new GitHubClients({
      appId: sim.app.id,
      privateKey: sim.app.privateKey,
      baseUrl: sim.apiUrl,
      log,
      onRequest: (info) => calls.push(`${info.status} ${info.route}`),
    });
    octokit = clients.forInstallation(created.installation_id!);
    // A crash between creating the branch and committing: the commit call never leaves.
    octokit.hook.before('request', (options) => {
      if (failCommit && options.url.endsWith('/graphql')) throw new Error('worker killed');
    });
    await octokit.rest.apps.getAuthenticated().catch(() => undefined);
  });
  afterAll(async () => {
    await sim?.close();
    const keys = await redis.keys(`${store.prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });
  beforeEach(() => {
    failCommit = false;
  });

  const planOf = (version: string): BranchPlan => ({
    title: `Bump app to ${version}`,
    body: `app ${version}`,
    commitMessage: `Bump app to ${version}\n\nBy Escalator.`,
    updates: [{ path: 'app.txt', content: `${version}\n` }],
  });
  const run = async (branch: string, version: string) => {
    await octokit.rest.meta.root().catch(() => undefined); // the installation token is minted before counting
    calls.length = 0;
    return ensureLivingPull({
      octokit,
      store,
      id,
      defaultBranch: 'main',
      branch,
      labels: ['escalator', 'env:dev'],
      log,
      plan: async () => planOf(version),
    });
  };
  const routes = () => calls.map((call) => call.replace(/^\d+ /, ''));
  const fileAt = async (ref: string) => {
    const { data } = await octokit.rest.repos.getContent({ ...id, path: 'app.txt', ref, mediaType: { format: 'raw' } });
    return String(data);
  };

  it('opens a new pull request in five calls, its one commit signed by GitHub for the App', async () => {
    const result = await run('escalator/dev/one', '1');
    expect(result.created).toBe(true);
    expect(routes()).toEqual([
      'GET /repos/{owner}/{repo}/commits/{ref}',
      'POST /repos/{owner}/{repo}/git/refs',
      'POST /graphql',
      'POST /repos/{owner}/{repo}/pulls',
      'POST /repos/{owner}/{repo}/issues/{issue_number}/labels',
    ]);
    const { data: commit } = await octokit.rest.repos.getCommit({ ...id, ref: result.commit! });
    expect(commit.commit.verification?.verified).toBe(true);
    expect(commit.commit.message).toBe('Bump app to 1\n\nBy Escalator.');
    expect(commit.parents.map((parent) => parent.sha)).toEqual([result.base.sha]);
    expect(await fileAt('escalator/dev/one')).toBe('1\n');
  });

  it('updates its open pull request reading that pull request once, not the branch and the list', async () => {
    const first = await run('escalator/dev/two', '1');
    const result = await run('escalator/dev/two', '2');
    expect(result.pull?.number).toBe(first.pull?.number);
    expect(routes()).toEqual([
      'GET /repos/{owner}/{repo}/pulls/{pull_number}',
      'GET /repos/{owner}/{repo}/commits/{ref}',
      'POST /graphql',
      'PATCH /repos/{owner}/{repo}/pulls/{pull_number}',
    ]);
    expect(await fileAt('escalator/dev/two')).toBe('2\n');
    const { data: commits } = await octokit.rest.pulls.listCommits({ ...id, pull_number: result.pull!.number });
    expect(commits.map((commit) => commit.commit.message.split('\n')[0])).toEqual(['Bump app to 1', 'Bump app to 2']);
  });

  it('takes over its own branch after a crash between creating it and committing, without a copy', async () => {
    failCommit = true;
    await expect(run('escalator/dev/three', '1')).rejects.toThrow('worker killed');
    const { data: left } = await octokit.rest.git.getRef({ ...id, ref: 'heads/escalator/dev/three' });
    const { data: main } = await octokit.rest.git.getRef({ ...id, ref: 'heads/main' });
    expect(left.object.sha).toBe(main.object.sha);
    failCommit = false;
    const result = await run('escalator/dev/three', '1');
    expect(result).toMatchObject({ created: true, branch: 'escalator/dev/three' });
    expect(await fileAt('escalator/dev/three')).toBe('1\n');
  });

  it('finds a branch someone else holds by its creation failing when Redis remembers nothing, and leaves it alone', async () => {
    await client.commit(`${owner}/${repo}`, {
      branch: 'escalator/dev/four',
      from: 'main',
      files: { 'app.txt': 'theirs\n' },
    });
    const result = await run('escalator/dev/four', '1');
    expect(result.branch).toBe('escalator/dev/four@2');
    expect(calls).toContain('422 POST /repos/{owner}/{repo}/git/refs');
    expect(await fileAt('escalator/dev/four')).toBe('theirs\n');
    expect(await fileAt('escalator/dev/four@2')).toBe('1\n');
  });

  it('after its pull request merged and its branch was deleted, opens the next one in five calls again', async () => {
    const first = await run('escalator/dev/six', '1');
    await client.mergePull(`${owner}/${repo}`, first.pull!.number);
    await octokit.rest.git.deleteRef({ ...id, ref: 'heads/escalator/dev/six' });
    // What the pull_request.closed webhook does (src/intake/github/pulls.ts).
    await store.living.forgetClosed(id, 'escalator/dev/six', 'escalator/dev/six', first.pull!.number);
    const next = await run('escalator/dev/six', '2');
    expect(next).toMatchObject({ created: true, branch: 'escalator/dev/six' });
    expect(routes()).toHaveLength(5);
  });

  it('after its pull request merged with the branch kept, reuses the branch it wrote, judged through GitHub', async () => {
    const first = await run('escalator/dev/seven', '1');
    await client.mergePull(`${owner}/${repo}`, first.pull!.number);
    await store.living.forgetClosed(id, 'escalator/dev/seven', 'escalator/dev/seven', first.pull!.number);
    const next = await run('escalator/dev/seven', '2');
    expect(next).toMatchObject({ created: true, branch: 'escalator/dev/seven' });
    expect(next.pull!.number).not.toBe(first.pull!.number);
    expect(calls).toContain('422 POST /repos/{owner}/{repo}/git/refs');
    expect(await fileAt('escalator/dev/seven')).toBe('2\n');
    const { data: commits } = await octokit.rest.pulls.listCommits({ ...id, pull_number: next.pull!.number });
    expect(commits.map((commit) => commit.commit.message.split('\n')[0])).toEqual(['Bump app to 2']);
  });

  it('forgets a closed pull request only when the record names that one', async () => {
    const first = await run('escalator/dev/eight', '1');
    await store.living.forgetClosed(id, 'escalator/dev/eight', 'escalator/dev/eight', first.pull!.number + 1000);
    expect((await store.living.loadLiving(id, 'escalator/dev/eight')).branches['escalator/dev/eight']).toMatchObject({
      pull: first.pull!.number,
    });
  });

  it('refuses to commit on a branch that moved: a ConflictError, and nothing written', async () => {
    const result = await run('escalator/dev/five', '1');
    const moved = await client.commit(`${owner}/${repo}`, {
      branch: 'escalator/dev/five',
      files: { 'app.txt': 'x\n' },
    });
    await expect(
      commitOnBranch(octokit, id, 'escalator/dev/five', result.commit!, [{ path: 'app.txt', content: '2\n' }], 'm'),
    ).rejects.toBeInstanceOf(ConflictError);
    const { data: head } = await octokit.rest.git.getRef({ ...id, ref: 'heads/escalator/dev/five' });
    expect(head.object.sha).toBe(moved.sha);
  });
});
