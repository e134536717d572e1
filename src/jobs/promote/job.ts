import { z } from 'zod';
import { exponential, KEEP_FAILED, RepoRef, type JobKind } from '../../queue/kind.js';
import { jobId } from '../../queue/names.js';
import type { Producer } from '../../queue/producer.js';

/** Plan (or re-plan) the promotion into one environment, per app or grouped (`app: ''`). */
export const PromoteJob = z.object({
  ...RepoRef,
  environment: z.string().min(1),
  app: z.string(),
  reason: z.enum(['push', 'command', 'soak', 'hold', 'rollback', 'health', 'window', 'freeze']),
  /** Who asked, for commands (shown in replies and logs). */
  requestedBy: z.string().optional(),
  /** The issue or pull request whose command asked for this run: it gets a reply with what the run did. */
  replyTo: z.number().int().positive().optional(),
  /** `/escalator promote <env> --now`: skip the soak of the versions promoted now (a writer's command). */
  skipSoak: z.boolean().optional(),
  /** Why Escalator opened this promotion on its own (`rollback: auto`), shown in the pull request body. */
  because: z.string().max(1000).optional(),
  /** `rollback: auto`: the degraded spell (its start, ISO) this rollback answers; the job does nothing when the spell is over. */
  spell: z.string().max(40).optional(),
});
export type PromoteJob = z.infer<typeof PromoteJob>;

export const promoteKind = {
  name: 'promote',
  schema: PromoteJob,
  options: { attempts: 8, backoff: exponential(1_000), removeOnComplete: { age: 86_400 }, removeOnFail: KEEP_FAILED },
  enqueue: { enqueuePromote },
} as const satisfies JobKind;

/** Plan the promotion into one environment; `key` makes one job per cause (a commit, a command), `delay` waits out a soak. */
export async function enqueuePromote(producer: Producer, data: PromoteJob, key: string, delay = 0): Promise<void> {
  await producer.enqueue(promoteKind.name, PromoteJob, data, {
    ...promoteKind.options,
    jobId: jobId('promote', data.owner, data.repo, data.environment, data.app || '_', data.reason, key),
    delay,
  });
}
