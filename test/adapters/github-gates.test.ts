import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { SandboxClient, type Simulator, startSimulator } from '@escalator/github-sandbox';
import { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitHubClients } from '../../src/adapters/github/client.js';
import {
  disableAutoMerge,
  enableAutoMerge,
  loadRequiredChecks,
  requiredChecksPassed,
} from '../../src/adapters/github/gates.js';
import { ensureCheckRun } from '../../src/adapters/github/repo.js';
import { RateLimitError } from '../../src/observability/errors.js';
import { createLogger } from '../../src/observability/logger.js';

/**
 * The merge-gate adapter against the sandbox GitHub, through the production client (App JWT,
 * installation token): the App reads required checks without the Administration permission,
 * turns on native auto-merge, and judges required checks on a commit.
 */
const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const log = createLogger({ level: 'silent' });

let sim: Simulator;
let client: SandboxClient;
let user: Octokit;
let app: Octokit;
let counter = 0;
const owner = 'example';
/** The gates docs/gates.md tells a repository to require, in the order GitHub lists them back. */
const GATES = ['escalator/health', 'escalator/hold', 'escalator/soak'];

function clientsFor(simulator: Simulator, installationId: number): Octokit {
  return new GitHubClients({
    appId: simulator.app.id,
    privateKey: simulator.app.privateKey,
    baseUrl: simulator.apiUrl,
    log,
  }).forInstallation(installationId);
}

beforeAll(async () => {
  sim = await startSimulator();
  client = new SandboxClient(sim.url, sim.user.token);
  user = new Octokit({ baseUrl: sim.apiUrl, auth: sim.user.token, log: quiet });
  let installationId = 0;
  for (const repo of ['plain', 'guarded', 'auto', 'checks', 'documented-ruleset', 'documented-protection', 'reopen']) {
    installationId = (await client.createRepo({ owner, name: repo, files: { 'a.txt': 'a\n' } })).installation_id ?? 0;
  }
  await client.createRepo({ owner: 'outsider', name: 'hidden', files: { 'a.txt': 'a\n' }, install: false });
  app = clientsFor(sim, installationId);
});

afterAll(async () => {
  await sim?.close();
});

async function openPull(repo: string): Promise<{ number: number; sha: string; nodeId: string }> {
  counter += 1;
  const branch = `change-${counter}`;
  const { sha } = await client.commit(`${owner}/${repo}`, { branch, files: { [`${branch}.txt`]: 'x\n' } });
  const { data } = await app.rest.pulls.create({ owner, repo, title: `Change ${counter}`, head: branch, base: 'main' });
  return { number: data.number, sha, nodeId: data.node_id };
}

async function requireInRuleset(repo: string, contexts: string[], strict = false): Promise<void> {
  counter += 1;
  await user.rest.repos.createRepoRuleset({
    owner,
    repo,
    name: `gates-${counter}`,
    enforcement: 'active',
    conditions: { ref_name: { include: ['~DEFAULT_BRANCH'], exclude: [] } },
    rules: [
      {
        type: 'required_status_checks',
        parameters: {
          required_status_checks: contexts.map((context) => ({ context })),
          strict_required_status_checks_policy: strict,
        },
      },
    ],
  });
}

