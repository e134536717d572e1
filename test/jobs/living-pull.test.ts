import { randomUUID } from 'node:crypto';
import { SandboxClient, type Simulator, startSimulator } from '@escalator/github-sandbox';
import { Octokit } from '@octokit/rest';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitHubClients } from '../../src/adapters/github/client.js';
import { RepoState } from '../../src/adapters/store/repo-state.js';
import { ensureLivingPull, type BranchPlan } from '../../src/jobs/shared/living-pull.js';
import { createLogger } from '../../src/observability/logger.js';
import { LEFT_ALONE_MARKER } from '../../src/planners/pull-marker.js';
import { redisUrl } from '../support/stack.js';

/**
 * The living pull request against the sandbox GitHub when a person merges or closes it while a
 * run is writing it (found by the chaos run: a merged promotion PR was retitled with a version it
 * never merged, and the next run opened a second PR with the same change). The plan callback runs
 * after the open PR was read and before anything is written, so the race is exact here.
 */
describe('ensureLivingPull when the pull request is merged or closed meanwhile (sandbox GitHub)', () => {
  let sim: Simulator;
  let client: SandboxClient;
  let user: Octokit;
  let redis: Redis;
  let store: RepoState;
  const owner = 'developer';
  const repo = 'living';
  const id = { owner, repo };
  const branch = 'escalator/dev/app';
  const log = createLogger({ level: 'silent' });

  beforeAll(async () => {
    sim = await startSimulator();
    client = new SandboxClient(sim.url, sim.user.token);
    user = new Octokit({
      baseUrl: sim.apiUrl,
      auth: sim.user.token,
      log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    });
    await client.createRepo({ name: repo, files: { 'app.txt': '0\n' } });
    redis = new Redis(redisUrl);
    store = new RepoState(redis, `living-${randomUUID().slice(0, 8)}`);
  });
  afterAll(async () => {
    await sim?.close();
    const keys = await redis.keys(`${store.prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  const planOf = (version: string): BranchPlan => ({
    title: `Bump app to ${version}`,
    body: `app ${version}`,
    commitMessage: `app ${version}`,
    updates: [{ path: 'app.txt', content: `${version}\n` }],
  });
  const run = (version: string, meanwhile?: (open: number) => Promise<void>) => {
    let first = true;
    return ensureLivingPull({
      octokit: user,
      store,
      id,
      defaultBranch: 'main',
      branch,
      labels: [],
      log,
      plan: async (base, open) => {
        if (first && open && meanwhile) await meanwhile(open.number);
        first = false;
        // As the real planners do: nothing to write when the base already holds the version.
        return (await fileAt(base.sha)) === `${version}\n` ? { ...planOf(version), updates: [] } : planOf(version);
      },
    });
  };
  const pull = async (number: number) => (await user.rest.pulls.get({ ...id, pull_number: number })).data;
  const fileAt = async (ref: string) => {
    const { data } = await user.rest.repos.getContent({ ...id, path: 'app.txt', ref });
    return Buffer.from((data as { content: string }).content, 'base64').toString('utf8');
  };

  it('leaves a PR merged meanwhile with the title of what it merged, and opens a new one for the new change', async () => {
    const opened = await run('1');
    const merged = opened.pull?.number as number;
    const result = await run('2', async (number) => {
      await client.mergePull(`${owner}/${repo}`, number);
    });
    expect(result.created).toBe(true);
    expect(result.pull?.number).not.toBe(merged);
    expect(await pull(merged)).toMatchObject({ state: 'closed', merged: true, title: 'Bump app to 1' });
    expect(await fileAt('main')).toBe('1\n');
    const next = await pull(result.pull?.number as number);
    expect(next).toMatchObject({ state: 'open', title: 'Bump app to 2' });
    expect(await fileAt(next.head.sha)).toBe('2\n');
  });

  it('does not open the change of a PR merged between reading it and reading the default branch again', async () => {
    const first = (await run('4')).pull?.number as number;
    // Merge the PR right after the run reads the default branch: read in the other order, the run
    // would see no open PR, plan on the default branch as it was before the merge, and open the
    // same change a second time.
    let armed = true;
    user.hook.after('request', async (_response, options) => {
      if (armed && options.method === 'GET' && String(options.ref ?? '') === 'heads/main') {
        armed = false;
        await client.mergePull(`${owner}/${repo}`, first);
      }
    });
    const result = await run('4');
    expect(armed).toBe(false);
    expect(await pull(first)).toMatchObject({ merged: true, title: 'Bump app to 4' });
    expect(await fileAt('main')).toBe('4\n');
    expect(result.created).toBe(false);
    const { data: open } = await user.rest.pulls.list({ ...id, state: 'all', head: `${owner}:${branch}` });
    expect(
      open.filter((candidate) => candidate.title === 'Bump app to 4').map((candidate) => candidate.number),
    ).toEqual([first]);
  });

  it('opens a new PR when the open one was closed meanwhile and its text would not change', async () => {
    const current = (await run('3')).pull?.number as number;
    // Same title and body as the open PR: nothing to PATCH, so one read finds it closed.
    const result = await ensureLivingPull({
      octokit: user,
      store,
      id,
      defaultBranch: 'main',
      branch,
      labels: [],
      log,
      plan: async (_base, open) => {
        if (open) await user.rest.pulls.update({ ...id, pull_number: open.number, state: 'closed' });
        return { ...planOf('3'), updates: [{ path: 'app.txt', content: '3\n\n' }] };
      },
    });
    expect(result.pull?.number).not.toBe(current);
    expect(await pull(current)).toMatchObject({ state: 'closed', merged: false, title: 'Bump app to 3' });
    const next = await pull(result.pull?.number as number);
    expect(next.state).toBe('open');
    expect(await fileAt(next.head.sha)).toBe('3\n\n');
  });
});

/**
 * Who wrote a living pull request, when Redis lost what Escalator recorded (Redis keeps nothing on
 * disk here): GitHub decides, once per pull request, and the answer is recorded again. Escalator's
 * own PRs are built on as before (no churn); one a person pushed onto is left alone, and the note
 * on it is not said twice.
 */
describe('ensureLivingPull and who wrote the pull request (sandbox GitHub, real Redis)', () => {
  let sim: Simulator;
  let client: SandboxClient;
  let redis: Redis;
  let store: RepoState;
  let octokit: Octokit;
  const calls: string[] = [];
  const owner = 'developer';
  const repo = 'forgetful';
  const id = { owner, repo };
  const branch = 'escalator/dev/app';
  const log = createLogger({ level: 'silent' });

  beforeAll(async () => {
    sim = await startSimulator();
    client = new SandboxClient(sim.url, sim.user.token);
    const created = await client.createRepo({ name: repo, files: { 'app.txt': '0\n', 'prod.txt': 'prod\n' } });
    redis = new Redis(redisUrl);
    store = new RepoState(redis, `living-${randomUUID().slice(0, 8)}`);
    const clients = new GitHubClients({
      appId: sim.app.id,
      privateKey: sim.app.privateKey,
      baseUrl: sim.apiUrl,
      log,
      onRequest: (info) => calls.push(`${info.status} ${info.route}`),
    });
    octokit = clients.forInstallation(created.installation_id as number);
  });
  afterAll(async () => {
    await sim?.close();
    await forget();
    await redis.quit();
  });

  async function forget(): Promise<void> {
    const keys = await redis.keys(`${store.prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
  }
  const run = (version: string, on = branch) =>
    ensureLivingPull({
      octokit,
      store,
      id,
      defaultBranch: 'main',
      branch: on,
      labels: [],
      log,
      plan: async () => ({
        title: `Bump app to ${version}`,
        body: `app ${version}`,
        commitMessage: `app ${version}`,
        updates: [{ path: 'app.txt', content: `${version}\n` }],
      }),
    });
  const notes = async (number: number) =>
    (await octokit.rest.issues.listComments({ ...id, issue_number: number })).data.filter((comment) =>
      comment.body?.startsWith(LEFT_ALONE_MARKER),
    );

  it('keeps building on its own PR, asking GitHub once who wrote it', async () => {
    const first = await run('1');
    await forget();
    calls.length = 0;
    const second = await run('2');
    expect(second.branch).toBe(branch);
    expect(second.pull?.number).toBe(first.pull?.number);
    expect(second.created).toBe(false);
    expect(calls.filter((call) => call.endsWith('/pulls/{pull_number}/commits'))).toEqual([
      '200 GET /repos/{owner}/{repo}/pulls/{pull_number}/commits',
    ]);
    calls.length = 0;
    const third = await run('3');
    expect(third.pull?.number).toBe(first.pull?.number);
    // Recorded again: the next run asks GitHub nothing about who wrote it.
    expect(calls.filter((call) => call.includes('/commits') && call.includes('pulls'))).toEqual([]);
    const commits = (await octokit.rest.pulls.listCommits({ ...id, pull_number: first.pull?.number as number })).data;
    expect(commits.map((commit) => commit.commit.message)).toEqual(['app 1', 'app 2', 'app 3']);
  });

  it('leaves its PR alone once a person pushed onto it, says so once even after Redis loses the note, and continues on a copy', async () => {
    const own = await run('4');
    const number = own.pull?.number as number;
    const pushed = await client.commit(`${owner}/${repo}`, {
      branch,
      message: 'tweak prod',
      files: { 'prod.txt': 'tampered\n' },
    });
    await forget();
    const next = await run('5');
    expect(next.branch).toBe(`${branch}@2`);
    expect(next.created).toBe(true);
    const left = (await octokit.rest.pulls.get({ ...id, pull_number: number })).data;
    expect(left).toMatchObject({ state: 'open', title: 'Bump app to 4' });
    expect(left.head.sha).toBe(pushed.sha);
    expect(await notes(number)).toHaveLength(1);
    expect((await notes(number))[0]?.body).toContain(`\`${pushed.sha.slice(0, 7)}\` by @developer`);
    const files = (await octokit.rest.pulls.listFiles({ ...id, pull_number: next.pull?.number as number })).data.map(
      (file) => file.filename,
    );
    expect(files).toEqual(['app.txt']);

    await forget();
    const again = await run('6');
    expect(again.branch).toBe(`${branch}@2`);
    expect(again.pull?.number).toBe(next.pull?.number);
    expect(await notes(number)).toHaveLength(1);
    expect((await octokit.rest.pulls.get({ ...id, pull_number: number })).data.head.sha).toBe(pushed.sha);
  });

  it("does not build on a person's push while GitHub still reports the pull request at its own head", async () => {
    const lagging = 'escalator/dev/lagging';
    const own = await run('7', lagging);
    const ownHead = own.pull?.headSha as string;
    const pushed = await client.commit(`${owner}/${repo}`, {
      branch: lagging,
      message: 'tweak prod',
      files: { 'prod.txt': 'tampered\n' },
    });
    // GitHub moves a pull request's head a moment after a push: the first listing still says the old one.
    let stale = true;
    octokit.hook.after('request', (response, options) => {
      if (
        stale &&
        options.method === 'GET' &&
        options.url === '/repos/{owner}/{repo}/pulls' &&
        String(options.head ?? '').endsWith(`:${lagging}`)
      ) {
        stale = false;
        for (const pull of response.data as Array<{ head: { sha: string } }>) pull.head.sha = ownHead;
      }
    });
    const next = await run('8', lagging);
    expect(stale).toBe(false);
    expect(next.branch).toBe(`${lagging}@2`);
    expect((await octokit.rest.pulls.get({ ...id, pull_number: own.pull?.number as number })).data.head.sha).toBe(
      pushed.sha,
    );
    expect(
      (await octokit.rest.pulls.listFiles({ ...id, pull_number: next.pull?.number as number })).data.map(
        (file) => file.filename,
      ),
    ).toEqual(['app.txt']);
  });
});
