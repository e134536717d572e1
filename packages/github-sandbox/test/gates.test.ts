import type { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGitHubShaped, startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
let app: Octokit;
let admin: Octokit;
let writer: Octokit;
let counter = 0;

const AUTO_MERGE = `mutation ($input: EnablePullRequestAutoMergeInput!) {
  enablePullRequestAutoMerge(input: $input) { pullRequest { autoMergeRequest { enabledAt mergeMethod } } }
}`;

beforeAll(async () => {
  h = await startHarness();
  const created = await h.client.createUser('writer');
  for (const name of ['protected', 'ruled', 'auto']) {
    await h.client.createRepo({
      owner: 'example',
      name,
      files: { 'a.txt': 'a\n' },
      collaborators: { writer: 'write' },
    });
  }
  const installationId = (await h.client.createRepo({ owner: 'example', name: 'plain', files: { 'a.txt': 'a\n' } }))
    .installation_id;
  app = await h.installationOctokit(installationId ?? 0);
  admin = h.userOctokit();
  writer = h.userOctokit(created.token ?? '');
});

afterAll(async () => {
  expectGitHubShaped(h);
  await h.close();
});

/** A pull request into main from a fresh branch of `repo`, with its head SHA and node id. */
async function openPull(repo: string): Promise<{ number: number; sha: string; nodeId: string }> {
  counter += 1;
  const branch = `change-${counter}`;
  const { sha } = await h.client.commit(`example/${repo}`, { branch, files: { [`${branch}.txt`]: 'x\n' } });
  const { data } = await app.rest.pulls.create({
    owner: 'example',
    repo,
    title: `Change ${counter}`,
    head: branch,
    base: 'main',
  });
  return { number: data.number, sha, nodeId: data.node_id };
}

async function merge(octokit: Octokit, repo: string, number: number): Promise<unknown> {
  return octokit.rest.pulls.merge({ owner: 'example', repo, pull_number: number }).then(
    (response) => response.status,
    (error: unknown) => error,
  );
}

async function check(repo: string, sha: string, name: string, conclusion?: 'success' | 'failure'): Promise<number> {
  const { data } = await app.rest.checks.create({
    owner: 'example',
    repo,
    name,
    head_sha: sha,
    ...(conclusion ? { status: 'completed', conclusion } : { status: 'in_progress' }),
  });
  return data.id;
}

describe('classic branch protection', () => {
  const repo = { owner: 'example', repo: 'protected' };

  it('shows an unprotected branch to anyone who can read it', async () => {
    const { data } = await app.rest.repos.getBranch({ ...repo, branch: 'main' });
    expect(data).toMatchObject({
      name: 'main',
      protected: false,
      protection: { enabled: false, required_status_checks: { enforcement_level: 'off', contexts: [], checks: [] } },
    });
    await expect(admin.rest.repos.getBranchProtection({ ...repo, branch: 'main' })).rejects.toMatchObject({
      status: 404,
      response: { data: { message: 'Branch not protected' } },
    });
  });

  it('lets only admins protect a branch; an App without Administration gets 403', async () => {
    const body = {
      ...repo,
      branch: 'main',
      required_status_checks: { strict: false, contexts: [], checks: [{ context: 'escalator/soak' }] },
      enforce_admins: true,
      required_pull_request_reviews: null,
      restrictions: null,
    };
    await expect(app.rest.repos.updateBranchProtection(body)).rejects.toMatchObject({
      status: 403,
      response: { data: { message: 'Resource not accessible by integration' } },
    });
    await expect(writer.rest.repos.updateBranchProtection(body)).rejects.toMatchObject({
      status: 403,
      response: { data: { message: 'Must have admin rights to Repository.' } },
    });
    const { status, data } = await admin.rest.repos.updateBranchProtection(body);
    expect(status).toBe(200);
    expect(data.required_status_checks).toMatchObject({
      contexts: ['escalator/soak'],
      checks: [{ context: 'escalator/soak', app_id: null }],
    });
    expect(data.enforce_admins).toMatchObject({ enabled: true });
  });

  it('refuses what it does not simulate instead of ignoring it', async () => {
    await expect(
      admin.rest.repos.updateBranchProtection({
        ...repo,
        branch: 'main',
        required_status_checks: null,
        enforce_admins: null,
        required_pull_request_reviews: { required_approving_review_count: 1 },
        restrictions: null,
      }),
    ).rejects.toMatchObject({ status: 422 });
    await expect(
      admin.request('PUT /repos/{owner}/{repo}/branches/{branch}/protection', {
        ...repo,
        branch: 'main',
        required_status_checks: null,
      } as never),
    ).rejects.toMatchObject({ status: 422 });
    // The protection set above is untouched.
    const { data } = await admin.rest.repos.getStatusChecksProtection({ ...repo, branch: 'main' });
    expect(data.contexts).toEqual(['escalator/soak']);
  });

  it('shows the required checks on the branch to the App, but not the protection itself', async () => {
    const { data } = await app.rest.repos.getBranch({ ...repo, branch: 'main' });
    expect(data.protected).toBe(true);
    expect(data.protection.required_status_checks).toEqual({
      enforcement_level: 'everyone',
      contexts: ['escalator/soak'],
      checks: [{ context: 'escalator/soak', app_id: null }],
    });
    for (const call of [
      app.rest.repos.getBranchProtection({ ...repo, branch: 'main' }),
      app.rest.repos.getStatusChecksProtection({ ...repo, branch: 'main' }),
    ]) {
      await expect(call).rejects.toMatchObject({
        status: 403,
        response: { data: { message: 'Resource not accessible by integration' } },
      });
    }
  });

  it('blocks the merge until the required check passes on the head', async () => {
    const pull = await openPull('protected');
    const state = async () => (await app.rest.pulls.get({ ...repo, pull_number: pull.number })).data.mergeable_state;
    expect(await state()).toBe('blocked');
    const expected = {
      status: 405,
      response: { data: { message: 'Required status check "escalator/soak" is expected.' } },
    };
    expect(await merge(app, 'protected', pull.number)).toMatchObject(expected);
    // enforce_admins: the repository admin is held to it too.
    expect(await merge(admin, 'protected', pull.number)).toMatchObject(expected);
    const run = await check('protected', pull.sha, 'escalator/soak');
    expect(await merge(app, 'protected', pull.number)).toMatchObject(expected);
    await app.rest.checks.update({ ...repo, check_run_id: run, conclusion: 'failure' });
    expect(await merge(app, 'protected', pull.number)).toMatchObject({
      status: 405,
      response: { data: { message: 'Required status check "escalator/soak" is failing.' } },
    });
    expect(await state()).toBe('blocked');
    // A completed run keeps its conclusion (as on GitHub, test/checks.test.ts): passing again is a
    // new run of the name, and the newest run is the one the merge reads.
    await app.rest.checks.update({ ...repo, check_run_id: run, conclusion: 'success' });
    expect(await state()).toBe('blocked');
    await check('protected', pull.sha, 'escalator/soak', 'success');
    expect(await state()).toBe('clean');
    expect(await merge(app, 'protected', pull.number)).toBe(200);
  });

  it('lets an admin merge past protection that does not enforce admins', async () => {
    await admin.rest.repos.updateBranchProtection({
      ...repo,
      branch: 'main',
      required_status_checks: { strict: false, contexts: ['escalator/soak'] },
      enforce_admins: false,
      required_pull_request_reviews: null,
      restrictions: null,
    });
    const pull = await openPull('protected');
    expect(
      (await app.rest.repos.getBranch({ ...repo, branch: 'main' })).data.protection.required_status_checks,
    ).toMatchObject({ enforcement_level: 'non_admins' });
    expect(await merge(app, 'protected', pull.number)).toMatchObject({ status: 405 });
    expect(await merge(admin, 'protected', pull.number)).toBe(200);
  });
});

describe('rulesets', () => {
  const repo = { owner: 'example', repo: 'ruled' };
  const ruleset = (checks: { context: string; integration_id?: number }[]) => ({
    ...repo,
    name: `gates-${(counter += 1)}`,
    enforcement: 'active' as const,
    conditions: { ref_name: { include: ['~DEFAULT_BRANCH'], exclude: [] } },
    rules: [
      {
        type: 'required_status_checks' as const,
        parameters: { required_status_checks: checks, strict_required_status_checks_policy: false },
      },
    ],
  });

  it('are created by admins only, and their rules are readable by the App per branch', async () => {
    await expect(app.rest.repos.createRepoRuleset(ruleset([{ context: 'escalator/hold' }]))).rejects.toMatchObject({
      status: 403,
    });
    const { status, data } = await admin.rest.repos.createRepoRuleset(ruleset([{ context: 'escalator/hold' }]));
    expect(status).toBe(201);
    expect(data).toMatchObject({ enforcement: 'active', source_type: 'Repository', source: 'example/ruled' });
    const rules = await app.rest.repos.getBranchRules({ ...repo, branch: 'main' });
    expect(rules.data).toEqual([
      {
        type: 'required_status_checks',
        parameters: {
          do_not_enforce_on_create: false,
          required_status_checks: [{ context: 'escalator/hold' }],
          strict_required_status_checks_policy: false,
        },
        ruleset_source_type: 'Repository',
        ruleset_source: 'example/ruled',
        ruleset_id: data.id,
      },
    ]);
    expect((await app.rest.repos.getBranchRules({ ...repo, branch: 'other' })).data).toEqual([]);
    expect((await app.rest.repos.getBranch({ ...repo, branch: 'main' })).data).toMatchObject({
      protected: true,
      protection: { enabled: false, required_status_checks: { enforcement_level: 'off', contexts: [] } },
    });
  });

  it('refuses rule types it does not simulate', async () => {
    await expect(
      admin.rest.repos.createRepoRuleset({
        ...repo,
        name: 'linear',
        enforcement: 'active',
        rules: [{ type: 'required_linear_history' }],
      }),
    ).rejects.toMatchObject({ status: 422 });
  });

  it('hold everyone, admins included; a commit status satisfies a required context', async () => {
    const pull = await openPull('ruled');
    expect(await merge(admin, 'ruled', pull.number)).toMatchObject({
      status: 405,
      response: { data: { message: 'Required status check "escalator/hold" is expected.' } },
    });
    await expect(
      app.rest.repos.createCommitStatus({ ...repo, sha: pull.sha, state: 'success', context: 'escalator/hold' }),
    ).rejects.toMatchObject({ status: 403, response: { data: { message: 'Resource not accessible by integration' } } });
    const { status } = await writer.rest.repos.createCommitStatus({
      ...repo,
      sha: pull.sha,
      state: 'success',
      context: 'escalator/hold',
    });
    expect(status).toBe(201);
    const combined = await app.rest.repos.getCombinedStatusForRef({ ...repo, ref: pull.sha });
    expect(combined.data).toMatchObject({
      state: 'success',
      total_count: 1,
      statuses: [{ context: 'escalator/hold' }],
    });
    expect(await merge(app, 'ruled', pull.number)).toBe(200);
  });

  it('honour integration_id: a check from another App does not count', async () => {
    await admin.rest.repos.createRepoRuleset(ruleset([{ context: 'ci/other-app', integration_id: 999_999 }]));
    const pull = await openPull('ruled');
    await writer.rest.repos.createCommitStatus({ ...repo, sha: pull.sha, state: 'success', context: 'escalator/hold' });
    await check('ruled', pull.sha, 'ci/other-app', 'success');
    expect(await merge(app, 'ruled', pull.number)).toMatchObject({
      status: 405,
      response: { data: { message: 'Required status check "ci/other-app" is expected.' } },
    });
  });
});

describe('up-to-date branches', () => {
  it('make a pull request behind its base wait (409, `behind`) while the rule holds', async () => {
    const repo = { owner: 'example', repo: 'plain' };
    await admin.rest.repos.updateBranchProtection({
      ...repo,
      branch: 'main',
      required_status_checks: { strict: true, contexts: ['ci'] },
      enforce_admins: true,
      required_pull_request_reviews: null,
      restrictions: null,
    });
    const pull = await openPull('plain');
    await admin.rest.repos.createCommitStatus({ ...repo, sha: pull.sha, state: 'success', context: 'ci' });
    const state = async () => (await app.rest.pulls.get({ ...repo, pull_number: pull.number })).data.mergeable_state;
    expect(await state()).toBe('clean');
    await h.client.commit('example/plain', { branch: 'main', files: { 'elsewhere.txt': 'y\n' } });
    expect(await state()).toBe('behind');
    expect(await merge(app, 'plain', pull.number)).toMatchObject({
      status: 409,
      response: { data: { message: 'Head branch is out of date. Review and try the merge again.' } },
    });
    await admin.rest.repos.deleteBranchProtection({ ...repo, branch: 'main' });
    expect(await state()).toBe('clean');
    expect(await merge(app, 'plain', pull.number)).toBe(200);
  });
});

describe('native auto-merge', () => {
  const repo = { owner: 'example', repo: 'auto' };
  const enable = (pullRequestId: string, extra: Record<string, unknown> = {}) =>
    app.graphql(AUTO_MERGE, { input: { pullRequestId, mergeMethod: 'SQUASH', ...extra } }).catch((e: unknown) => e);

  it('is refused while the repository does not allow it', async () => {
    const pull = await openPull('auto');
    expect(await enable(pull.nodeId)).toMatchObject({
      errors: [
        {
          type: 'UNPROCESSABLE',
          path: ['enablePullRequestAutoMerge'],
          message: 'Auto merge is not allowed for this repository',
        },
      ],
    });
    expect((await app.rest.pulls.get({ ...repo, pull_number: pull.number })).data.auto_merge).toBeNull();
  });

  it('is a setting only admins change', async () => {
    await expect(app.rest.repos.update({ ...repo, allow_auto_merge: true })).rejects.toMatchObject({ status: 403 });
    const { data } = await admin.rest.repos.update({ ...repo, allow_auto_merge: true });
    expect(data.allow_auto_merge).toBe(true);
    expect((await app.rest.repos.get(repo)).data.allow_auto_merge).toBe(true);
  });

  it('is refused for a pull request that could merge right now', async () => {
    const pull = await openPull('auto');
    expect(await enable(pull.nodeId)).toMatchObject({
      errors: [{ type: 'UNPROCESSABLE', message: 'Pull request Pull request is in clean status' }],
    });
    // A check nobody requires that still runs makes it `unstable`: still nothing to wait for.
    await check('auto', pull.sha, 'lint');
    expect((await app.rest.pulls.get({ ...repo, pull_number: pull.number })).data.mergeable_state).toBe('unstable');
    expect(await enable(pull.nodeId)).toMatchObject({
      errors: [{ type: 'UNPROCESSABLE', message: 'Pull request Pull request is in unstable status' }],
    });
  });

  it('merges the pull request once every required check passes, as the one who enabled it', async () => {
    await admin.rest.repos.createRepoRuleset({
      ...repo,
      name: 'soak',
      enforcement: 'active',
      conditions: { ref_name: { include: ['refs/heads/main'], exclude: [] } },
      rules: [
        {
          type: 'required_status_checks',
          parameters: {
            required_status_checks: [{ context: 'escalator/soak' }],
            strict_required_status_checks_policy: false,
          },
        },
      ],
    });
    const pull = await openPull('auto');
    expect(await enable(pull.nodeId, { expectedHeadOid: '0'.repeat(40) })).toMatchObject({
      errors: [{ type: 'UNPROCESSABLE' }],
    });
    const result = await app.graphql<{
      enablePullRequestAutoMerge: { pullRequest: { autoMergeRequest: { mergeMethod: string } } };
    }>(AUTO_MERGE, { input: { pullRequestId: pull.nodeId, mergeMethod: 'SQUASH', expectedHeadOid: pull.sha } });
    expect(result.enablePullRequestAutoMerge.pullRequest.autoMergeRequest.mergeMethod).toBe('SQUASH');
    const open = await app.rest.pulls.get({ ...repo, pull_number: pull.number });
    expect(open.data).toMatchObject({
      state: 'open',
      mergeable_state: 'blocked',
      auto_merge: { merge_method: 'squash', enabled_by: { login: 'escalator[bot]' } },
    });
    const run = await check('auto', pull.sha, 'escalator/soak');
    expect((await app.rest.pulls.get({ ...repo, pull_number: pull.number })).data.state).toBe('open');
    await app.rest.checks.update({ ...repo, check_run_id: run, conclusion: 'success' });
    const merged = await app.rest.pulls.get({ ...repo, pull_number: pull.number });
    expect(merged.data).toMatchObject({ state: 'closed', merged: true, merged_by: { login: 'escalator[bot]' } });
    const main = await app.rest.repos.getBranch({ ...repo, branch: 'main' });
    expect(main.data.commit.sha).toBe(merged.data.merge_commit_sha);
    expect(main.data.commit.parents.map((parent) => parent.sha)).not.toContain(pull.sha);
    const events = (await h.client.deliveries({ event: 'pull_request' }))
      .reverse()
      .filter(
        (d) =>
          (d.payload as { pull_request: { number: number; base: { repo: { name: string } } } }).pull_request.number ===
            pull.number && (d.payload as { repository: { name: string } }).repository.name === 'auto',
      );
    expect(events.map((d) => d.action)).toEqual(['opened', 'auto_merge_enabled', 'closed']);
    expect(events.at(-1)?.payload).toMatchObject({ pull_request: { merged: true } });
  });

  it('can be turned off again, and then nothing merges the pull request', async () => {
    const DISABLE = `mutation ($input: DisablePullRequestAutoMergeInput!) {
      disablePullRequestAutoMerge(input: $input) { pullRequest { number } }
    }`;
    const pull = await openPull('auto');
    const notOn = await app.graphql(DISABLE, { input: { pullRequestId: pull.nodeId } }).catch((e: unknown) => e);
    expect(notOn).toMatchObject({ errors: [{ type: 'UNPROCESSABLE', message: expect.stringMatching(/not enabled/) }] });
    await app.graphql(AUTO_MERGE, { input: { pullRequestId: pull.nodeId, mergeMethod: 'MERGE' } });
    await app.graphql(DISABLE, { input: { pullRequestId: pull.nodeId } });
    expect((await app.rest.pulls.get({ ...repo, pull_number: pull.number })).data.auto_merge).toBeNull();
    await check('auto', pull.sha, 'escalator/soak', 'success');
    expect((await app.rest.pulls.get({ ...repo, pull_number: pull.number })).data).toMatchObject({
      state: 'open',
      mergeable_state: 'clean',
    });
  });

  it('follows the rules: a ruleset deleted leaves nothing to wait for', async () => {
    const rulesetId = (await admin.rest.repos.getBranchRules({ ...repo, branch: 'main' })).data[0]?.ruleset_id ?? 0;
    const pull = await openPull('auto');
    await app.graphql(AUTO_MERGE, { input: { pullRequestId: pull.nodeId, mergeMethod: 'MERGE' } });
    await expect(app.rest.repos.deleteRepoRuleset({ ...repo, ruleset_id: rulesetId })).rejects.toMatchObject({
      status: 403,
    });
    expect((await admin.rest.repos.deleteRepoRuleset({ ...repo, ruleset_id: rulesetId })).status).toBe(204);
    expect((await app.rest.pulls.get({ ...repo, pull_number: pull.number })).data.merged).toBe(true);
  });

  it('answers NOT_FOUND for a node it cannot see, and stays strict about other operations', async () => {
    expect(await enable('PR_nothing')).toMatchObject({ errors: [{ type: 'NOT_FOUND' }] });
    await expect(
      app.graphql('mutation { mergePullRequest(input: {pullRequestId: "x"}) { clientMutationId } }'),
    ).rejects.toMatchObject({
      errors: [
        {
          message: expect.stringContaining(
            'implements only the createCommitOnBranch, enablePullRequestAutoMerge, disablePullRequestAutoMerge and pinIssue',
          ),
        },
      ],
    });
  });
});