describe('loadRequiredChecks', () => {
  it('finds nothing required on an unprotected branch, and says it could read both sources', async () => {
    expect(await loadRequiredChecks(app, { owner, repo: 'plain' }, 'main')).toEqual({
      contexts: [],
      checks: [],
      source: { branchProtection: { readable: true }, rulesets: { readable: true } },
      readable: true,
      reason: null,
      upToDate: false,
      mergeQueue: false,
      adminsExempt: false,
    });
  });

  it('unites classic protection and rulesets, without the Administration permission', async () => {
    const id = { owner, repo: 'guarded' };
    await user.rest.repos.updateBranchProtection({
      ...id,
      branch: 'main',
      required_status_checks: {
        strict: false,
        contexts: [],
        checks: [{ context: 'escalator/soak', app_id: sim.app.id }],
      },
      enforce_admins: true,
      required_pull_request_reviews: null,
      restrictions: null,
    });
    await requireInRuleset('guarded', ['escalator/hold', 'escalator/soak'], true);
    // The App could not read the protection itself: the adapter must not depend on it.
    await expect(app.rest.repos.getBranchProtection({ ...id, branch: 'main' })).rejects.toMatchObject({ status: 403 });
    const required = await loadRequiredChecks(app, id, 'main');
    expect(required.contexts).toEqual(['escalator/hold', 'escalator/soak']);
    expect(required.checks).toEqual([
      { context: 'escalator/soak', appId: sim.app.id, source: 'branch-protection' },
      { context: 'escalator/hold', appId: null, source: 'ruleset', rulesetId: expect.any(Number) },
      { context: 'escalator/soak', appId: null, source: 'ruleset', rulesetId: expect.any(Number) },
    ]);
    expect(required).toMatchObject({ readable: true, reason: null, upToDate: true, adminsExempt: false });
    await user.rest.repos.updateBranchProtection({
      ...id,
      branch: 'main',
      required_status_checks: { strict: false, contexts: ['escalator/soak'] },
      enforce_admins: false,
      required_pull_request_reviews: null,
      restrictions: null,
    });
    expect((await loadRequiredChecks(app, id, 'main')).adminsExempt).toBe(true);
    // Another branch of the same repository requires nothing.
    await client.commit(`${owner}/guarded`, { branch: 'side', files: { 'b.txt': 'b\n' } });
    expect((await loadRequiredChecks(app, id, 'side')).contexts).toEqual([]);
  });

  it('reports a branch it cannot see as unreadable, with the reason, and keeps the rules it read', async () => {
    await requireInRuleset('plain', ['escalator/soak']);
    const required = await loadRequiredChecks(app, { owner, repo: 'plain' }, 'main-typo');
    expect(required.readable).toBe(false);
    expect(required.source.branchProtection).toMatchObject({ readable: false, status: 404 });
    expect(required.reason).toContain('branch main-typo was not found in example/plain');
    expect(required.source.rulesets).toEqual({ readable: true });
  });

  it('reports a repository the App is not installed on as unreadable', async () => {
    const required = await loadRequiredChecks(app, { owner: 'outsider', repo: 'hidden' }, 'main');
    expect(required).toMatchObject({ readable: false, contexts: [] });
    expect(required.source.rulesets).toMatchObject({ readable: false, status: 404 });
  });
});

describe('the API calls docs/gates.md gives', () => {
  /** The JSON bodies of the documented `gh api … --input -` calls, with the App's id filled in. */
  async function documentedBodies(): Promise<Record<string, unknown>[]> {
    const text = await readFile(resolve(import.meta.dirname, '../../docs/gates.md'), 'utf8');
    return [...text.matchAll(/<<'EOF'\n([\s\S]*?)\nEOF/g)].map(
      (match) => JSON.parse((match[1] ?? '').replaceAll('APP_ID', String(sim.app.id))) as Record<string, unknown>,
    );
  }

  it('make every gate required, pinned to the App, and Escalator reads them back', async () => {
    const [ruleset, protection] = await documentedBodies();
    expect(ruleset).toBeDefined();
    expect(protection).toBeDefined();
    await user.request('POST /repos/{owner}/{repo}/rulesets', {
      owner,
      repo: 'documented-ruleset',
      ...ruleset,
    } as never);
    await user.request('PUT /repos/{owner}/{repo}/branches/{branch}/protection', {
      owner,
      repo: 'documented-protection',
      branch: 'main',
      ...protection,
    } as never);
    for (const repo of ['documented-ruleset', 'documented-protection']) {
      const required = await loadRequiredChecks(app, { owner, repo }, 'main');
      expect(required.contexts).toEqual(GATES);
      expect(required.checks.map((check) => check.appId)).toEqual(GATES.map(() => sim.app.id));
      expect(required.adminsExempt).toBe(false);
      // A commit status of the same name posted by a person does not satisfy a check pinned to the App.
      const pull = await openPull(repo);
      for (const context of GATES)
        await user.rest.repos.createCommitStatus({ owner, repo, sha: pull.sha, state: 'success', context });
      await expect(user.rest.pulls.merge({ owner, repo, pull_number: pull.number })).rejects.toMatchObject({
        status: 405,
      });
      for (const name of GATES)
        await app.rest.checks.create({
          owner,
          repo,
          name,
          head_sha: pull.sha,
          status: 'completed',
          conclusion: 'success',
        });
      expect((await user.rest.pulls.merge({ owner, repo, pull_number: pull.number })).status).toBe(200);
    }
  });
});

