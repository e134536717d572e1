import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { RedisConditionalCache } from '../adapters/github/conditional-cache.js';
import { WriteBudget, writeLimits } from '../adapters/github/write-budget.js';
import { GitHubClients } from '../adapters/github/client.js';
import { warnIfRenderIsolationUnavailable } from '../adapters/render/index.js';
import { RepoState } from '../adapters/store/repo-state.js';
import type { RegistryClientOptions } from '../adapters/registry/client.js';
import type { Env } from '../config/env.js';
import type { Logger } from '../observability/logger.js';
import { clusterSafePrefix, createRedis, waitForRedis } from '../queue/connection.js';
import { Producer } from '../queue/producer.js';
import { createWorker, type FinalFailure, type Processor } from '../queue/worker.js';
import type { RelayTarget } from '../config/relay-targets.js';
import { jobKinds } from './kinds.js';
import { scheduleRecovery } from './recover/job.js';
import type { AnyJobDescriptor, WorkerContext } from './shared/descriptor.js';
import type { JobDeps } from './shared/deps.js';
import { createNotesDeps } from './notes-deps.js';

/** How long a stopping worker process waits for its running jobs (Kubernetes allows 30 s by default). */
export const SHUTDOWN_GRACE_MS = 20_000;

/** True when `work` settled within `ms`; false when the time ran out first (the work goes on unwatched). */
async function within(ms: number, work: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export interface WorkerDeps {
  env: Env;
  log: Logger;
  /** The workers' blocking connection (maxRetriesPerRequest: null). */
  connection: Redis;
  /** Overrides for tests: another key prefix, a GitHub call counter, a clock. */
  prefix?: string;
  onGitHubRequest?: ConstructorParameters<typeof GitHubClients>[0]['onRequest'];
  /** Called once per HTTP request to a registry (the call budget of tests and benches). */
  onRegistryRequest?: RegistryClientOptions['onRequest'];
  /** Argo CD / Flux targets from server configuration; no relay worker runs without any. */
  relayTargets?: RelayTarget[];
  /** The jobs' clock (tests move it to open a window or end a freeze); default the system's. */
  now?: () => Date;
}

export interface RunningWorkers {
  workers: Worker[];
  deps: JobDeps;
  close(): Promise<void>;
}

/**
 * A kind's worker, or none when this process runs none of it (relay without targets). Each
 * descriptor's processor takes the data its own schema parsed (`JobDescriptor<S>`), which the
 * table's common type no longer shows.
 */
function startWorker(
  kind: AnyJobDescriptor,
  context: WorkerContext,
  /** Connection, log, prefix and lock settings: what every worker of this kind of lock shares. */
  shared: Omit<Parameters<typeof createWorker>[3], 'concurrency' | 'fairShare' | 'onFinalFailure'>,
): Worker | undefined {
  const processor = kind.processor(context) as Processor<unknown> | undefined;
  if (!processor) return undefined;
  const onFinalFailure = kind.onFinalFailure?.(context) as FinalFailure<unknown> | undefined;
  return createWorker(kind.name, kind.schema, processor, {
    ...shared,
    concurrency: kind.concurrency,
    ...(kind.fairShare ? { fairShare: true } : {}),
    ...(onFinalFailure ? { onFinalFailure } : {}),
  });
}

/** Every queue's worker is created here, from the table of job kinds, so the worker role (src/main) only calls this. */
export function startWorkers(options: WorkerDeps): RunningWorkers {
  const { env, log, connection } = options;
  const prefix = clusterSafePrefix(env.REDIS_URL, options.prefix ?? env.ESCALATOR_REDIS_PREFIX);
  const redis = createRedis(env.REDIS_URL, 'worker');
  redis.on('error', () => undefined);
  const producerRedis = createRedis(env.REDIS_URL, 'producer');
  producerRedis.on('error', () => undefined);
  const deps: JobDeps = {
    log,
    github: new GitHubClients({
      appId: env.APP_ID,
      privateKey: env.PRIVATE_KEY,
      baseUrl: env.GITHUB_API_URL,
      log,
      conditional: new RedisConditionalCache(redis, prefix),
      writes: new WriteBudget(
        redis,
        prefix,
        writeLimits(env.ESCALATOR_GITHUB_WRITES_PER_MINUTE, env.ESCALATOR_GITHUB_WRITES_PER_HOUR),
      ),
      ...(options.onGitHubRequest ? { onRequest: options.onGitHubRequest } : {}),
    }),
    store: new RepoState(redis, prefix),
    producer: new Producer(producerRedis, prefix, { dashboard: env.ESCALATOR_DASHBOARD_DEBOUNCE_MS }),
    redis,
    debounceMs: env.ESCALATOR_DEBOUNCE_MS,
    leaseMs: env.ESCALATOR_LOCK_MS,
    now: options.now ?? (() => new Date()),
    notes: createNotesDeps(env, log, options.onRegistryRequest),
  };
  // A SIGKILLed worker's jobs are picked up again after the lock expires (BullMQ stalled-job check).
  const common = {
    connection,
    log,
    prefix,
    lockDuration: env.ESCALATOR_LOCK_MS,
    stalledInterval: env.ESCALATOR_LOCK_MS,
    maxStalledCount: 5,
    busyRetryMs: env.ESCALATOR_BUSY_RETRY_MS,
  };
  const context: WorkerContext = {
    deps,
    env,
    prefix,
    ...(options.relayTargets ? { relayTargets: options.relayTargets } : {}),
  };
  // One worker per kind of job in the table (src/jobs/kinds.ts), with the settings its descriptor declares.
  const workers: Worker[] = [];
  for (const kind of jobKinds as readonly AnyJobDescriptor[]) {
    const worker = startWorker(kind, context, kind.lock === 'shared' ? common : { connection, log, prefix });
    if (worker) workers.push(worker);
  }
  // Say at start, loudly, when renders cannot be isolated here: every one of them will be refused.
  void warnIfRenderIsolationUnavailable(log, env.ESCALATOR_RENDER_ISOLATION);
  for (const worker of workers)
    worker.on('error', (error) => log.warn({ err: { message: error.message } }, 'Worker error'));
  // Missed-delivery recovery: once at start, then on a schedule (one scheduler shared by all replicas).
  // Redeliveries are deduplicated per GUID in Redis, so every replica may run it on start.
  void waitForRedis(producerRedis, env.REDIS_URL, 30_000)
    .then(() => scheduleRecovery(deps.producer, env.ESCALATOR_RECOVER_EVERY_MS))
    .catch((error: Error) =>
      log.warn({ err: { message: error.message } }, 'Could not schedule missed-delivery recovery'),
    );
  return {
    workers,
    deps,
    async close() {
      // Running jobs get a grace period to finish; one still stuck after it (a Redis node gone
      // mid-failover, a hung call) is left to BullMQ, which runs it again once its lock expires.
      if (!(await within(SHUTDOWN_GRACE_MS, Promise.all(workers.map((worker) => worker.close()))))) {
        log.warn(
          { graceMs: SHUTDOWN_GRACE_MS },
          'Jobs still running when the shutdown grace period ended; stopping anyway (they run again once their locks expire)',
        );
        await within(SHUTDOWN_GRACE_MS, Promise.all(workers.map((worker) => worker.close(true))));
      }
      await within(SHUTDOWN_GRACE_MS, deps.producer.close());
      await Promise.all(
        [redis, producerRedis].map(async (connection) => {
          if (
            !(await within(
              2_000,
              connection.quit().catch(() => undefined),
            ))
          )
            connection.disconnect();
        }),
      );
    },
  };
}
