import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { z } from 'zod';
import { ValidationError } from '../observability/errors.js';
import { queuePrefix, type QueueName } from './names.js';

/** Redis could not take the job: intake answers 503 so the sender retries; nothing was accepted. */
export class QueueUnavailableError extends Error {
  override name = 'QueueUnavailableError';
}

/** A job whose id Redis held already: the work was asked for before, and this is what became of it. */
export interface DuplicateJob {
  /** When the job was first added. */
  firstSeenAt: string;
  /** BullMQ's state of that job: waiting, delayed, active or completed (a failed one is retried) */
  state: string;
  /** What the job returned, once completed. */
  result?: unknown;
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
    /**
     * How long a coalesced job of a queue gathers changes before it runs, where a job kind reads
     * it (the dashboard: ESCALATOR_DASHBOARD_DEBOUNCE_MS); a queue not named keeps its kind's own.
     */
    readonly delays: Readonly<Partial<Record<QueueName, number>>> = {},
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

  /**
   * Validate, then add. Resolves only once Redis holds the job. A job id Redis holds already is not
   * added again (a redelivered event does no new work). With `reportDuplicate` (one more read),
   * `duplicate` then says when the first one came and what became of it, so a sender hears
   * "duplicate", never "accepted". A job that failed for good is retried instead: sending the
   * same event again is how a sender asks for the work once more.
   */
  async enqueue<S extends z.ZodType>(
    name: QueueName,
    schema: S,
    data: z.input<S>,
    options: JobsOptions & { jobId: string },
    { reportDuplicate = false }: { reportDuplicate?: boolean } = {},
  ): Promise<{ id: string; duplicate?: DuplicateJob; retried?: boolean }> {
    const parsed = schema.safeParse(data);
    if (!parsed.success)
      throw new ValidationError(
        `job for queue ${name} is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    if (this.connection.status !== 'ready')
      throw new QueueUnavailableError(`Redis is not connected (status ${this.connection.status}); retry shortly`);
    try {
      const queue = this.queue(name);
      const job = await queue.add(name, parsed.data, options);
      const id = job.id ?? options.jobId;
      if (!reportDuplicate) return { id };
      // The job Redis holds carries the time it was first added; ours carries now.
      const stored = await queue.getJob(id);
      if (!stored || stored.timestamp === job.timestamp) return { id };
      const state = await stored.getState();
      if (state === 'failed') {
        await stored.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
        return { id, retried: true };
      }
      // `stored` was read before `state`: a job that completed between the two reads holds no
      // result in `stored`, so a completed job's result is read after its state, never before.
      const result = state === 'completed' ? (await queue.getJob(id))?.returnvalue : undefined;
      return {
        id,
        duplicate: {
          firstSeenAt: new Date(stored.timestamp).toISOString(),
          state,
          ...(state === 'completed' ? { result } : {}),
        },
      };
    } catch (error) {
      throw new QueueUnavailableError(`could not add the job to Redis (${(error as Error).message}); retry shortly`);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((queue) => queue.close()));
  }
}