describe('enableAutoMerge', () => {
  const id = { owner, repo: 'auto' };

  it('says when the repository does not allow auto-merge', async () => {
    const pull = await openPull('auto');
    const result = await enableAutoMerge(app, { pullNodeId: pull.nodeId, method: 'merge', expectedHeadOid: pull.sha });
    expect(result).toEqual({ outcome: 'not-allowed', message: 'Auto merge is not allowed for this repository' });
  });

  it('throws what is not an answer about the pull request (a rate limit) instead of making it an outcome', async () => {
    const pull = await openPull('auto');
    await client.setRateLimit({ mode: 'secondary', count: 1, retryAfter: 30 });
    await expect(
      enableAutoMerge(app, { pullNodeId: pull.nodeId, method: 'merge', expectedHeadOid: pull.sha }),
    ).rejects.toBeInstanceOf(RateLimitError);
    await client.setRateLimit({ count: 0 });
  });

  it('says when there is nothing left to wait for', async () => {
    await user.rest.repos.update({ ...id, allow_auto_merge: true });
    const pull = await openPull('auto');
    const result = await enableAutoMerge(app, { pullNodeId: pull.nodeId, method: 'merge', expectedHeadOid: pull.sha });
    expect(result.outcome).toBe('clean');
  });

  it('is enabled while a required check waits, and GitHub merges once it passes', async () => {
    await requireInRuleset('auto', ['escalator/soak']);
    const abandoned = await openPull('auto');
    expect(await disableAutoMerge(app, abandoned.nodeId)).toMatchObject({ outcome: 'not-enabled' });
    await enableAutoMerge(app, { pullNodeId: abandoned.nodeId, method: 'squash', expectedHeadOid: abandoned.sha });
    expect(await disableAutoMerge(app, abandoned.nodeId)).toEqual({ outcome: 'disabled', message: null });
    expect((await app.rest.pulls.get({ ...id, pull_number: abandoned.number })).data.auto_merge).toBeNull();
    const pull = await openPull('auto');
    const moved = await enableAutoMerge(app, {
      pullNodeId: pull.nodeId,
      method: 'merge',
      expectedHeadOid: 'f'.repeat(40),
    });
    expect(moved.outcome).toBe('head-moved');
    expect(await enableAutoMerge(app, { pullNodeId: pull.nodeId, method: 'merge', expectedHeadOid: pull.sha })).toEqual(
      {
        outcome: 'enabled',
        message: null,
      },
    );
    const waiting = await app.rest.pulls.get({ ...id, pull_number: pull.number });
    expect(waiting.data).toMatchObject({ state: 'open', auto_merge: { merge_method: 'merge' } });
    await app.rest.checks.create({
      ...id,
      name: 'escalator/soak',
      head_sha: pull.sha,
      status: 'completed',
      conclusion: 'success',
    });
    expect((await app.rest.pulls.get({ ...id, pull_number: pull.number })).data.merged).toBe(true);
    const closed = await enableAutoMerge(app, { pullNodeId: pull.nodeId, method: 'merge', expectedHeadOid: pull.sha });
    expect(closed.outcome).toBe('closed');
  });
});

