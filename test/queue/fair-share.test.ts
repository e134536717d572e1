import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents, type Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLogger } from '../../src/observability/logger.js';
import { FairShare } from '../../src/queue/fair-share.js';
import { createWorker } from '../../src/queue/worker.js';
import { withRepoLease } from '../../src/jobs/shared/repo-lease.js';
import { redisUrl } from '../support/redis.js';

const log = createLogger({ level: 'silent' });
const schema = z.object({ installationId: z.number(), n: z.number() });

describe('fair shares between installations (real Redis)', () => {
  let connection: Redis;
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeAll(() => {
    connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  });
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()?.();
  });
  afterAll(async () => {
    await connection.quit();
  });

  /** A queue under a random prefix and a worker of concurrency 2 on it (the diff queue's), not yet running. */
  async function setup(fairShare: boolean, processor: (data: z.infer<typeof schema>) => Promise<unknown>) {
    const prefix = `test-fair-${randomUUID()}`;
    const queue = new Queue('diff', { connection, prefix });
    const events = new QueueEvents('diff', { connection: new Redis(redisUrl, { maxRetriesPerRequest: null }), prefix });
    await events.waitUntilReady();
    let worker: Worker | undefined;
    cleanups.push(async () => {
      await worker?.close();
      await events.close();
      await queue.obliterate({ force: true });
      await queue.close();
    });
    const start = (): Worker => {
      worker = createWorker('diff', schema, processor, { connection, log, prefix, concurrency: 2, fairShare });
      return worker;
    };
    return { queue, events, start, prefix };
  }

  /** Installation 1 queues six slow jobs, then installation 2 one; the order in which they start. */
  async function backlogThenOther(fairShare: boolean) {
    const started: string[] = [];
    const runs = new Map<string, number>();
    const { queue, events, start } = await setup(fairShare, async ({ installationId, n }) => {
      const name = `${installationId}/${n}`;
      started.push(name);
      runs.set(name, (runs.get(name) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 150));
      return name;
    });
    const jobs = [];
    for (let n = 1; n <= 6; n++) jobs.push(await queue.add('x', { installationId: 1, n }, { jobId: `a-${n}` }));
    jobs.push(await queue.add('x', { installationId: 2, n: 1 }, { jobId: 'b-1' }));
    start();
    const results = await Promise.all(jobs.map((job) => job.waitUntilFinished(events, 20_000)));
    const finished = await Promise.all(jobs.map((job) => queue.getJob(job.id as string)));
    return { started, runs, results, finished };
  }

  it("starts the other installation's job before the backlog of the first is done, and runs every job once", async () => {
    const { started, runs, results, finished } = await backlogThenOther(true);
    expect(started.indexOf('2/1')).toBeLessThan(2); // on one of the two workers at once
    expect(results.sort()).toEqual(['1/1', '1/2', '1/3', '1/4', '1/5', '1/6', '2/1']);
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    // Yielding used no attempt: each job finished on its first.
    expect(finished.map((job) => job?.attemptsMade)).toEqual([1, 1, 1, 1, 1, 1, 1]);
  });

  it('without fair shares, the same queue runs the other installation last (what fairness changes)', async () => {
    const { started } = await backlogThenOther(false);
    expect(started.indexOf('2/1')).toBe(6);
  });

  it("gives up the worker of a job whose repository is busy, so another installation's job runs meanwhile", async () => {
    const started: string[] = [];
    let prefix = '';
    const {
      queue,
      events,
      start,
      prefix: queuePrefix,
    } = await setup(true, async ({ installationId, n }) => {
      started.push(`${installationId}/${n}`);
      const deps = { redis: connection, leaseMs: 60_000, store: { prefix } };
      return withRepoLease(
        deps,
        { owner: `owner-${installationId}`, repo: 'gitops' },
        async () => `${installationId}/${n}`,
      );
    });
    prefix = queuePrefix;
    // Another writer holds installation 1's repository for the whole test.
    await connection.set(`${prefix}:lease:owner-1/gitops`, 'someone', 'PX', 60_000);
    for (let n = 1; n <= 4; n++) await queue.add('x', { installationId: 1, n }, { jobId: `a-${n}` });
    start();
    // Both workers are taken by jobs of installation 1 that find their repository busy.
    await waitFor(() => started.filter((name) => name.startsWith('1/')).length >= 2);
    const other = await queue.add('x', { installationId: 2, n: 1 }, { jobId: 'b-1' });
    expect(await other.waitUntilFinished(events, 15_000)).toBe('2/1');
    // Installation 1's jobs are still waiting for their repository, none of them failed or done.
    const waiting = await Promise.all([1, 2, 3, 4].map((n) => queue.getJob(`a-${n}`)));
    expect(waiting.map((job) => job?.finishedOn)).toEqual([undefined, undefined, undefined, undefined]);
    expect(waiting.map((job) => job?.attemptsMade ?? 0).every((made) => made === 0)).toBe(true);
    await connection.del(`${prefix}:lease:owner-1/gitops`);
  });

  it('lets one installation alone use every worker', async () => {
    let running = 0;
    let most = 0;
    const { queue, events, start } = await setup(true, async () => {
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 150));
      running--;
    });
    const jobs = [];
    for (let n = 1; n <= 4; n++) jobs.push(await queue.add('x', { installationId: 1, n }));
    start();
    await Promise.all(jobs.map((job) => job.waitUntilFinished(events, 20_000)));
    expect(most).toBe(2);
  });

  it('drops the slot of a job whose worker died (its lock is gone), so the installation is not held back for good', async () => {
    const { queue, events, start, prefix } = await setup(
      true,
      async ({ installationId, n }) => `${installationId}/${n}`,
    );
    const fair = new FairShare(connection, { prefix, queue: 'diff', share: 1 });
    // A slot taken by a job of installation 1 whose worker was SIGKILLed: no lock key exists for it.
    await connection.sadd(`${prefix}:diff:fair-slots`, '1|killed-job');
    const other = await queue.add('x', { installationId: 2, n: 1 });
    expect(await fair.acquire(1, 'probe')).toBe(true); // the dead slot does not count
    await fair.release(1, 'probe');
    expect(await connection.smembers(`${prefix}:diff:fair-slots`)).toEqual([]);
    const own = await queue.add('x', { installationId: 1, n: 1 });
    start();
    await expect(own.waitUntilFinished(events, 10_000)).resolves.toBe('1/1');
    await expect(other.waitUntilFinished(events, 10_000)).resolves.toBe('2/1');
    expect(await connection.smembers(`${prefix}:diff:fair-slots`)).toEqual([]);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
