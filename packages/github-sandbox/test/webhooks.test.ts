import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGitHubShaped, startHarness, type Harness, type ReceivedWebhook } from '../testing/harness.js';
import { examples, missingKeys } from '../testing/webhook-schemas.js';

let h: Harness;
let octokit: Octokit;
const repo = { owner: 'example', repo: 'hooks' };
const full = 'example/hooks';

beforeAll(async () => {
  h = await startHarness();
  const seeded = await h.seedRepo('hooks', {
    'apps/hello/overlays/dev/kustomization.yaml': 'images: []\n',
    'old.txt': 'old\n',
  });
  octokit = await h.installationOctokit(seeded.installationId);
});

afterAll(async () => {
  expectGitHubShaped(h);
  await h.close();
});

async function received(event: string, action?: string): Promise<ReceivedWebhook[]> {
  await h.client.deliveries();
  return h.received.filter((w) => w.headers['x-github-event'] === event && (!action || w.payload.action === action));
}

function signatureOk(webhook: ReceivedWebhook): boolean {
  const expected = Buffer.from(
    `sha256=${createHmac('sha256', h.sim.app.webhookSecret).update(webhook.body).digest('hex')}`,
  );
  const given = Buffer.from(String(webhook.headers['x-hub-signature-256']));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

describe('push', () => {
  it('describes a user push: refs, commits with added/modified/removed, repository, pusher, installation', async () => {
    const { sha, before } = await h.client.commit(full, {
      branch: 'main',
      message: 'Bump dev',
      files: {
        'apps/hello/overlays/dev/kustomization.yaml': 'images:\n  - {name: ghcr.io/example/hello, newTag: 1.0.1}\n',
        'new.txt': 'new\n',
        'old.txt': null,
      },
    });
    const [push] = (await received('push')).slice(-1);
    if (!push) throw new Error('no push webhook');
    expect(signatureOk(push)).toBe(true);
    expect(push.headers['x-github-delivery']).toMatch(/^[0-9a-f-]{36}$/);
    expect(push.headers['x-github-hook-installation-target-id']).toBe(String(h.sim.app.id));
    expect(push.headers['content-type']).toBe('application/json');
    expect(push.payload).toMatchObject({
      ref: 'refs/heads/main',
      before,
      after: sha,
      created: false,
      deleted: false,
      forced: false,
      repository: { full_name: full, html_url: `${h.sim.url}/${full}`, default_branch: 'main' },
      pusher: { name: 'developer' },
      sender: { login: 'developer' },
      installation: { id: expect.any(Number) },
      head_commit: { id: sha, message: 'Bump dev' },
    });
    const commits = push.payload.commits as { id: string; added: string[]; modified: string[]; removed: string[] }[];
    expect(commits).toEqual([
      expect.objectContaining({
        id: sha,
        added: ['new.txt'],
        modified: ['apps/hello/overlays/dev/kustomization.yaml'],
        removed: ['old.txt'],
      }),
    ]);
  });

  it('marks API ref creation, forced updates and deletion', async () => {
    const main = (await octokit.rest.git.getRef({ ...repo, ref: 'heads/main' })).data.object.sha;
    await octokit.rest.git.createRef({ ...repo, ref: 'refs/heads/api-branch', sha: main });
    const parent = (await octokit.rest.git.getCommit({ ...repo, commit_sha: main })).data.parents[0]?.sha ?? '';
    await octokit.rest.git.updateRef({ ...repo, ref: 'heads/api-branch', sha: parent, force: true });
    await octokit.rest.git.deleteRef({ ...repo, ref: 'heads/api-branch' });
    const pushes = (await received('push'))
      .filter((w) => w.payload.ref === 'refs/heads/api-branch')
      .map((w) => w.payload);
    expect(pushes.map((p) => [p.created, p.forced, p.deleted])).toEqual([
      [true, false, false],
      [false, true, false],
      [false, false, true],
    ]);
    expect(pushes[0]).toMatchObject({
      sender: { login: 'escalator[bot]', type: 'Bot' },
      commits: [],
      head_commit: { id: main },
    });
    expect(pushes[2]).toMatchObject({ after: '0'.repeat(40), head_commit: null });
  });
});

describe('pull_request and issue_comment', () => {
  it('sends opened, synchronize, labeled and closed with merged', async () => {
    await h.client.commit(full, { branch: 'bump', files: { 'a.txt': '1' } });
    const pull = await h.client.openPull(full, { title: 'Bump', head: 'bump' });
    const second = await h.client.commit(full, { branch: 'bump', files: { 'a.txt': '2' } });
    await octokit.rest.issues.addLabels({ ...repo, issue_number: pull.number, labels: ['escalator'] });
    await h.client.mergePull(full, pull.number, { method: 'squash' });
    const events = (await received('pull_request'))
      .filter((w) => w.payload.number === pull.number)
      .map((w) => w.payload);
    expect(events.map((p) => p.action)).toEqual(['opened', 'synchronize', 'labeled', 'closed']);
    expect(events[1]).toMatchObject({
      before: pull.head.sha,
      after: second.sha,
      pull_request: { head: { sha: second.sha } },
    });
    expect(events[2]).toMatchObject({ label: { name: 'escalator' } });
    expect(events[3]).toMatchObject({
      pull_request: { merged: true, state: 'closed', merged_by: { login: 'developer' } },
    });
  });

  it('sends issue_comment created with the issue marked as a pull request', async () => {
    await h.client.commit(full, { branch: 'talk', files: { 'b.txt': '1' } });
    const pull = await h.client.openPull(full, { title: 'Talk', head: 'talk' });
    await h.client.comment(full, pull.number, '/escalator rerender');
    const [comment] = (await received('issue_comment', 'created')).slice(-1);
    expect(comment?.payload).toMatchObject({
      issue: { number: pull.number, pull_request: { url: expect.stringContaining(`/pulls/${pull.number}`) } },
      comment: { body: '/escalator rerender', user: { login: 'developer' } },
    });
  });

  it('sends reopened, and check_run rerequested when a user re-runs a check', async () => {
    await h.client.commit(full, { branch: 'again', files: { 'd.txt': '1' } });
    const pull = await h.client.openPull(full, { title: 'Again', head: 'again' });
    await octokit.rest.pulls.update({ ...repo, pull_number: pull.number, state: 'closed' });
    await octokit.rest.pulls.update({ ...repo, pull_number: pull.number, state: 'open' });
    const run = await octokit.rest.checks.create({
      ...repo,
      name: 'escalator/diff',
      head_sha: pull.head.sha,
      conclusion: 'success',
    });
    await h.client.rerequestCheckRun(full, run.data.id);
    expect((await received('pull_request', 'reopened')).at(-1)?.payload).toMatchObject({
      number: pull.number,
      pull_request: { state: 'open' },
    });
    expect((await received('check_run', 'rerequested')).at(-1)?.payload).toMatchObject({
      check_run: { id: run.data.id, pull_requests: [{ number: pull.number }] },
    });
  });

  it('sends installation and installation_repositories when the App is installed', async () => {
    await h.client.createRepo({ owner: 'example', name: 'second', files: { x: 'y' } });
    await h.client.createRepo({ owner: 'another-org', name: 'third', files: { x: 'y' } });
    const added = await received('installation_repositories', 'added');
    expect(added.at(-1)?.payload).toMatchObject({ repositories_added: [{ full_name: 'example/second' }] });
    const created = await received('installation', 'created');
    expect(created.at(-1)?.payload).toMatchObject({
      installation: { account: { login: 'another-org' } },
      repositories: [{ full_name: 'another-org/third' }],
    });
  });
});

describe('deliveries API', () => {
  it('lists deliveries with cursor pagination, shows one, and redelivers with the same GUID', async () => {
    const app = h.appOctokit();
    const all = await app.paginate(app.rest.apps.listWebhookDeliveries, { per_page: 5 });
    expect(all.length).toBe(h.sim.context.webhooks.deliveries.length);
    const first = all[0];
    if (!first) throw new Error('no deliveries');
    const one = await app.rest.apps.getWebhookDelivery({ delivery_id: first.id });
    expect(one.data.request.headers?.['x-github-delivery']).toBe(first.guid);
    const redelivered = await app.rest.apps.redeliverWebhookDelivery({ delivery_id: first.id });
    expect(redelivered.status).toBe(202);
    await h.client.deliveries();
    const copies = h.received.filter((w) => w.headers['x-github-delivery'] === first.guid);
    expect(copies).toHaveLength(2);
    expect(copies[1]?.body).toBe(copies[0]?.body);
  });

  it('records a failing receiver in the log', async () => {
    await h.client.setWebhookUrl('http://127.0.0.1:9/unreachable');
    await h.client.commit(full, { branch: 'main', files: { 'c.txt': 'c' } });
    const [latest] = await h.client.deliveries();
    expect(latest?.status).toMatch(/^failed to connect/);
    const hook = h.received[0]?.headers.host ?? '';
    await h.client.setWebhookUrl(`http://${hook}/api/github/webhooks`);
  });
});

describe("payloads match GitHub's examples", () => {
  // Keys GitHub sends only for some accounts or events (organization, enterprise) and fields
  // that older examples carry but GitHub's current schema forbids.
  const optional: Record<string, string[]> = {
    top: ['organization', 'enterprise'],
    installation: ['app_slug', 'client_id'],
  };

  it('has every key of the example at the top level and in repository, sender and the main object', async () => {
    await h.client.deliveries();
    const sent = new Map<string, Record<string, unknown>>();
    for (const delivery of h.sim.context.webhooks.deliveries)
      sent.set(`${delivery.event}.${delivery.action ?? ''}`, delivery.request.payload);
    const problems: string[] = [];
    let compared = 0;
    for (const [key, ours] of sent) {
      const [event = '', action = ''] = key.split('.');
      const example = examples
        .find((e) => e.name === event)
        ?.examples.find((x) => event === 'push' || x.action === action);
      if (!example) continue;
      compared += 1;
      const report = (where: string, missing: string[]) =>
        missing.forEach((k) => problems.push(`${key} ${where}.${k}`));
      report('', missingKeys(example, ours, optional.top));
      for (const part of [
        'repository',
        'sender',
        'pull_request',
        'comment',
        'issue',
        'check_run',
        'label',
        'installation',
      ]) {
        report(part, missingKeys(example[part], ours[part], optional[part]));
      }
    }
    expect(compared).toBeGreaterThanOrEqual(10);
    expect(problems).toEqual([]);
  });
});

describe('rate limits', () => {
  it('answers the next request as a secondary rate limit (403 with retry-after), then recovers', async () => {
    await h.client.setRateLimit({ mode: 'secondary', count: 1, retryAfter: 7 });
    const error = await octokit.rest.repos.get(repo).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 403, response: { headers: { 'retry-after': '7' } } });
    expect(String((error as Error).message)).toMatch(/secondary rate limit/);
    expect((await octokit.rest.repos.get(repo)).status).toBe(200);
  });

  it('answers 429 in the 429 mode and 403 with x-ratelimit-remaining 0 in the primary mode', async () => {
    await h.client.setRateLimit({ mode: 'secondary-429', count: 1 });
    await expect(octokit.rest.repos.get(repo)).rejects.toMatchObject({ status: 429 });
    await h.client.setRateLimit({ mode: 'primary', count: 1, retryAfter: 30 });
    await expect(octokit.rest.repos.get(repo)).rejects.toMatchObject({
      status: 403,
      response: { headers: { 'x-ratelimit-remaining': '0' } },
    });
  });
});
