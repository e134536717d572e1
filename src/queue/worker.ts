import { DelayedError, UnrecoverableError, Worker, type Job, type WorkerOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { z } from 'zod';
import { classifyError, RateLimitError, WaitError } from '../observability/errors.js';
import type { Logger } from '../observability/logger.js';
import { jobDuration, jobsFailed, jobsYielded } from '../observability/metrics.js';
import { FairShare, installationOf } from './fair-share.js';
import { LeaseBusyError } from './lease.js';
import { queuePrefix, type QueueName } from './names.js';

/** ESCALATOR_BUSY_RETRY_MS's default: a busy repository's job waits 1–3 s, a yielding one 0.25–0.75 s. */
export const DEFAULT_BUSY_RETRY_MS = 1_000;

export interface ProcessorContext {
  job: Job;
  log: Logger;
}

export type Processor<T> = (data: T, context: ProcessorContext) => Promise<unknown>;

/**
 * Said once a job has failed for good (no attempt left, or an error that is never retried), so the
 * person who asked for the work hears why: a reply on the comment that started it, say.
 */
export type FinalFailure<T> = (data: T, error: Error, context: ProcessorContext) => Promise<void>;

/**
 * Wrap a processor with the one place that maps errors onto queue semantics:
 * validation and config errors fail at once (no retries), a GitHub rate limit moves the job to
 * delayed until the reset, everything else is rethrown so attempts and backoff apply.
 * Processors themselves never catch-and-log. With `fair`, a job first takes its installation's
 * slot, or yields to another installation's waiting job without using an attempt.
 */
export function wrapProcessor<S extends z.ZodType>(
  queue: QueueName,
  schema: S,
  processor: Processor<z.infer<S>>,
  log: Logger,
  fair?: FairShare,
  onFinalFailure?: FinalFailure<z.infer<S>>,
  /** The wait before a job whose repository is busy runs again (ESCALATOR_BUSY_RETRY_MS); default 1 s. */
  busyRetryMs = DEFAULT_BUSY_RETRY_MS,
) {
  /** `base` plus up to twice it at random, so jobs that met on one repository do not meet again. */
  const later = (base: number) => Date.now() + base + Math.floor(Math.random() * 2 * base);
  /** Tell the hook; a failing report is logged and never hides the job's own error. */
  const report = async (data: z.infer<S>, error: unknown, context: ProcessorContext): Promise<void> => {
    if (!onFinalFailure) return;
    try {
      await onFinalFailure(data, error instanceof Error ? error : new Error(String(error)), context);
    } catch (reportError) {
      context.log.error(
        { err: { message: (reportError as Error).message } },
        'Could not report the final failure of a job to the person who asked for it',
      );
    }
  };
  return async (job: Job, token?: string): Promise<unknown> => {
    const jobLog = log.child({ queue, jobId: job.id, attempt: job.attemptsMade + 1 });
    const parsed = schema.safeParse(job.data);
    if (!parsed.success) {
      jobLog.error({ issues: parsed.error.issues }, 'Job data failed validation');
      throw new UnrecoverableError(
        `job data for queue ${queue} is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    }
    const installation = fair && job.id !== undefined ? installationOf(parsed.data) : undefined;
    if (fair && installation !== undefined && !(await fair.acquire(installation, job.id as string))) {
      jobLog.debug({ installationId: installation }, 'Job yields its worker to another installation that is waiting');
      jobsYielded.inc({ queue });
      await job.moveToDelayed(later(Math.max(1, Math.floor(busyRetryMs / 4))), token);
      throw new DelayedError();
    }
    const timer = jobDuration.startTimer({ queue });
    try {
      const result = await processor(parsed.data, { job, log: jobLog });
      timer({ outcome: 'completed' });
      return result;
    } catch (error) {
      if (error instanceof LeaseBusyError || error instanceof WaitError) {
        // Another job holds the repository, or has work to finish first: wait without using an attempt.
        timer({ outcome: 'delayed' });
        await job.moveToDelayed(later(busyRetryMs), token);
        throw new DelayedError();
      }
      const kind = classifyError(error);
      timer({ outcome: kind === 'rate-limited' ? 'delayed' : 'failed' });
      const final = kind === 'unrecoverable' || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (kind !== 'rate-limited') jobsFailed.inc({ queue, final: String(final) });
      switch (kind) {
        case 'unrecoverable':
          jobLog.warn({ err: error }, 'Job failed without retry');
          await report(parsed.data, error, { job, log: jobLog });
          throw new UnrecoverableError((error as Error).message);
        case 'rate-limited': {
          const resetAt = (error as RateLimitError).resetAt;
          jobLog.warn({ resetAt: new Date(resetAt).toISOString() }, 'Job delayed until the GitHub rate limit resets');
          await job.moveToDelayed(resetAt, token);
          throw new DelayedError();
        }
        default:
          jobLog.warn(
            { err: { name: (error as Error).name, message: (error as Error).message } },
            final ? 'Job failed: no attempt left' : 'Job attempt failed; it will be retried',
          );
          if (final) await report(parsed.data, error, { job, log: jobLog });
          throw error;
      }
    } finally {
      if (fair && installation !== undefined) await fair.release(installation, job.id as string);
    }
  };
}

export function createWorker<S extends z.ZodType>(
  queue: QueueName,
  schema: S,
  processor: Processor<z.infer<S>>,
  options: {
    connection: Redis;
    log: Logger;
    concurrency?: number;
    prefix?: string;
    fairShare?: boolean;
    onFinalFailure?: FinalFailure<z.infer<S>>;
    /** ESCALATOR_BUSY_RETRY_MS (see wrapProcessor). */
    busyRetryMs?: number;
  } & Partial<WorkerOptions>,
): Worker {
  const {
    connection,
    log,
    concurrency = 4,
    prefix = queuePrefix,
    fairShare = false,
    onFinalFailure,
    busyRetryMs = DEFAULT_BUSY_RETRY_MS,
    ...rest
  } = options;
  // Half the workers per installation while another waits: one tenant's backlog never holds them all.
  const fair = fairShare
    ? new FairShare(connection, { prefix, queue, share: Math.max(1, Math.floor(concurrency / 2)) })
    : undefined;
  return new Worker(queue, wrapProcessor(queue, schema, processor, log, fair, onFinalFailure, busyRetryMs), {
    connection,
    prefix,
    concurrency,
    ...rest,
  });
}
