/**
 * Queues, one per kind of work, so each has its own concurrency, attempts and backoff.
 * Names carry no `:` (BullMQ uses it as its key separator).
 */
export const queueNames = [
  'image',
  'bump',
  'promote',
  'command',
  'diff',
  'relay',
  'index',
  'recover',
  'health',
  'dashboard',
] as const;
export type QueueName = (typeof queueNames)[number];

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