describe('requiredChecksPassed', () => {
  const id = { owner, repo: 'checks' };

  it('judges each required context by the newest check run or commit status on the commit', async () => {
    const { sha } = await client.commit(`${owner}/checks`, { branch: 'judged', files: { 'c.txt': 'c\n' } });
    const contexts = ['escalator/soak', 'escalator/hold', 'ci/jenkins'];
    expect(await requiredChecksPassed(app, id, sha, contexts)).toEqual({
      passed: false,
      reason: null,
      checks: [
        { context: 'ci/jenkins', state: 'missing', via: null },
        { context: 'escalator/hold', state: 'missing', via: null },
        { context: 'escalator/soak', state: 'missing', via: null },
      ],
    });
    const soak = await app.rest.checks.create({ ...id, name: 'escalator/soak', head_sha: sha, status: 'in_progress' });
    await app.rest.checks.create({
      ...id,
      name: 'escalator/hold',
      head_sha: sha,
      status: 'completed',
      conclusion: 'failure',
    });
    await user.rest.repos.createCommitStatus({ ...id, sha, state: 'pending', context: 'ci/jenkins' });
    expect((await requiredChecksPassed(app, id, sha, contexts)).checks).toEqual([
      { context: 'ci/jenkins', state: 'pending', via: 'commit-status' },
      { context: 'escalator/hold', state: 'failed', via: 'check-run' },
      { context: 'escalator/soak', state: 'pending', via: 'check-run' },
    ]);
    await app.rest.checks.update({ ...id, check_run_id: soak.data.id, conclusion: 'success' });
    await app.rest.checks.create({
      ...id,
      name: 'escalator/hold',
      head_sha: sha,
      status: 'completed',
      conclusion: 'neutral',
    });
    await user.rest.repos.createCommitStatus({ ...id, sha, state: 'success', context: 'ci/jenkins' });
    expect(await requiredChecksPassed(app, id, sha, contexts)).toEqual({
      passed: true,
      reason: null,
      checks: [
        { context: 'ci/jenkins', state: 'passed', via: 'commit-status' },
        { context: 'escalator/hold', state: 'passed', via: 'check-run' },
        { context: 'escalator/soak', state: 'passed', via: 'check-run' },
      ],
    });
    // A check on another commit does not count for this one.
    const other = await client.commit(`${owner}/checks`, { branch: 'judged', files: { 'c.txt': 'd\n' } });
    expect((await requiredChecksPassed(app, id, other.sha, ['escalator/soak'])).passed).toBe(false);
  });

  it('says "unknown", with the reason, when the App may not read commit statuses', async () => {
    const narrow = await startSimulator({
      app: { permissions: { checks: 'write', contents: 'write', metadata: 'read', pull_requests: 'write' } },
    });
    try {
      const narrowClient = new SandboxClient(narrow.url, narrow.user.token);
      const created = await narrowClient.createRepo({ owner, name: 'narrow', files: { 'a.txt': 'a\n' } });
      const octokit = clientsFor(narrow, created.installation_id ?? 0);
      const { sha } = await narrowClient.commit(`${owner}/narrow`, { branch: 'x', files: { 'x.txt': 'x\n' } });
      await octokit.rest.checks.create({
        owner,
        repo: 'narrow',
        name: 'escalator/soak',
        head_sha: sha,
        status: 'completed',
        conclusion: 'success',
      });
      const verdict = await requiredChecksPassed(octokit, { owner, repo: 'narrow' }, sha, [
        'escalator/soak',
        'ci/jenkins',
      ]);
      expect(verdict.passed).toBe(false);
      expect(verdict.checks).toEqual([
        { context: 'ci/jenkins', state: 'unknown', via: null },
        { context: 'escalator/soak', state: 'passed', via: 'check-run' },
      ]);
      expect(verdict.reason).toContain('Resource not accessible by integration');
      expect(verdict.reason).toContain('Commit statuses read');
    } finally {
      await narrow.close();
    }
  });
});

