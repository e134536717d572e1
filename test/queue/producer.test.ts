import { randomUUID } from 'node:crypto';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Producer } from '../../src/queue/producer.js';
import { deleteKeys, redisUrl } from '../support/stack.js';

/** Producer.enqueue against real Redis under a random prefix. */
describe('Producer: a duplicate of a job that completes while the answer is being read', () => {
  const prefix = `producer-${randomUUID().slice(0, 8)}`;
  let redis: Redis;
  let producer: Producer;
  let worker: Worker;
  const schema = z.object({ n: z.number() });

  beforeAll(async () => {
    redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
    await redis.ping();
    producer = new Producer(redis, prefix);
    worker = new Worker('image', null, { connection: redis.duplicate(), prefix, autorun: false });
  });
  afterAll(async () => {
    await worker.close();
    await producer.close();
    await deleteKeys(redis, `${prefix}:*`);
    await redis.quit();
  });

  it('answers with the result of a job that completed between its reads, never "processed" without one', async () => {
    const options = { jobId: 'race-1' };
    await producer.enqueue('image', schema, { n: 1 }, options);
    // The first delivery's job is running now.
    const token = randomUUID();
    const running = await worker.getNextJob(token);
    expect(running?.id).toBe('race-1');
    // It completes right after the answer read the job (active, no result yet) and before it reads
    // the state: the race the answer must not lose.
    const queue = producer.queue('image');
    const getJob = queue.getJob.bind(queue);
    let completeAfterRead = true;
    queue.getJob = async (id: string) => {
      const found = await getJob(id);
      if (completeAfterRead) {
        completeAfterRead = false;
        expect(found?.returnvalue).toBeNull();
        await running!.moveToCompleted({ scheduled: 1, targets: [] }, token, false);
      }
      return found;
    };
    const again = await producer.enqueue('image', schema, { n: 1 }, options, { reportDuplicate: true });
    expect(completeAfterRead).toBe(false);
    expect(again.duplicate).toMatchObject({ state: 'completed', result: { scheduled: 1, targets: [] } });
  });
});
