import { z } from 'zod';
import type { JobKind } from '../../queue/kind.js';
import type { Producer } from '../../queue/producer.js';

/** Missed-delivery recovery carries no data: each run reads GitHub's log of deliveries. */
export const RecoverJob = z.object({}).passthrough();
export type RecoverJob = z.infer<typeof RecoverJob>;

export const recoverKind = {
  name: 'recover',
  schema: RecoverJob,
  options: { removeOnComplete: 100, removeOnFail: 100 },
  enqueue: { scheduleRecovery },
} as const satisfies JobKind;

/**
 * Missed-delivery recovery: once at start, then every `everyMs` (one scheduler shared by all
 * replicas). Redeliveries are deduplicated per GUID in Redis, so every replica may run it on start.
 */
export async function scheduleRecovery(producer: Producer, everyMs: number): Promise<void> {
  const queue = producer.queue(recoverKind.name);
  await Promise.all([
    queue.upsertJobScheduler(
      'recover-deliveries',
      { every: everyMs },
      { name: recoverKind.name, data: {}, opts: recoverKind.options },
    ),
    queue.add(recoverKind.name, {}, { jobId: `on-start-${process.pid}-${Date.now()}`, ...recoverKind.options }),
  ]);
}
