import { createHmac, randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandHelp } from '../../src/planners/commands.js';
import { eventually, redisUrl, startStack, waitIndexed, type Stack } from '../support/stack.js';

const owner = 'developer';
const repo = 'replays';
const config = 'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n';

/**
 * `X-GitHub-Delivery` is not signed: anyone holding one signed `issue_comment` body (a proxy log,
 * a leaked delivery) can send it again under a new delivery id. The command must run once per
 * comment — keyed by the comment id inside the signed body — not once per delivery.
 */
describe('a signed command delivered again under a new delivery id (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  let connection: Redis;
  let queue: Queue;
  let number: number;

  beforeAll(async () => {
    stack = await startStack();
    await stack.client.createRepo({
      name: repo,
      files: {
        '.github/escalator.yml': config,
        'apps/hello/overlays/dev/kustomization.yaml': 'images:\n  - name: ghcr.io/example/hello\n    newTag: 1.0.0\n',
      },
    });
    await waitIndexed(stack, owner, repo);
    await stack.client.commit(`${owner}/${repo}`, { branch: 'notes', from: 'main', files: { 'NOTES.md': 'notes\n' } });
    number = (await stack.client.openPull(`${owner}/${repo}`, { title: 'notes', head: 'notes' })).number;
    connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    queue = new Queue('command', { connection, prefix: stack.prefix });
  }, 60_000);
  afterAll(async () => {
    await queue?.close();
    await connection?.quit();
    await stack?.close();
  });

  const jobsFor = async (body: string) =>
    (await queue.getJobs(['waiting', 'active', 'delayed', 'completed', 'failed'])).filter(
      (job) => (job.data as { body: string }).body === body,
    );
  const finished = (body: string) =>
    eventually(async () => (await jobsFor(body)).find((job) => job.finishedOn), {
      what: `the command job for ${JSON.stringify(body)}`,
    });
  const helpReplies = async () =>
    (
      await stack.user.paginate(stack.user.rest.issues.listComments, {
        owner,
        repo,
        issue_number: number,
        per_page: 100,
      })
    ).filter((comment) => comment.user?.type === 'Bot' && comment.body === commandHelp);

  /** The signed body GitHub delivered for the comment that holds `body`. */
  async function deliveredBody(body: string): Promise<string> {
    const deliveries = await stack.client.deliveries({ event: 'issue_comment' });
    const delivery = deliveries.find(
      (candidate) => (candidate.payload as { comment?: { body?: string } }).comment?.body === body,
    );
    if (!delivery) throw new Error(`no issue_comment delivery for ${JSON.stringify(body)}`);
    return JSON.stringify(delivery.payload);
  }

  async function deliver(raw: string, deliveryId: string): Promise<number> {
    const res = await fetch(`${stack.app.url}/api/github/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'issue_comment',
        'x-github-delivery': deliveryId,
        'x-hub-signature-256': `sha256=${createHmac('sha256', stack.sim.app.webhookSecret).update(raw).digest('hex')}`,
      },
      body: raw,
    });
    await res.arrayBuffer();
    return res.status;
  }

  it('runs the command once and answers once', { timeout: 90_000 }, async () => {
    const body = `/escalator help\nreplayed ${randomUUID()}`;
    await stack.client.comment(`${owner}/${repo}`, number, body);
    expect((await finished(body)).returnvalue).toBe(commandHelp);
    await eventually(async () => ((await helpReplies()).length === 1 ? true : undefined), {
      what: 'the first help reply',
    });

    const raw = await deliveredBody(body);
    for (const deliveryId of [randomUUID(), randomUUID()]) expect(await deliver(raw, deliveryId)).toBe(202);
    // Intake enqueues before it answers 202: a replay that was taken is a job by now.
    expect(await jobsFor(body)).toHaveLength(1);

    // A later command runs (the queue moves), and still only the first help was answered.
    const later = `/escalator help\nlater ${randomUUID()}`;
    await stack.client.comment(`${owner}/${repo}`, number, later);
    await finished(later);
    expect(await jobsFor(body)).toHaveLength(1);
    expect(await helpReplies()).toHaveLength(2);
  });

  it('does not run a comment older than the time it remembers commands', { timeout: 90_000 }, async () => {
    const body = `/escalator help\nold ${randomUUID()}`;
    await stack.client.comment(`${owner}/${repo}`, number, body);
    await finished(body);
    const replies = (await helpReplies()).length;
    // The same comment as GitHub signed it two days ago, under a new comment id (so nothing remembers it).
    const payload = JSON.parse(await deliveredBody(body)) as {
      comment: { id: number; created_at: string; body: string };
    };
    payload.comment.id += 1_000_000;
    payload.comment.created_at = new Date(Date.now() - 2 * 86_400_000).toISOString();
    expect(await deliver(JSON.stringify(payload), randomUUID())).toBe(202);
    expect(await jobsFor(body)).toHaveLength(1);
    expect(await helpReplies()).toHaveLength(replies);
  });
});
