import type { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGitHubShaped, startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
let octokit: Octokit;
const repo = { owner: 'example', repo: 'issues' };

beforeAll(async () => {
  h = await startHarness();
  const seeded = await h.seedRepo('issues', { 'README.md': 'hi\n' });
  octokit = await h.installationOctokit(seeded.installationId);
});

afterAll(async () => {
  // Every request, response and webhook above matches GitHub's OpenAPI and webhook schemas.
  expectGitHubShaped(h);
  await h.close();
});

describe('standalone issues', () => {
  it('creates, lists by creator, reads, edits (issues.edited with the old body) and comments on an issue', async () => {
    const created = await octokit.rest.issues.create({ ...repo, title: 'Escalator: environments', body: 'one' });
    expect(created.status).toBe(201);
    expect(created.data).toMatchObject({ title: 'Escalator: environments', body: 'one', state: 'open' });
    expect(created.data.pull_request).toBeUndefined();
    const listed = await octokit.rest.issues.listForRepo({ ...repo, creator: 'escalator[bot]', state: 'open' });
    expect(listed.data.map((i) => i.number)).toEqual([created.data.number]);
    expect((await octokit.rest.issues.listForRepo({ ...repo, creator: 'someone-else' })).data).toEqual([]);
    expect((await octokit.rest.issues.get({ ...repo, issue_number: created.data.number })).data.body).toBe('one');

    const user = h.userOctokit();
    await user.rest.issues.update({ ...repo, issue_number: created.data.number, body: 'two' });
    await h.client.deliveries({ event: 'issues' }); // waits until every webhook was delivered
    const edited = h.received.filter((w) => w.headers['x-github-event'] === 'issues' && w.payload.action === 'edited');
    expect(edited.at(-1)?.payload.changes).toEqual({ body: { from: 'one' } });
    expect((edited.at(-1)?.payload.issue as { body: string }).body).toBe('two');

    await octokit.rest.issues.createComment({ ...repo, issue_number: created.data.number, body: 'answered' });
    const comments = await octokit.rest.issues.listComments({ ...repo, issue_number: created.data.number });
    expect(comments.data.map((c) => c.body)).toEqual(['answered']);
  });

  it('refuses an edit by someone without triage access', async () => {
    const created = await octokit.rest.issues.create({ ...repo, title: 'mine', body: 'x' });
    const stranger = await h.client.createUser('stranger');
    const as = h.userOctokit(stranger.token as string);
    await expect(
      as.rest.issues.update({ ...repo, issue_number: created.data.number, body: 'y' }),
    ).rejects.toMatchObject({
      status: expect.any(Number),
    });
    expect((await octokit.rest.issues.get({ ...repo, issue_number: created.data.number })).data.body).toBe('x');
  });

  it('pins an issue with GraphQL pinIssue, at most three per repository', async () => {
    const pin = async (nodeId: string) =>
      octokit.graphql<{ pinIssue: { issue: { id: string } } }>(
        'mutation ($input: PinIssueInput!) { pinIssue(input: $input) { issue { id } } }',
        { input: { issueId: nodeId } },
      );
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push((await octokit.rest.issues.create({ ...repo, title: `pin ${i}` })).data.node_id);
    for (const id of ids.slice(0, 3)) expect((await pin(id)).pinIssue.issue.id).toBe(id);
    await expect(pin(ids[3]!)).rejects.toThrow('Repository already has 3 pinned issues');
  });
});
