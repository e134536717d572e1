import { z } from 'zod';
import { exponential, KEEP_FAILED, RepoRef, type JobKind } from '../../queue/kind.js';
import { jobId } from '../../queue/names.js';
import type { Producer } from '../../queue/producer.js';

/** Rebuild the subscription index entry of one repository. */
export const IndexJob = z.object({ ...RepoRef, reason: z.enum(['installation', 'push', 'missing', 'resync']) });

/** List every installation and repository, and index each one (after Redis lost the index). */
export const ResyncJob = z.object({ reason: z.string() });
export type IndexJob = z.infer<typeof IndexJob>;
export type ResyncJob = z.infer<typeof ResyncJob>;

/** The `index` queue carries two kinds of data: one repository, or a full resync. */
export const indexKind = {
  name: 'index',
  schema: IndexJob.or(ResyncJob),
  options: { attempts: 5, backoff: exponential(2_000), removeOnComplete: { age: 3_600 }, removeOnFail: KEEP_FAILED },
  enqueue: { enqueueIndex, enqueueResync },
} as const satisfies JobKind;

/** One resync at a time (a fixed id), forgotten as soon as it ends so the next loss can start one. */
const RESYNC_OPTIONS = { attempts: 5, backoff: exponential(5_000), removeOnComplete: true, removeOnFail: true };

/** Index one repository; `key` makes one job per cause (a commit, an installation). */
export async function enqueueIndex(producer: Producer, data: IndexJob, key: string): Promise<void> {
  await producer.enqueue(indexKind.name, IndexJob, data, {
    ...indexKind.options,
    jobId: jobId('index', data.owner, data.repo, key),
  });
}

/** Rebuild the whole subscription index from GitHub (after Redis lost it): at most one at a time. */
export async function enqueueResync(producer: Producer, reason: string): Promise<void> {
  await producer.enqueue(indexKind.name, ResyncJob, { reason }, { ...RESYNC_OPTIONS, jobId: 'resync' });
}

/** True while a rebuild of the subscription index is queued or running (it is forgotten when it ends). */
export async function resyncPending(producer: Producer): Promise<boolean> {
  return (await producer.queue(indexKind.name).getJob('resync')) !== undefined;
}
