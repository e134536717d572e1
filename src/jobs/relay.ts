import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { Counter, Histogram, register, type Registry } from 'prom-client';
import { z } from 'zod';
import { AgentUnreachableError, relayToAgent } from '../adapters/agents.js';
import type { Octokit } from '../adapters/github/client.js';
import { RelayStore, type RelayLogEntry } from '../adapters/relay-log.js';
import type { RelayTarget } from '../config/relay-targets.js';
import { ConfigError, RateLimitError } from '../observability/errors.js';
import type { Logger } from '../observability/logger.js';
import {
  buildRelayRequest,
  canCompare,
  classifyAgentStatus,
  coalesceKey,
  matchesPaths,
  mergePending,
  parseRetryAfter,
  selectRelayTargets,
  type MergedRelay,
  type PendingRelay,
  type RelayEvent,
} from '../planners/relay.js';
import { jobId } from '../queue/names.js';
import { QueueUnavailableError, type Producer } from '../queue/producer.js';
import { createWorker, type ProcessorContext } from '../queue/worker.js';
import type { JobDeps } from './deps.js';

/**
 * One coalesced delivery to one target. No secrets and no payload: the payloads wait in Redis
 * under `window` (src/adapters/relay-log.ts) and the secret is looked up by target name.
 */
export const RelayJob = z.object({
  target: z.string().min(1),
  /** The delivery that scheduled this job (the one delivered may be newer). */
  deliveryId: z.string().min(1),
  repository: z.string().regex(/^[^/]+\/[^/]+$/, 'must be owner/name'),
  event: z.enum(['push', 'pull_request']),
  /** The coalescing window: target, repository, event and ref (or pull request). */
  window: z.string().min(1),
});
export type RelayJob = z.infer<typeof RelayJob>;

/** What the GitHub webhook handler passes for one push or pull request event. */
export type RelayInput = Omit<PendingRelay, 'receivedAt'>;

/** The agent refused the request in a way no retry changes (wrong secret, unknown receiver): fail now, visibly. */
export class AgentRejectedError extends ConfigError {
  override name = 'AgentRejectedError';
}

/** The agent was unreachable or answered 5xx/429/408: attempts and backoff apply. */
export class AgentUnavailableError extends Error {
  override name = 'AgentUnavailableError';
}

/**
 * Choose the targets of one event and schedule one job per target:
 * 1. select targets by event, repository glob and changed-path globs (all repository matches
 *    when the paths are unknown: the job narrows them with the compare API)
 * 2. keep the payload in the target's coalescing window in Redis (a redelivered webhook adds nothing)
 * 3. add the target's job: at once when the window was empty, else after the target's `coalesce`
 *    time; BullMQ deduplication folds every push of the window into the waiting job, and a push
 *    while the job runs schedules exactly one more run
 *
 * Leading edge first: a lone push reaches the agent in milliseconds, and a burst becomes one
 * delivery now plus one for the rest of the window. Resolves once Redis holds every job; throws
 * `QueueUnavailableError` when Redis cannot take them (intake answers 503). Returns the number
 * of jobs scheduled.
 */
export async function enqueueRelay(producer: Producer, input: RelayInput, targets: RelayTarget[]): Promise<number> {
  const selected = selectRelayTargets(targets, input);
  if (selected.length === 0) return 0;
  const byName = new Map(targets.map((target) => [target.name, target]));
  const store = new RelayStore(producer.connection, producer.prefix);
  const key = coalesceKey(input.event, input.body);
  const pending: PendingRelay = {
    deliveryId: input.deliveryId,
    event: input.event,
    body: input.body,
    repository: input.repository,
    changedPaths: input.changedPaths,
    receivedAt: new Date().toISOString(),
    ...(input.installationId !== undefined ? { installationId: input.installationId } : {}),
    ...(input.before !== undefined ? { before: input.before } : {}),
    ...(input.after !== undefined ? { after: input.after } : {}),
  };
  const scheduled = await Promise.all(
    selected.map(async ({ target: name }) => {
      const target = byName.get(name)!;
      const window = relayWindow(name, input.repository, input.event, key);
      let waiting: number;
      try {
        waiting = await store.addPending(window, name, pending);
      } catch (error) {
        throw new QueueUnavailableError(`could not keep the relay payload in Redis (${(error as Error).message}); retry shortly`);
      }
      if (waiting === 0) return 0; // this delivery was relayed to this target already
      try {
        await producer.enqueue(
          'relay',
          RelayJob,
          { target: name, deliveryId: input.deliveryId, repository: input.repository, event: input.event, window },
          {
            jobId: jobId('relay', name, input.deliveryId),
            delay: waiting === 1 ? 0 : target.coalesceMs,
            deduplication: { id: window, keepLastIfActive: true },
            attempts: target.attempts,
            backoff: { type: 'exponential', delay: target.backoffMs },
            removeOnComplete: { age: 3_600, count: 1_000 },
            removeOnFail: { age: 7 * 86_400, count: 5_000 },
          },
        );
      } catch (error) {
        await store.forgetSeen(name, input.deliveryId).catch(() => undefined);
        throw error;
      }
      return 1;
    }),
  );
  return scheduled.reduce<number>((sum, n) => sum + n, 0);
}

