import { z } from 'zod';
import { exponential, KEEP_FAILED, RepoRef, type JobKind } from '../../queue/kind.js';
import { jobId } from '../../queue/names.js';
import type { Producer } from '../../queue/producer.js';

/**
 * Bring one (repository, environment, app) up to the images waiting for it. The images themselves
 * wait in a Redis hash (src/adapters/store/candidates.ts), so a burst of pushes becomes one job and one
 * commit, and no push is lost while a job runs.
 */
export const BumpJob = z.object({
  ...RepoRef,
  environment: z.string().min(1),
  app: z.string(),
});
export type BumpJob = z.infer<typeof BumpJob>;

export const bumpKind = {
  name: 'bump',
  schema: BumpJob,
  options: { attempts: 8, backoff: exponential(1_000), removeOnComplete: { age: 86_400 }, removeOnFail: KEEP_FAILED },
  enqueue: { enqueueBump },
} as const satisfies JobKind;

/**
 * Bring one (repository, environment, app) up to its waiting images after `debounceMs`. One job
 * per target at a time: pushes while it waits push it back (debounce), and a push while it runs
 * schedules exactly one more run.
 */
export async function enqueueBump(
  producer: Producer,
  data: BumpJob,
  event: { deliveryId: string; tag: string },
  debounceMs: number,
): Promise<void> {
  await producer.enqueue(bumpKind.name, BumpJob, data, {
    ...bumpKind.options,
    jobId: jobId('bump', data.owner, data.repo, data.environment, data.app, event.deliveryId, event.tag),
    delay: debounceMs,
    deduplication: {
      id: jobId('bump', data.owner, data.repo, data.environment, data.app),
      keepLastIfActive: true,
      reschedule: true,
    },
  });
}
