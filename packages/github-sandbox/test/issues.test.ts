import type { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGitHubShaped, startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
let octokit: Octokit;
const repo = { owner: 'example', repo: 'tracker' };

beforeAll(async () => {
  // An App that subscribes to `issues` too, so GitHub would deliver them.
  h = await startHarness({ app: { events: ['check_run', 'issue_comment', 'issues', 'pull_request', 'push'] } });
  const seeded = await h.seedRepo('tracker', { 'README.md': '# tracker\n' });
  octokit = await h.installationOctokit(seeded.installationId);
});

afterAll(async () => {
  await h.sim.context.webhooks.idle();
  expectGitHubShaped(h);
  await h.close();
});

async function issueEvents(number: number): Promise<string[]> {
  await h.client.deliveries();
  return h.received
    .filter((w) => w.headers['x-github-event'] === 'issues')
    .filter((w) => (w.payload.issue as { number: number }).number === number)
    .map((w) => String(w.payload.action));
}

describe('issues', () => {
  it('opens, labels, edits, locks and closes an issue, with the issues events GitHub sends', async () => {
    const { data: issue } = await octokit.rest.issues.create({ ...repo, title: 'Dashboard', labels: ['escalator'] });
    expect(issue).toMatchObject({ title: 'Dashboard', state: 'open', labels: [{ name: 'escalator' }] });
    expect(issue.user?.login).toBe(`${h.sim.app.slug}[bot]`);
    await octokit.rest.issues.addLabels({ ...repo, issue_number: issue.number, labels: ['bug'] });
    await octokit.rest.issues.update({ ...repo, issue_number: issue.number, body: 'All environments' });
    await octokit.rest.issues.lock({ ...repo, issue_number: issue.number, lock_reason: 'resolved' });
    const { data: locked } = await octokit.rest.issues.get({ ...repo, issue_number: issue.number });
    expect(locked).toMatchObject({ locked: true, active_lock_reason: 'resolved', body: 'All environments' });
    await octokit.rest.issues.unlock({ ...repo, issue_number: issue.number });
    const { data: closed } = await octokit.rest.issues.update({ ...repo, issue_number: issue.number, state: 'closed' });
    expect(closed).toMatchObject({ state: 'closed', state_reason: 'completed', locked: false });
    expect(await issueEvents(issue.number)).toEqual([
      'opened',
      'labeled',
      'labeled',
      'edited',
      'locked',
      'unlocked',
      'closed',
    ]);
  });

  it('takes comments on an issue, with issue_comment events carrying the issue', async () => {
    const { data: issue } = await octokit.rest.issues.create({ ...repo, title: 'Talk' });
    const { data: comment } = await octokit.rest.issues.createComment({
      ...repo,
      issue_number: issue.number,
      body: 'hi',
    });
    expect(comment.html_url).toContain(`/issues/${issue.number}#issuecomment-${comment.id}`);
    await octokit.rest.issues.updateComment({ ...repo, comment_id: comment.id, body: 'hello' });
    const { data: listed } = await octokit.rest.issues.listComments({ ...repo, issue_number: issue.number });
    expect(listed.map((c) => c.body)).toEqual(['hello']);
    await octokit.rest.issues.deleteComment({ ...repo, comment_id: comment.id });
    await h.client.deliveries();
    const events = h.received
      .filter((w) => w.headers['x-github-event'] === 'issue_comment')
      .filter((w) => (w.payload.issue as { number: number }).number === issue.number);
    expect(events.map((w) => w.payload.action)).toEqual(['created', 'edited', 'deleted']);
    expect(events[0]?.payload.issue).not.toHaveProperty('pull_request');
  });

  it('lists issues and pull requests page by page through /repositories/{id} links', async () => {
    for (let i = 1; i <= 4; i += 1) await octokit.rest.issues.create({ ...repo, title: `Page ${i}` });
    const first = await octokit.rest.issues.listForRepo({ ...repo, state: 'all', per_page: 2 });
    const { data: meta } = await octokit.rest.repos.get(repo);
    expect(first.headers.link).toContain(`/repositories/${meta.id}/issues?`);
    expect(first.headers['last-modified']).toBeUndefined();
    const all = await octokit.paginate(octokit.rest.issues.listForRepo, { ...repo, state: 'all', per_page: 2 });
    expect(all.map((issue) => issue.title)).toEqual(['Page 4', 'Page 3', 'Page 2', 'Page 1', 'Talk', 'Dashboard']);
    const open = await octokit.paginate(octokit.rest.issues.listForRepo, { ...repo, labels: 'escalator' });
    expect(open).toEqual([]);
  });

  it('answers 404 for an issue that does not exist, and 422 for a lock reason GitHub does not know', async () => {
    await expect(octokit.rest.issues.get({ ...repo, issue_number: 999 })).rejects.toMatchObject({ status: 404 });
    const { data: issue } = await octokit.rest.issues.create({ ...repo, title: 'Lock me' });
    await expect(
      octokit.request('PUT /repos/{owner}/{repo}/issues/{issue_number}/lock', {
        ...repo,
        issue_number: issue.number,
        lock_reason: 'bored' as never,
      }),
    ).rejects.toMatchObject({ status: 422 });
  });
});

describe('labels', () => {
  it('starts with GitHub’s default labels, and a renamed or deleted label follows onto issues', async () => {
    const { data: defaults } = await octokit.rest.issues.listLabelsForRepo({ ...repo, per_page: 100 });
    expect(defaults.filter((label) => label.default).map((label) => label.name)).toContain('good first issue');
    const { data: issue } = await octokit.rest.issues.create({ ...repo, title: 'Labelled', labels: ['env:dev'] });
    await octokit.rest.issues.updateLabel({ ...repo, name: 'env:dev', new_name: 'env:development', color: 'BADA55' });
    const { data: renamed } = await octokit.rest.issues.get({ ...repo, issue_number: issue.number });
    expect(renamed.labels).toMatchObject([{ name: 'env:development', color: 'BADA55' }]);
    await octokit.rest.issues.deleteLabel({ ...repo, name: 'env:development' });
    const { data: bare } = await octokit.rest.issues.get({ ...repo, issue_number: issue.number });
    expect(bare.labels).toEqual([]);
  });

  it('refuses a color that is not six hex digits, and a name that exists', async () => {
    await expect(octokit.rest.issues.createLabel({ ...repo, name: 'x', color: '#ff0000' })).rejects.toMatchObject({
      status: 422,
      response: { data: { errors: [{ resource: 'Label', code: 'invalid', field: 'color' }] } },
    });
    await expect(octokit.rest.issues.createLabel({ ...repo, name: 'BUG' })).rejects.toMatchObject({
      status: 422,
      response: { data: { errors: [{ resource: 'Label', code: 'already_exists', field: 'name' }] } },
    });
  });
});

describe('repository rename', () => {
  it('redirects the former name: 301 for reads (which clients follow), 307 for writes', async () => {
    await h.client.createRepo({ owner: 'example', name: 'before', files: { 'README.md': 'x\n' } });
    const user = h.userOctokit();
    const { data: renamed } = await user.rest.repos.update({ owner: 'example', repo: 'before', name: 'after' });
    expect(renamed.full_name).toBe('example/after');
    const { data: followed } = await user.rest.repos.get({ owner: 'example', repo: 'before' });
    expect(followed.full_name).toBe('example/after');
    const moved = await fetch(`${h.sim.apiUrl}/repos/example/before`, {
      method: 'PATCH',
      redirect: 'manual',
      headers: { authorization: `token ${h.sim.user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ description: 'moved' }),
    });
    expect(moved.status).toBe(307);
    expect(moved.headers.get('location')).toBe(`${h.sim.apiUrl}/repositories/${renamed.id}`);
    const { data: patched } = await user.request('PATCH /repositories/{id}', { id: renamed.id, description: 'moved' });
    expect(patched).toMatchObject({ full_name: 'example/after', description: 'moved' });
  });
});