/** The coalescing window of a target: payloads in one window fold into one delivery. */
export function relayWindow(target: string, repository: string, event: RelayEvent, key: string): string {
  return jobId('relay', target, repository.toLowerCase(), event, key);
}

/** Per-target relay metrics, registered once per registry. */
export interface RelayMetrics {
  deliveries: Counter<'target' | 'outcome'>;
  latency: Histogram<'target'>;
}

export function relayMetrics(registry: Registry = register): RelayMetrics {
  const deliveries =
    (registry.getSingleMetric('escalator_relay_deliveries_total') as Counter<'target' | 'outcome'> | undefined) ??
    new Counter({ name: 'escalator_relay_deliveries_total', help: 'Relay attempts per target and outcome (delivered, retry, rate-limited, rejected, skipped).', labelNames: ['target', 'outcome'], registers: [registry] });
  const latency =
    (registry.getSingleMetric('escalator_relay_latency_seconds') as Histogram<'target'> | undefined) ??
    new Histogram({ name: 'escalator_relay_latency_seconds', help: 'Time for an agent to answer a relayed webhook.', labelNames: ['target'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers: [registry] });
  return { deliveries, latency };
}

/** What the relay job needs beyond the common job dependencies. */
export interface RelayDeps {
  log: Logger;
  targets: ReadonlyMap<string, RelayTarget>;
  store: RelayStore;
  metrics: RelayMetrics;
  github: JobDeps['github'];
  now: () => Date;
}

export interface RelayOutcome {
  outcome: 'delivered' | 'skipped' | 'nothing-pending' | 'unknown-target';
  status?: number;
  coalesced?: number;
}

/**
 * Deliver one coalescing window to one target:
 * 1. find the target by name in the server configuration (the secret never travels in job data)
 * 2. read the payloads waiting in the window and fold them: the newest body wins, paths unite
 * 3. when every payload's file list was truncated, ask the compare API; no matching path: skip
 * 4. re-sign the newest body for the target and POST it to the exact URL
 * 5. record the attempt in the delivery log and metrics; forget the payloads once delivered,
 *    rejected, or out of attempts (a redelivery of later pushes would carry the newest anyway)
 * Errors map onto the queue by type: a rejection fails at once, Retry-After delays, the rest retries.
 */
export async function processRelayJob(deps: RelayDeps, data: RelayJob, { job, log }: ProcessorContext): Promise<RelayOutcome> {
  const target = deps.targets.get(data.target);
  const entries = await deps.store.loadPending(data.window);
  if (!target) {
    log.warn({ target: data.target, dropped: entries.length }, 'Relay target is no longer configured; its waiting payloads are dropped');
    await deps.store.removePending(data.window, entries.length);
    return { outcome: 'unknown-target' };
  }
  const merged = mergePending(entries);
  if (!merged) return { outcome: 'nothing-pending' };
  const attempt = job.attemptsMade + 1;
  const lastAttempt = attempt >= (job.opts.attempts ?? 1);
  const relayLog = log.child({ target: target.name, repo: merged.newest.repository, deliveryId: merged.newest.deliveryId, coalesced: merged.count });

  let changedPaths: string[] | null = merged.unknown.length === 0 ? merged.changedPaths : null;
  if (merged.unknown.length === merged.count) {
    // Selected on the repository alone: every payload was truncated. Narrow by the compare API.
    const compared = await changedPathsFromCompare(deps, merged, relayLog);
    if (compared !== null) {
      changedPaths = compared;
      if (!matchesPaths(target.paths, compared)) {
        await report({ outcome: 'skipped', status: null, latencyMs: null });
        await deps.store.removePending(data.window, entries.length);
        relayLog.info({ paths: compared.length }, 'Relay skipped: no changed path matches the target');
        return { outcome: 'skipped', coalesced: merged.count };
      }
    }
  }

  const request = buildRelayRequest(target, merged.newest);
  let response;
  try {
    response = await relayToAgent(request, { timeoutMs: target.timeoutMs });
  } catch (error) {
    if (!(error instanceof AgentUnreachableError)) throw error;
    await report({ outcome: 'retry', status: null, latencyMs: error.latencyMs, error: error.message });
    if (lastAttempt) await deps.store.removePending(data.window, entries.length);
    throw new AgentUnavailableError(`${target.name}: ${error.message}; retrying with backoff`);
  }
  deps.metrics.latency.observe({ target: target.name }, response.latencyMs / 1000);
  const verdict = classifyAgentStatus(response.status);
  const detail = response.excerpt ? `: ${response.excerpt}` : '';

  if (verdict === 'delivered') {
    await report({ outcome: 'delivered', status: response.status, latencyMs: response.latencyMs });
    await deps.store.removePending(data.window, entries.length);
    relayLog.info({ status: response.status, latencyMs: response.latencyMs, attempt }, 'Relay delivered');
    return { outcome: 'delivered', status: response.status, coalesced: merged.count };
  }
  if (verdict === 'reject') {
    const message = `${target.name} refused the relayed webhook with HTTP ${response.status}${detail}; check the target's secret, URL and type (a wrong secret answers 400 or 401)`;
    await report({ outcome: 'rejected', status: response.status, latencyMs: response.latencyMs, error: message });
    await deps.store.removePending(data.window, entries.length);
    relayLog.error({ status: response.status, attempt }, 'Relay rejected by the agent');
    throw new AgentRejectedError(message);
  }
  const retryAt = parseRetryAfter(response.retryAfter, deps.now().getTime());
  if (retryAt !== undefined) {
    await report({ outcome: 'rate-limited', status: response.status, latencyMs: response.latencyMs, error: `Retry-After ${response.retryAfter}` });
    throw new RateLimitError(`${target.name} answered HTTP ${response.status} with Retry-After ${response.retryAfter}`, retryAt);
  }
  await report({ outcome: 'retry', status: response.status, latencyMs: response.latencyMs, error: `HTTP ${response.status}${detail}` });
  if (lastAttempt) await deps.store.removePending(data.window, entries.length);
  throw new AgentUnavailableError(`${target.name} answered HTTP ${response.status}${detail}; retrying with backoff`);

  async function report(entry: Pick<RelayLogEntry, 'outcome' | 'status' | 'latencyMs' | 'error'>): Promise<void> {
    deps.metrics.deliveries.inc({ target: target!.name, outcome: entry.outcome });
    await deps.store.record({
      at: deps.now().toISOString(),
      target: target!.name,
      deliveryId: merged!.newest.deliveryId,
      coalesced: merged!.deliveryIds,
      repository: merged!.newest.repository,
      event: merged!.newest.event,
      attempt,
      changedPaths,
      ...entry,
    });
  }
}

/** GitHub's compare API lists at most this many files; a full page means the list may be cut. */
const COMPARE_FILE_LIMIT = 300;

/**
 * The files changed by truncated pushes, from the compare API; null when any cannot be known
 * (new branch, force-push that dropped `before`, more than 300 files, GitHub unavailable).
 * When unsure the relay delivers: a needless refresh costs the agent one poll, a missed one
 * costs minutes of drift.
 */
async function changedPathsFromCompare(deps: RelayDeps, merged: MergedRelay, log: Logger): Promise<string[] | null> {
  const paths = new Set<string>();
  for (const range of merged.unknown) {
    if (!canCompare(range)) return null;
    const [owner, repo] = merged.newest.repository.split('/') as [string, string];
    let files: Array<{ filename: string; previous_filename?: string }>;
    try {
      const octokit: Octokit = deps.github.forInstallation(range.installationId);
      const { data } = await octokit.rest.repos.compareCommitsWithBasehead({ owner, repo, basehead: `${range.before}...${range.after}`, per_page: 1 });
      files = data.files ?? [];
    } catch (error) {
      log.warn({ err: { message: (error as Error).message }, before: range.before, after: range.after }, 'Compare API unavailable; relaying without narrowing by path');
      return null;
    }
    if (files.length >= COMPARE_FILE_LIMIT) return null;
    for (const file of files) {
      paths.add(file.filename);
      if (file.previous_filename) paths.add(file.previous_filename);
    }
  }
  return [...paths].sort();
}

/**
 * The relay worker. Each target has its own jobs, so one dead agent never delays the others;
 * concurrency bounds how many agents are called at once.
 */
export function createRelayWorker(
  deps: JobDeps & { targets: RelayTarget[] },
  options: { connection: Redis; prefix: string; log: Logger; concurrency?: number; registry?: Registry },
): Worker {
  const relayDeps: RelayDeps = {
    log: options.log,
    targets: new Map(deps.targets.map((target) => [target.name, target])),
    store: new RelayStore(deps.redis, options.prefix),
    metrics: relayMetrics(options.registry),
    github: deps.github,
    now: deps.now,
  };
  return createWorker('relay', RelayJob, (data, context) => processRelayJob(relayDeps, data, context), {
    connection: options.connection,
    prefix: options.prefix,
    log: options.log,
    concurrency: options.concurrency ?? 16,
  });
}
