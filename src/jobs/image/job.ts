import { z } from 'zod';
import { EventScope, eventKey, ImagePublished, scopeKey } from '../../events/image-published.js';
import { exponential, KEEP_FAILED, type JobKind } from '../../queue/kind.js';
import { jobId } from '../../queue/names.js';
import type { DuplicateJob, Producer } from '../../queue/producer.js';

/**
 * An image was published: find the repositories that use it and plan their bumps, within the
 * scope of the credential that announced it (the owners it may write to; never the credential).
 * Job data never holds secrets or tokens: installation ids and refs only.
 */
export const ImageJob = z.object({
  event: ImagePublished,
  // Jobs queued by a version before scoped credentials were accepted with a global token, which
  // allowed every owner: they keep that meaning rather than be lost at the upgrade.
  scope: EventScope.default({ by: 'legacy:queued-before-scoped-credentials', owners: '*' }),
});
export type ImageJob = z.infer<typeof ImageJob>;

export const imageKind = {
  name: 'image',
  schema: ImageJob,
  options: { attempts: 5, backoff: exponential(1_000), removeOnComplete: { age: 86_400 }, removeOnFail: KEEP_FAILED },
  enqueue: { enqueueImage },
} as const satisfies JobKind;

/**
 * An image was published: fan it out to the repositories its credential's scope allows. The same
 * image, tag and digest from the same scope within a day is one job: `duplicate` then says when it
 * was first seen and what it led to; one that failed for good is retried (`retried`).
 */
export function enqueueImage(
  producer: Producer,
  event: ImageJob['event'],
  scope: EventScope,
): Promise<{ id: string; duplicate?: DuplicateJob; retried?: boolean }> {
  return producer.enqueue(
    imageKind.name,
    ImageJob,
    { event, scope },
    { ...imageKind.options, jobId: jobId('image', eventKey(event), scopeKey(scope)) },
    { reportDuplicate: true },
  );
}
