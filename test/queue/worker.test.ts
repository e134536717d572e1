import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, RateLimitError, WaitError } from '../../src/observability/errors.js';
import { createLogger } from '../../src/observability/logger.js';
import { wrapProcessor } from '../../src/queue/worker.js';
import { jobId } from '../../src/queue/names.js';
import { LeaseBusyError } from '../../src/queue/lease.js';
import { redisUrl } from '../support/stack.js';

const log = createLogger({ level: 'silent' });
const schema = z.object({ n: z.number() });

describe('the processor wrapper (real Redis)', () => {
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

  /** A queue with a random name, as BullMQ's own tests do, plus a worker running `processor`. */
  async function setup(
    processor: (data: { n: number }) => Promise<unknown>,
    attempts = 3,
    onFinalFailure?: (data: { n: number }, error: Error) => Promise<void>,
    busyRetryMs?: number,
  ) {
    const name = `test-${randomUUID()}`;
    const queue = new Queue(name, {
      connection,
      defaultJobOptions: { attempts, backoff: { type: 'fixed', delay: 10 } },
    });
    const events = new QueueEvents(name, { connection: new Redis(redisUrl, { maxRetriesPerRequest: null }) });
    await events.waitUntilReady();
    const worker = new Worker(
      name,
      wrapProcessor(
        'bump',
        schema,
        processor,
        log,
        undefined,
        onFinalFailure ? (d, e) => onFinalFailure(d, e) : undefined,
        busyRetryMs,
      ),
      { connection },
    );
    cleanups.push(async () => {
      await worker.close();
      await events.close();
      await queue.obliterate({ force: true });
      await queue.close();
    });
    return { queue, events };
  }

  it('retries an ordinary failure with backoff until it succeeds', async () => {
    let calls = 0;
    const { queue, events } = await setup(async () => {
      calls++;
      if (calls < 3) throw new Error('transient');
      return 'done';
    });
    const job = await queue.add('x', { n: 1 });
    await expect(job.waitUntilFinished(events, 10_000)).resolves.toBe('done');
    expect(calls).toBe(3);
  });

  it('fails a configuration error at once, without retries', async () => {
    let calls = 0;
    const { queue, events } = await setup(async () => {
      calls++;
      throw new ConfigError('environments[0].from names an unknown environment');
    });
    const job = await queue.add('x', { n: 1 });
    await expect(job.waitUntilFinished(events, 10_000)).rejects.toThrow('unknown environment');
    expect(calls).toBe(1);
    const failed = (await queue.getJob(job.id as string)) as Job;
    expect(failed.attemptsMade).toBe(1);
  });

  it('tells the final-failure hook once, when no attempt is left, and never on a retried attempt', async () => {
    const told: string[] = [];
    const { queue, events } = await setup(
      async () => {
        throw new Error('GitHub answered 502');
      },
      3,
      async (data, error) => {
        told.push(`${data.n}: ${error.message}`);
      },
    );
    const job = await queue.add('x', { n: 7 });
    await expect(job.waitUntilFinished(events, 10_000)).rejects.toThrow('502');
    expect(told).toEqual(['7: GitHub answered 502']);
  });

  it('tells the final-failure hook of an error that is never retried, and a failing hook hides nothing', async () => {
    const told: string[] = [];
    const { queue, events } = await setup(
      async () => {
        throw new ConfigError('no earlier version is recorded');
      },
      3,
      async (data, error) => {
        told.push(`${data.n}: ${error.message}`);
        throw new Error('GitHub is down too');
      },
    );
    const job = await queue.add('x', { n: 8 });
    await expect(job.waitUntilFinished(events, 10_000)).rejects.toThrow('no earlier version is recorded');
    expect(told).toEqual(['8: no earlier version is recorded']);
  });

  it('fails invalid job data without running the processor', async () => {
    let calls = 0;
    const { queue, events } = await setup(async () => {
      calls++;
    });
    const job = await queue.add('x', { n: 'not a number' } as unknown as { n: number });
    await expect(job.waitUntilFinished(events, 10_000)).rejects.toThrow(/job data for queue bump is invalid: n:/);
    expect(calls).toBe(0);
  });

  it('runs a job whose repository was busy again after ESCALATOR_BUSY_RETRY_MS, without using an attempt', async () => {
    const runs: number[] = [];
    const { queue, events } = await setup(
      async () => {
        runs.push(Date.now());
        if (runs.length === 1) throw new LeaseBusyError('another worker holds the repository');
        return 'done';
      },
      1,
      undefined,
      50,
    );
    const job = await queue.add('x', { n: 1 });
    await expect(job.waitUntilFinished(events, 10_000)).resolves.toBe('done');
    expect(runs).toHaveLength(2);
    // 50 ms plus up to 100 at random: well before the 1 s the default would wait.
    expect(runs[1]! - runs[0]!).toBeGreaterThanOrEqual(50);
    expect(runs[1]! - runs[0]!).toBeLessThan(1_000);
  });

  it('runs a job that waits for another job’s work again, without using an attempt', async () => {
    let calls = 0;
    const { queue, events } = await setup(
      async () => {
        calls++;
        if (calls === 1) throw new WaitError('the index has not recorded the merge yet');
        return 'done';
      },
      1,
      undefined,
      50,
    );
    const job = await queue.add('x', { n: 1 });
    // With attempts: 1 an ordinary failure would have failed the job; the wait is not an attempt.
    await expect(job.waitUntilFinished(events, 10_000)).resolves.toBe('done');
    expect(calls).toBe(2);
  });

  it('delays a rate-limited job until the reset, then completes it', async () => {
    let calls = 0;
    const started = Date.now();
    const { queue, events } = await setup(async () => {
      calls++;
      if (calls === 1) throw new RateLimitError('secondary rate limit', Date.now() + 600);
      return Date.now();
    }, 1);
    const job = await queue.add('x', { n: 1 });
    const finishedAt = (await job.waitUntilFinished(events, 10_000)) as number;
    expect(calls).toBe(2);
    // With attempts: 1 an ordinary failure would have failed the job; the delay is not an attempt.
    expect(finishedAt - started).toBeGreaterThanOrEqual(550);
  });
});

describe('jobId', () => {
  it('joins parts without the colon BullMQ reserves', () => {
    expect(jobId('acme/gitops', 'dev', 'hello', 'sha256:abc')).toBe('acme/gitops__dev__hello__sha256_abc');
  });
  it('is deterministic', () => {
    expect(jobId('a', 1)).toBe(jobId('a', 1));
  });
});
