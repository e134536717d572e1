/**
 * The one way to add each kind of job: its id, its options (from one table), its schema. Intake
 * and jobs call these; nothing else calls `Producer.enqueue`.
 */
import { createHash } from 'node:crypto';
import type { JobsOptions } from 'bullmq';
import { eventKey, scopeKey, type EventScope } from '../events/image-published.js';
import {
  BumpJob,
  CommandJob,
  DashboardJob,
  DiffJob,
  HealthJob,
  ImageJob,
  IndexJob,
  PromoteJob,
  RelayJob,
  ResyncJob,
} from './jobs.js';
import { jobId } from './names.js';
import type { DuplicateJob, Producer } from './producer.js';

const WEEK = 7 * 86_400;
const exponential = (delay: number): JobsOptions['backoff'] => ({ type: 'exponential', delay });

/**
 * How long a command job is kept after it ends (`removeOnComplete`), and so how long its id
 * refuses a second run of the same comment. A comment created longer ago than this is not run at
 * all: its `created_at` is inside the signed body, so an old delivery replayed later cannot slip
 * past the forgotten id.
 */
export const COMMAND_MEMORY_SECONDS = 86_400;

/**
 * Attempts, backoff and how long finished jobs are kept, per kind of job. Failed jobs stay a week
 * so a person can see why. Relay jobs take attempts and backoff from their target.
 */
export const JOB_OPTIONS = {
  image: { attempts: 5, backoff: exponential(1_000), removeOnComplete: { age: 86_400 }, removeOnFail: { age: WEEK } },
  bump: { attempts: 8, backoff: exponential(1_000), removeOnComplete: { age: 86_400 }, removeOnFail: { age: WEEK } },
  promote: { attempts: 8, backoff: exponential(1_000), removeOnComplete: { age: 86_400 }, removeOnFail: { age: WEEK } },
  command: {
    attempts: 5,
    backoff: exponential(1_000),
    removeOnComplete: { age: COMMAND_MEMORY_SECONDS },
    removeOnFail: { age: WEEK },
  },
  diff: { attempts: 4, backoff: exponential(2_000), removeOnComplete: { age: 3_600 }, removeOnFail: { age: WEEK } },
  index: { attempts: 5, backoff: exponential(2_000), removeOnComplete: { age: 3_600 }, removeOnFail: { age: WEEK } },
  // One resync at a time (a fixed id), forgotten as soon as it ends so the next loss can start one.
  resync: { attempts: 5, backoff: exponential(5_000), removeOnComplete: true, removeOnFail: true },
  health: { attempts: 5, backoff: exponential(1_000), removeOnComplete: { age: 3_600 }, removeOnFail: { age: WEEK } },
  relay: { removeOnComplete: { age: 3_600, count: 1_000 }, removeOnFail: { age: WEEK, count: 5_000 } },
  dashboard: {
    attempts: 5,
    backoff: exponential(2_000),
    removeOnComplete: { count: 100 },
    removeOnFail: { age: WEEK },
  },
} as const satisfies Record<string, JobsOptions>;

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
    'image',
    ImageJob,
    { event, scope },
    { ...JOB_OPTIONS.image, jobId: jobId('image', eventKey(event), scopeKey(scope)) },
    { reportDuplicate: true },
  );
}

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
  await producer.enqueue('bump', BumpJob, data, {
    ...JOB_OPTIONS.bump,
    jobId: jobId('bump', data.owner, data.repo, data.environment, data.app, event.deliveryId, event.tag),
    delay: debounceMs,
    deduplication: {
      id: jobId('bump', data.owner, data.repo, data.environment, data.app),
      keepLastIfActive: true,
      reschedule: true,
    },
  });
}

/** Plan the promotion into one environment; `key` makes one job per cause (a commit, a command), `delay` waits out a soak. */
export async function enqueuePromote(producer: Producer, data: PromoteJob, key: string, delay = 0): Promise<void> {
  await producer.enqueue('promote', PromoteJob, data, {
    ...JOB_OPTIONS.promote,
    jobId: jobId('promote', data.owner, data.repo, data.environment, data.app || '_', data.reason, key),
    delay,
  });
}

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
 * The BullMQ priority of a command from someone GitHub calls neither owner, member nor
 * collaborator of the repository: BullMQ runs every job without a priority first, so a flood of
 * strangers' commands (each refused, after a permission call) queues behind people's commands.
 */
export const STRANGER_COMMAND_PRIORITY = 100;

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
  await producer.enqueue('command', CommandJob, data, {
    ...JOB_OPTIONS.command,
    jobId: commandJobId(commentId, data.body),
    ...(options.stranger ? { priority: STRANGER_COMMAND_PRIORITY } : {}),
  });
}

