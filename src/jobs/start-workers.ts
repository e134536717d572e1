import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { RedisConditionalCache } from '../adapters/github/conditional-cache.js';
import { withWritePriority, WriteBudget, writeLimits } from '../adapters/github/write-budget.js';
import { GitHubClients } from '../adapters/github/client.js';
import { warnIfRenderIsolationUnavailable } from '../adapters/render/index.js';
import { RepoState } from '../adapters/store/repo-state.js';
import type { RegistryClientOptions } from '../adapters/registry/client.js';
import type { Env } from '../config/env.js';
import type { Logger } from '../observability/logger.js';
import { clusterSafePrefix, createRedis, waitForRedis } from '../queue/connection.js';
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
} from '../queue/jobs.js';
import { Producer } from '../queue/producer.js';
import { createWorker } from '../queue/worker.js';
import { z } from 'zod';
import { processBumpJob, reportBumpFailure } from './bump.js';
import { processDashboardJob } from './dashboard.js';
import { processDiffJob } from './diff.js';
import { processHealthJob } from './health.js';
import { processRecoverJob } from './recover.js';
import { createRelayDeps, processRelayJob } from './relay.js';
import type { RelayTarget } from '../config/relay-targets.js';
import { metricsRegistry } from '../observability/metrics.js';
import { processCommandJob, reportCommandFailure } from './command.js';
import { processPromoteJob, reportPromoteFailure } from './promote.js';
import type { JobDeps } from './shared/deps.js';
import { processImageJob } from './image.js';
import { createNotesDeps } from './shared/notes-deps.js';
import { processIndexJob, processResyncJob } from './subscription-index.js';

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
 * Every queue's worker is created here, so the worker role (src/main) only calls this.
 * The `index` queue carries two job kinds: one repository, or a full resync.
 */
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
    producer: new Producer(producerRedis, prefix),
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
  const workers = [
    createWorker('image', ImageJob, (data, context) => processImageJob(deps, data, context), {
      ...common,
      concurrency: 8,
    }),
    createWorker('bump', BumpJob, (data, context) => processBumpJob(deps, data, context), {
      ...common,
      concurrency: 4,
      fairShare: true,
      onFinalFailure: (data, error) => reportBumpFailure(deps, data, error),
    }),
    // A promotion someone asked for (a command) writes ahead of routine work.
    createWorker(
      'promote',
      PromoteJob,
      (data, context) =>
        withWritePriority(data.requestedBy ? 'person' : 'routine', () => processPromoteJob(deps, data, context)),
      {
        ...common,
        concurrency: 4,
        fairShare: true,
        onFinalFailure: (data, error) => reportPromoteFailure(deps, data, error),
      },
    ),
    createWorker(
      'diff',
      DiffJob,
      (data, context) =>
        processDiffJob(
          {
            ...deps,
            cacheDir: env.ESCALATOR_CACHE_DIR,
            appId: env.APP_ID,
            renderIsolation: env.ESCALATOR_RENDER_ISOLATION,
          },
          data,
          context,
        ),
      { ...common, concurrency: 2, fairShare: true },
    ),
    createWorker(
      'command',
      CommandJob,
      (data, context) => withWritePriority('person', () => processCommandJob(deps, data, context)),
      {
        ...common,
        concurrency: 2,
        onFinalFailure: (data, error) => reportCommandFailure(deps, data, error),
      },
    ),
    createWorker(
      'index',
      IndexJob.or(ResyncJob),
      (data, context) =>
        'owner' in data ? processIndexJob(deps, data, context) : processResyncJob(deps, data, context),
      { ...common, concurrency: 2 },
    ),
    // Agent reports: one Redis fold each, then at most a few promote jobs enqueued.
    createWorker('health', HealthJob, (data, context) => processHealthJob(deps, data, context), {
      ...common,
      concurrency: 4,
    }),
  ];
  // The dashboard issue (docs/controls.md); its health column reads no store until one is wired here.
  workers.push(
    createWorker(
      'dashboard',
      DashboardJob,
      (data, context) =>
        processDashboardJob(
          { ...deps, loadHealth: (key, environment, app) => deps.store.health.load(key, environment, app) },
          data,
          context,
        ),
      { ...common, concurrency: 2 },
    ),
  );
  workers.push(
    createWorker(
      'recover',
      z.object({}).passthrough(),
      (data, context) => processRecoverJob({ ...deps, recoverEveryMs: env.ESCALATOR_RECOVER_EVERY_MS }, data, context),
      { ...common, concurrency: 1 },
    ),
  );
  if (options.relayTargets?.length) {
    // Each target has its own jobs, so one dead agent never delays the others; concurrency bounds how many agents are called at once.
    const relayDeps = createRelayDeps(deps, options.relayTargets, { prefix, registry: metricsRegistry });
    workers.push(
      createWorker('relay', RelayJob, (data, context) => processRelayJob(relayDeps, data, context), {
        connection,
        prefix,
        log,
        concurrency: 16,
      }),
    );
  }
  // Say at start, loudly, when renders cannot be isolated here: every one of them will be refused.
  void warnIfRenderIsolationUnavailable(log, env.ESCALATOR_RENDER_ISOLATION);
  for (const worker of workers)
    worker.on('error', (error) => log.warn({ err: { message: error.message } }, 'Worker error'));
  // Missed-delivery recovery: once at start, then on a schedule (one scheduler shared by all replicas).
  // Redeliveries are deduplicated per GUID in Redis, so every replica may run it on start.
  void waitForRedis(producerRedis, env.REDIS_URL, 30_000)
    .then(() =>
      Promise.all([
        deps.producer
          .queue('recover')
          .upsertJobScheduler(
            'recover-deliveries',
            { every: env.ESCALATOR_RECOVER_EVERY_MS },
            { name: 'recover', data: {}, opts: { removeOnComplete: 100, removeOnFail: 100 } },
          ),
        deps.producer
          .queue('recover')
          .add(
            'recover',
            {},
            { jobId: `on-start-${process.pid}-${Date.now()}`, removeOnComplete: 100, removeOnFail: 100 },
          ),
      ]),
    )
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
