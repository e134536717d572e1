import { z } from 'zod';
import { exponential, KEEP_FAILED, RepoRef, type JobKind } from '../../queue/kind.js';
import { jobId } from '../../queue/names.js';
import type { Producer } from '../../queue/producer.js';

/**
 * A pull request merged into the default branch: the configuration changes it brought to an
 * environment wait for the environments that promote configuration from it
 * (docs/configuration.md, "Promote configuration").
 */
export const LandingJob = z.object({
  ...RepoRef,
  number: z.number().int().positive(),
  /** Repository text: shown escaped, clipped here. */
  title: z.string().max(256),
  author: z.string().max(64),
  mergeSha: z.string().regex(/^[0-9a-f]{40}$/),
  /**
   * Set when the pull request is one of Escalator's promotions (its own bot, its own branch, its
   * marker): the configuration changes it carried into `environment`, which go on to the next one.
   */
  escalator: z
    .object({
      environment: z.string().min(1).max(512),
      app: z.string().max(512),
      config: z.array(z.string().max(512)).max(100),
    })
    .optional(),
});
export type LandingJob = z.infer<typeof LandingJob>;

export const landingKind = {
  name: 'landing',
  schema: LandingJob,
  options: { attempts: 5, backoff: exponential(2_000), removeOnComplete: { age: 86_400 }, removeOnFail: KEEP_FAILED },
  enqueue: { enqueueLanding },
} as const satisfies JobKind;

/** Record what one merge brought; one job per merge commit (a redelivered webhook does nothing new). */
export async function enqueueLanding(producer: Producer, data: LandingJob): Promise<void> {
  await producer.enqueue(landingKind.name, LandingJob, data, {
    ...landingKind.options,
    jobId: jobId('landing', data.owner, data.repo, data.mergeSha),
  });
}

/**
 * The index recorded merge `mergeSha`: its landing, if it is waiting for that (delayed, see
 * `processLandingJob`), runs now instead of after its delay.
 */
export async function wakeLanding(
  producer: Producer,
  key: { owner: string; repo: string },
  mergeSha: string,
): Promise<void> {
  const job = await producer.queue(landingKind.name).getJob(jobId('landing', key.owner, key.repo, mergeSha));
  if (!job || !(await job.isDelayed())) return;
  // It may have left the delayed set meanwhile (its delay ran out): then there is nothing to wake.
  await job.promote().catch(async (error: unknown) => {
    if (await job.isDelayed()) throw error;
  });
}