/** Render and diff one pull request at one head; `key` defaults to the head SHA (one job per head). */
export async function enqueueDiff(producer: Producer, data: DiffJob, key = data.headSha): Promise<void> {
  await producer.enqueue('diff', DiffJob, data, {
    ...JOB_OPTIONS.diff,
    jobId: jobId('diff', data.owner, data.repo, data.number, key),
  });
}

/** Index one repository; `key` makes one job per cause (a commit, an installation). */
export async function enqueueIndex(producer: Producer, data: IndexJob, key: string): Promise<void> {
  await producer.enqueue('index', IndexJob, data, {
    ...JOB_OPTIONS.index,
    jobId: jobId('index', data.owner, data.repo, key),
  });
}

/** Rebuild the whole subscription index from GitHub (after Redis lost it): at most one at a time. */
export async function enqueueResync(producer: Producer, reason: string): Promise<void> {
  await producer.enqueue('index', ResyncJob, { reason }, { ...JOB_OPTIONS.resync, jobId: 'resync' });
}

/** True while a rebuild of the subscription index is queued or running (it is forgotten when it ends). */
export async function resyncPending(producer: Producer): Promise<boolean> {
  return (await producer.queue('index').getJob('resync')) !== undefined;
}

/**
 * Deliver one coalescing window to one agent target: at once, or after `delay`; BullMQ
 * deduplication by window folds every event of the window into the waiting job.
 */
export async function enqueueRelayJob(
  producer: Producer,
  data: RelayJob,
  options: { delay: number; attempts: number; backoffMs: number },
): Promise<void> {
  await producer.enqueue('relay', RelayJob, data, {
    ...JOB_OPTIONS.relay,
    jobId: jobId('relay', data.target, data.deliveryId),
    delay: options.delay,
    deduplication: { id: data.window, keepLastIfActive: true },
    attempts: options.attempts,
    backoff: exponential(options.backoffMs),
  });
}

/**
 * Record one agent report for one (environment, app). The id is the report itself (who, about
 * what, which state, when): an agent retrying a delivery records it once.
 */
export async function enqueueHealth(
  producer: Producer,
  data: HealthJob,
  /** Look at the recorded report again at this time (a degraded spell reaching `tolerate`): a job of its own. */
  recheck?: { at: number; now: number },
): Promise<{ id: string; duplicate: boolean }> {
  const { report } = data;
  const key = createHash('sha256')
    .update(
      JSON.stringify([
        report.source.agent,
        report.source.object,
        report.revision,
        report.sync,
        report.health,
        report.at,
      ]),
    )
    .digest('hex')
    .slice(0, 32);
  const id = jobId(
    'health',
    data.owner,
    data.repo,
    report.environment,
    report.app || '_',
    recheck ? `${key}-recheck` : key,
  );
  const added = await producer.enqueue(
    'health',
    HealthJob,
    data,
    { ...JOB_OPTIONS.health, jobId: id, ...(recheck ? { delay: Math.max(0, recheck.at - recheck.now) } : {}) },
    { reportDuplicate: true },
  );
  return { id: added.id, duplicate: Boolean(added.duplicate) };
}

/** How long changes to one repository gather before its dashboard is rendered again. */
export const DASHBOARD_DEBOUNCE_MS = 2_000;

/**
 * Render one repository's dashboard within `DASHBOARD_DEBOUNCE_MS`: every change while one waits
 * folds into it (BullMQ deduplication, not pushed back, so a steady stream still renders every
 * couple of seconds), and a change while one runs schedules exactly one more. `key` only keeps job
 * ids distinct (a timestamp); a forced render has a slot of its own.
 */
export async function enqueueDashboard(producer: Producer, data: DashboardJob, key: string): Promise<void> {
  const slot = data.force ? 'force' : 'change';
  await producer.enqueue('dashboard', DashboardJob, data, {
    ...JOB_OPTIONS.dashboard,
    jobId: jobId('dashboard', data.owner, data.repo, slot, key),
    delay: DASHBOARD_DEBOUNCE_MS,
    deduplication: { id: jobId('dashboard', data.owner, data.repo, slot), keepLastIfActive: true },
  });
}

/**
 * A box ticked on the dashboard issue, run as the command it stands for. The id hashes the
 * issue's `updated_at` and the command, both inside the signed payload: a redelivery of the same
 * edit runs nothing twice.
 */
export async function enqueueDashboardCommand(producer: Producer, data: CommandJob, editedAt: string): Promise<void> {
  await producer.enqueue('command', CommandJob, data, {
    ...JOB_OPTIONS.command,
    jobId: jobId(
      'command',
      'dashboard',
      data.issueNumber,
      createHash('sha256').update(`${editedAt}\n${data.body}`).digest('hex').slice(0, 32),
    ),
  });
}
