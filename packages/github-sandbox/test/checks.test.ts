import type { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGitHubShaped, startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
let octokit: Octokit;
let head: string;
const repo = { owner: 'example', repo: 'checks' };

beforeAll(async () => {
  h = await startHarness();
  const seeded = await h.seedRepo('checks', { 'a.yaml': 'a: 1\n' });
  octokit = await h.installationOctokit(seeded.installationId);
  head = (await h.client.commit('example/checks', { branch: 'feature', files: { 'a.yaml': 'a: 2\n' } })).sha;
  await h.client.openPull('example/checks', { title: 'Change a', head: 'feature' });
});

afterAll(async () => {
  expectGitHubShaped(h);
  await h.close();
});

describe('check runs', () => {
  it('creates an in-progress run and completes it with an output', async () => {
    const created = await octokit.rest.checks.create({
      ...repo,
      name: 'escalator/diff',
      head_sha: head,
      status: 'in_progress',
      external_id: 'diff-1',
    });
    expect(created.status).toBe(201);
    expect(created.data).toMatchObject({
      status: 'in_progress',
      conclusion: null,
      head_sha: head,
      app: { slug: 'escalator' },
    });
    expect(created.data.pull_requests.map((p) => p.number)).toEqual([1]);
    const updated = await octokit.rest.checks.update({
      ...repo,
      check_run_id: created.data.id,
      conclusion: 'success',
      output: { title: '1 target changed', summary: '1 target checked, 0 unchanged' },
    });
    expect(updated.data).toMatchObject({
      status: 'completed',
      conclusion: 'success',
      output: { title: '1 target changed' },
    });
    expect(updated.data.completed_at).toBeTruthy();
  });

  it('lists runs for a ref, latest per name, filtered by name', async () => {
    await octokit.rest.checks.create({
      ...repo,
      name: 'escalator/diff',
      head_sha: head,
      status: 'completed',
      conclusion: 'failure',
    });
    await octokit.rest.checks.create({ ...repo, name: 'escalator/config', head_sha: head, status: 'queued' });
    const latest = await octokit.rest.checks.listForRef({ ...repo, ref: 'feature' });
    expect(latest.data.check_runs.map((r) => [r.name, r.conclusion])).toEqual([
      ['escalator/config', null],
      ['escalator/diff', 'failure'],
    ]);
    const all = await octokit.rest.checks.listForRef({
      ...repo,
      ref: head,
      check_name: 'escalator/diff',
      filter: 'all',
    });
    expect(all.data.total_count).toBe(2);
  });

  it('refuses check runs from a user token, as only Apps may write them', async () => {
    await expect(h.userOctokit().rest.checks.create({ ...repo, name: 'x', head_sha: head })).rejects.toMatchObject({
      status: 403,
    });
  });

  it('sends check_run rerequested when a user re-runs a completed run', async () => {
    const run = await octokit.rest.checks.create({
      ...repo,
      name: 'escalator/rerun',
      head_sha: head,
      conclusion: 'neutral',
    });
    await h.client.rerequestCheckRun('example/checks', run.data.id);
    const [delivery] = await h.client.deliveries({ event: 'check_run' });
    expect(delivery).toMatchObject({
      action: 'rerequested',
      payload: { check_run: { id: run.data.id, head_sha: head }, sender: { login: 'developer' } },
    });
  });
});

/**
 * GitHub keeps a completed check run completed, with its conclusion: an update asking for
 * `in_progress` answers 200 and changes neither (GitHub staff in
 * github.com/orgs/community/discussions/24761, quoted in taskcluster/taskcluster#5085;
 * tektoncd/pipelines-as-code#998; Mergifyio/mergify#1989 and lyft/atlantis#265 create a new run
 * instead), and clearing the conclusion with null is a 422 (flutter/cocoon#5130). A new run of
 * the same name is what moves the check: the newest run of a name is the one that counts.
 */
describe('a completed check run', () => {
  it('does not go back to in_progress, keeps its conclusion, and is superseded by a newer run of its name', async () => {
    const done = await octokit.rest.checks.create({
      ...repo,
      name: 'escalator/health',
      head_sha: head,
      status: 'completed',
      conclusion: 'success',
      output: { title: 'health: passed', summary: 'dev runs hello 1.1.0 healthy' },
    });
    const reopened = await octokit.rest.checks.update({
      ...repo,
      check_run_id: done.data.id,
      status: 'in_progress',
      output: { title: 'health: waiting', summary: 'dev is Degraded' },
    });
    expect(reopened.status).toBe(200);
    expect(reopened.data).toMatchObject({
      status: 'completed',
      conclusion: 'success',
      completed_at: done.data.completed_at,
      output: { title: 'health: waiting', summary: 'dev is Degraded' },
    });
    const flipped = await octokit.rest.checks.update({ ...repo, check_run_id: done.data.id, conclusion: 'failure' });
    expect(flipped.data).toMatchObject({ status: 'completed', conclusion: 'success' });
    await expect(
      // What Mergify tried (Mergifyio/mergify#444): the typed client does not allow null, GitHub neither.
      octokit.request(`PATCH /repos/${repo.owner}/${repo.repo}/check-runs/${done.data.id}`, {
        status: 'in_progress',
        conclusion: null,
      }),
    ).rejects.toMatchObject({
      status: 422,
      message: expect.stringContaining("For 'properties/conclusion', nil is not a string."),
    });
    expect((await octokit.rest.checks.get({ ...repo, check_run_id: done.data.id })).data).toMatchObject({
      status: 'completed',
      conclusion: 'success',
    });

    // The way back to pending: a new run of the same name, which the ref's latest list shows.
    const pending = await octokit.rest.checks.create({
      ...repo,
      name: 'escalator/health',
      head_sha: head,
      status: 'in_progress',
    });
    const latest = await octokit.rest.checks.listForRef({ ...repo, ref: head, check_name: 'escalator/health' });
    expect(latest.data.check_runs.map((run) => [run.id, run.status])).toEqual([[pending.data.id, 'in_progress']]);
  });

  it('an in-progress run still completes in place', async () => {
    const run = await octokit.rest.checks.create({
      ...repo,
      name: 'escalator/soak',
      head_sha: head,
      status: 'in_progress',
    });
    const done = await octokit.rest.checks.update({ ...repo, check_run_id: run.data.id, conclusion: 'success' });
    expect(done.data).toMatchObject({ id: run.data.id, status: 'completed', conclusion: 'success' });
  });
});
