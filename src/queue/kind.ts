import type { JobsOptions } from 'bullmq';
import { z } from 'zod';
import type { Producer } from './producer.js';

/**
 * What the producer needs of one kind of job: its queue, the schema its data is checked against
 * when it is added and again when it is processed, and its job options (attempts, backoff,
 * priority, how long finished jobs are kept). Each kind declares one in its folder
 * (`src/jobs/<kind>/job.ts`); its descriptor
 * (`src/jobs/<kind>/index.ts`) adds the worker's settings and the processor.
 */
export interface JobKind<S extends z.ZodType = z.ZodType> {
  /** The queue's name; no `:` (BullMQ uses it as its key separator). */
  readonly name: string;
  readonly schema: S;
  readonly options: JobsOptions;
  /** How it is enqueued: the functions that add its jobs (their ids, delays, deduplication, priority). */
  readonly enqueue: Readonly<Record<string, (producer: Producer, ...args: never[]) => Promise<unknown>>>;
}

/** How long a failed job stays, so a person can see why. */
export const KEEP_FAILED = { age: 7 * 86_400 } as const;

export const exponential = (delay: number): JobsOptions['backoff'] => ({ type: 'exponential', delay });

/** The repository a job is about: spread into the schemas of the kinds that have one. */
export const RepoRef = {
  installationId: z.number().int().positive(),
  owner: z.string().min(1),
  repo: z.string().min(1),
};
