import { z } from 'zod';
import { exponential, KEEP_FAILED, RepoRef, type JobKind } from '../../queue/kind.js';
import { jobId } from '../../queue/names.js';
import type { Producer } from '../../queue/producer.js';

/** Render and diff one pull request at one head SHA; a newer head makes older jobs no-ops. */
export const DiffJob = z.object({
  ...RepoRef,
  number: z.number().int().positive(),
  headSha: z.string().regex(/^[0-9a-f]{40}$/),
  reason: z.enum(['pull_request', 'command', 'rerequest']),
});
export type DiffJob = z.infer<typeof DiffJob>;

export const diffKind = {
  name: 'diff',
  schema: DiffJob,
  options: { attempts: 4, backoff: exponential(2_000), removeOnComplete: { age: 3_600 }, removeOnFail: KEEP_FAILED },
  enqueue: { enqueueDiff },
} as const satisfies JobKind;

/** Render and diff one pull request at one head; `key` defaults to the head SHA (one job per head). */
export async function enqueueDiff(producer: Producer, data: DiffJob, key = data.headSha): Promise<void> {
  await producer.enqueue(diffKind.name, DiffJob, data, {
    ...diffKind.options,
    jobId: jobId('diff', data.owner, data.repo, data.number, key),
  });
}