/**
 * GitHub keeps a completed check run completed with its conclusion (the sandbox answers as GitHub
 * does: packages/github-sandbox/test/checks.test.ts cites the sources). A gate that goes back to
 * pending is a new run of its name, and the newest run is what required checks and auto-merge read.
 */
describe('ensureCheckRun when a passed gate goes back to pending', () => {
  const id = { owner, repo: 'reopen' };
  const passed = { status: 'completed', conclusion: 'success', title: 'health: passed', summary: 'healthy' } as const;
  const waiting = { status: 'in_progress', title: 'health: waiting', summary: 'Degraded for 20s' } as const;

  it('creates a new run, so the required check is pending on GitHub terms and auto-merge waits', async () => {
    await user.rest.repos.update({ ...id, allow_auto_merge: true });
    await requireInRuleset('reopen', ['escalator/health']);
    const pull = await openPull('reopen');
    const first = await ensureCheckRun(app, id, pull.sha, 'escalator/health', passed);
    // Same state and text: no write at all.
    expect(await ensureCheckRun(app, id, pull.sha, 'escalator/health', passed)).toBe(first);

    const second = await ensureCheckRun(app, id, pull.sha, 'escalator/health', waiting);
    expect(second).not.toBe(first);
    expect((await app.rest.checks.get({ ...id, check_run_id: first })).data).toMatchObject({
      status: 'completed',
      conclusion: 'success',
    });
    expect(await requiredChecksPassed(app, id, pull.sha, ['escalator/health'])).toMatchObject({
      passed: false,
      checks: [{ context: 'escalator/health', state: 'pending', via: 'check-run' }],
    });
    // GitHub's auto-merge waits on the newest run: enabled, not merged.
    expect(
      (await enableAutoMerge(app, { pullNodeId: pull.nodeId, method: 'merge', expectedHeadOid: pull.sha })).outcome,
    ).toBe('enabled');
    expect((await app.rest.pulls.get({ ...id, pull_number: pull.number })).data.merged).toBe(false);
    await expect(app.rest.pulls.merge({ ...id, pull_number: pull.number, sha: pull.sha })).rejects.toMatchObject({
      status: 405,
    });

    // Still pending with new text: the same in-progress run is updated in place.
    expect(
      await ensureCheckRun(app, id, pull.sha, 'escalator/health', { ...waiting, summary: 'Degraded for 40s' }),
    ).toBe(second);
    // Passed again: the in-progress run completes in place, and GitHub merges.
    expect(await ensureCheckRun(app, id, pull.sha, 'escalator/health', passed)).toBe(second);
    expect((await app.rest.pulls.get({ ...id, pull_number: pull.number })).data.merged).toBe(true);
    const runs = await app.rest.checks.listForRef({
      ...id,
      ref: pull.sha,
      check_name: 'escalator/health',
      filter: 'all',
    });
    expect(runs.data.check_runs.map((run) => [run.id, run.status, run.conclusion])).toEqual([
      [second, 'completed', 'success'],
      [first, 'completed', 'success'],
    ]);
  });

  it('a completed run changing its conclusion is a new run too; a new text alone is written in place', async () => {
    const { sha } = await client.commit(`${owner}/reopen`, { branch: 'conclusions', files: { 'c.txt': 'c\n' } });
    const ok = await ensureCheckRun(app, id, sha, 'escalator/hold', { ...passed, title: 'hold: passed' });
    expect(
      await ensureCheckRun(app, id, sha, 'escalator/hold', { ...passed, title: 'hold: passed', summary: 'no hold' }),
    ).toBe(ok);
    const held = await ensureCheckRun(app, id, sha, 'escalator/hold', {
      status: 'completed',
      conclusion: 'failure',
      title: 'hold: blocked',
      summary: 'on hold',
    });
    expect(held).not.toBe(ok);
    expect(await requiredChecksPassed(app, id, sha, ['escalator/hold'])).toMatchObject({
      checks: [{ context: 'escalator/hold', state: 'failed' }],
    });
  });
});
