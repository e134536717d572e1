import { z } from 'zod';
import { exponential, KEEP_FAILED, type JobKind } from '../../queue/kind.js';
import { jobId } from '../../queue/names.js';
import type { Producer } from '../../queue/producer.js';

/**
 * One coalesced delivery to one target. No secrets and no payload: the payloads wait in Redis
 * under `window` (src/queue/relay-store.ts) and the secret is looked up by target name.
 */
export const RelayJob = z.object({
  target: z.string().min(1),
  /** The delivery that scheduled this job (the one delivered may be newer). */
  deliveryId: z.string().min(1),
  repository: z.string().regex(/^[^/]+\/[^/]+$/, 'must be owner/name'),
  event: z.enum(['push', 'pull_request']),
  /** The coalescing window: target, repository, event and ref (or pull request). */
  window: z.string().min(1),
});
export type RelayJob = z.infer<typeof RelayJob>;

/** Relay jobs take attempts and backoff from their target (`enqueueRelayJob`). */
export const relayKind = {
  name: 'relay',
  schema: RelayJob,
  options: {
    removeOnComplete: { age: 3_600, count: 1_000 },
    removeOnFail: { ...KEEP_FAILED, count: 5_000 },
  },
  enqueue: { enqueueRelayJob },
} as const satisfies JobKind;

/**
 * Deliver one coalescing window to one agent target: at once, or after `delay`; BullMQ
 * deduplication by window folds every event of the window into the waiting job.
 */
export async function enqueueRelayJob(
  producer: Producer,
  data: RelayJob,
  options: { delay: number; attempts: number; backoffMs: number },
): Promise<void> {
  await producer.enqueue(relayKind.name, RelayJob, data, {
    ...relayKind.options,
    jobId: jobId('relay', data.target, data.deliveryId),
    delay: options.delay,
    deduplication: { id: data.window, keepLastIfActive: true },
    attempts: options.attempts,
    backoff: exponential(options.backoffMs),
  });
}
