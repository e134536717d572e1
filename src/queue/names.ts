/**
 * A queue's name: one per kind of job, so each has its own concurrency, attempts and backoff.
 * The names are the job table's (`queueNames` in src/jobs/kinds.ts), each declared by its kind
 * (`src/jobs/<kind>/job.ts`). Names carry no `:` (BullMQ uses it as its key separator).
 */
export type QueueName = string;

/** Redis key prefix for every queue of the product. */
export const queuePrefix = 'escalator';

/**
 * A deterministic job id from its parts: stable across redeliveries, no `:` (BullMQ forbids it in
 * custom ids), bounded length.
 */
export function jobId(...parts: Array<string | number>): string {
  return parts
    .map((part) => String(part).replace(/[^A-Za-z0-9._@/-]/g, '_'))
    .join('__')
    .slice(0, 512);
}
