import { createHash } from 'node:crypto';
import { z } from 'zod';
import { exponential, KEEP_FAILED, RepoRef, type JobKind } from '../../queue/kind.js';
import { jobId } from '../../queue/names.js';
import type { Producer } from '../../queue/producer.js';

/** A `/escalator …` comment: checked for permission and answered in a worker, not in intake. */
export const CommandJob = z.object({
  ...RepoRef,
  issueNumber: z.number().int().positive(),
  isPull: z.boolean(),
  author: z.string().min(1),
  body: z.string().max(65_536),
  /** The pull request's body, to find the environment of a promotion PR from its marker. */
  prBody: z.string().max(262_144).optional(),
});
export type CommandJob = z.infer<typeof CommandJob>;

/**
 * How long a command job is kept after it ends (`removeOnComplete`), and so how long its id
 * refuses a second run of the same comment. A comment created longer ago than this is not run at
 * all: its `created_at` is inside the signed body, so an old delivery replayed later cannot slip
 * past the forgotten id.
 */
export const COMMAND_MEMORY_SECONDS = 86_400;

/**
 * The BullMQ priority of a command from someone GitHub calls neither owner, member nor
 * collaborator of the repository: BullMQ runs every job without a priority first, so a flood of
 * strangers' commands (each refused, after a permission call) queues behind people's commands.
 */
export const STRANGER_COMMAND_PRIORITY = 100;

export const commandKind = {
  name: 'command',
  schema: CommandJob,
  options: {
    attempts: 5,
    backoff: exponential(1_000),
    removeOnComplete: { age: COMMAND_MEMORY_SECONDS },
    removeOnFail: KEEP_FAILED,
  },
  enqueue: { enqueueCommand, enqueueDashboardCommand },
} as const satisfies JobKind;

/**
 * The command job's id: the comment's id and a hash of its body, both inside the signed payload.
 * `X-GitHub-Delivery` is not signed, so a delivery id would let anyone holding one signed body
 * run its command again under a new id. The body hash is there for edits: only `created`
 * comments run today, so an edited comment never runs its new text; were `edited` handled, each
 * distinct text of one comment would run once, and the same text never twice.
 */
export function commandJobId(commentId: number, body: string): string {
  return jobId('command', commentId, createHash('sha256').update(body).digest('hex').slice(0, 32));
}

/**
 * Answer one `/escalator` comment in a worker. `stranger`: the comment's `author_association` says
 * the author is none of owner, member or collaborator (only an ordering hint: the job still asks
 * GitHub for the permission).
 */
export async function enqueueCommand(
  producer: Producer,
  data: CommandJob,
  commentId: number,
  options: { stranger?: boolean } = {},
): Promise<void> {
  await producer.enqueue(commandKind.name, CommandJob, data, {
    ...commandKind.options,
    jobId: commandJobId(commentId, data.body),
    ...(options.stranger ? { priority: STRANGER_COMMAND_PRIORITY } : {}),
  });
}

/**
 * A box ticked on the dashboard issue, run as the command it stands for. The id hashes the
 * issue's `updated_at` and the command, both inside the signed payload: a redelivery of the same
 * edit runs nothing twice.
 */
export async function enqueueDashboardCommand(producer: Producer, data: CommandJob, editedAt: string): Promise<void> {
  await producer.enqueue(commandKind.name, CommandJob, data, {
    ...commandKind.options,
    jobId: jobId(
      'command',
      'dashboard',
      data.issueNumber,
      createHash('sha256').update(`${editedAt}\n${data.body}`).digest('hex').slice(0, 32),
    ),
  });
}
