import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { z } from 'zod';
import { ValidationError } from '../observability/errors.js';
import { queuePrefix, type QueueName } from './names.js';

/** Redis could not take the job: intake answers 503 so the sender retries; nothing was accepted. */
export class QueueUnavailableError extends Error {
  override name = 'QueueUnavailableError';
}

/**
 * Adds jobs to the product's queues. The connection has `enableOfflineQueue: false`, so when
 * Redis is down `add` fails at once instead of buffering a job that a crash would lose.
 */
export class Producer {
  readonly #queues = new Map<QueueName, Queue>();
  constructor(
    readonly connection: Redis,
    readonly prefix = queuePrefix,
  ) {}

  queue(name: QueueName): Queue {
    let queue = this.#queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.connection, prefix: this.prefix, skipWaitingForReady: true });
      queue.on('error', () => undefined); // surfaced through the failing add() instead
      this.#queues.set(name, queue);
    }
    return queue;
  }

  /** Validate, then add. Resolves only once Redis holds the job. */
  async enqueue<S extends z.ZodType>(
    name: QueueName,
    schema: S,
    data: z.input<S>,
    options: JobsOptions & { jobId: string },
  ): Promise<{ id: string }> {
    const parsed = schema.safeParse(data);
    if (!parsed.success)
      throw new ValidationError(
        `job for queue ${name} is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    if (this.connection.status !== 'ready')
      throw new QueueUnavailableError(`Redis is not connected (status ${this.connection.status}); retry shortly`);
    try {
      // A job id that exists already is not added again: a redelivered event does no new work.
      const job = await this.queue(name).add(name, parsed.data, options);
      return { id: job.id ?? options.jobId };
    } catch (error) {
      throw new QueueUnavailableError(`could not add the job to Redis (${(error as Error).message}); retry shortly`);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((queue) => queue.close()));
  }
}
