import type { z } from 'zod';
import type { Env } from '../../config/env.js';
import type { RelayTarget } from '../../config/relay-targets.js';
import type { JobKind } from '../../queue/kind.js';
import type { FinalFailure, Processor } from '../../queue/worker.js';
import type { JobDeps } from './deps.js';

/** What a worker process holds when it builds each kind's processor (src/jobs/start-workers.ts). */
export interface WorkerContext {
  deps: JobDeps;
  env: Env;
  /** The workers' Redis key prefix. */
  prefix: string;
  /** Argo CD / Flux targets from server configuration. */
  relayTargets?: RelayTarget[];
}

/**
 * One kind of job, whole: its contract (queue name, payload schema, job options with attempts,
 * backoff and priority; `src/jobs/<kind>/job.ts`, which also holds how it is enqueued), its
 * worker's settings and its processor. Each job folder exports one; the table
 * (src/jobs/kinds.ts) lists them, and the workers and the queue names are built from it.
 */
export interface JobDescriptor<S extends z.ZodType = z.ZodType> extends JobKind<S> {
  /** How many of its jobs one worker process runs at once. */
  readonly concurrency: number;
  /** One installation takes at most half of the workers while another's job waits (src/queue/fair-share.ts). */
  readonly fairShare?: boolean;
  /**
   * `shared`: the lock every worker shares (`ESCALATOR_LOCK_MS`, checked for stalls as often, five
   * stalls allowed), so a SIGKILLed worker's jobs run again once it expires; `bullmq`: BullMQ's
   * own defaults.
   */
  readonly lock: 'shared' | 'bullmq';
  /** The processor, built once per worker process; `undefined`: this process runs no worker of the kind. */
  processor(context: WorkerContext): Processor<z.infer<S>> | undefined;
  /** Tells the person who asked when a job fails for good (src/queue/worker.ts, `onFinalFailure`). */
  onFinalFailure?(context: WorkerContext): FinalFailure<z.infer<S>>;
}

/**
 * A descriptor of some kind, as the table holds them side by side. `JobDescriptor<S>` ties each
 * processor to the data its own schema parses; here that tie is no longer visible to the types.
 */
export interface AnyJobDescriptor extends JobKind, Omit<JobDescriptor, 'processor' | 'onFinalFailure'> {
  processor(context: WorkerContext): Processor<never> | undefined;
  onFinalFailure?(context: WorkerContext): FinalFailure<never>;
}
