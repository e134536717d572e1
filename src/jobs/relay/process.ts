import type { Registry } from 'prom-client';
import { AgentUnreachableError, relayToAgent } from '../../adapters/agents.js';
import { loadComparedFiles } from '../../adapters/github/repo.js';
import type { RelayTarget } from '../../config/relay-targets.js';
import { AgentRejectedError, AgentUnavailableError, RateLimitError } from '../../observability/errors.js';
import type { Logger } from '../../observability/logger.js';
import { relayMetrics, type RelayMetrics } from '../../observability/metrics.js';
import {
  buildRelayRequest,
  canCompare,
  classifyAgentStatus,
  matchesPaths,
  mergePending,
  parseRetryAfter,
  type MergedRelay,
} from '../../planners/relay.js';
import type { RelayJob } from './job.js';
import { RelayStore, type RelayLogEntry } from '../../queue/relay-store.js';
import type { ProcessorContext } from '../../queue/worker.js';
import type { JobDeps } from '../shared/deps.js';

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
export async function processRelayJob(
  deps: RelayDeps,
  data: RelayJob,
  { job, log }: ProcessorContext,
): Promise<RelayOutcome> {
  const target = deps.targets.get(data.target);
  const entries = await deps.store.loadPending(data.window);
  if (!target) {
    log.warn(
      { target: data.target, dropped: entries.length },
      'Relay target is no longer configured; its waiting payloads are dropped',
    );
    await deps.store.removePending(data.window, entries.length);
    return { outcome: 'unknown-target' };
  }
  const merged = mergePending(entries);
  if (!merged) return { outcome: 'nothing-pending' };
  const attempt = job.attemptsMade + 1;
  const lastAttempt = attempt >= (job.opts.attempts ?? 1);
  const relayLog = log.child({
    target: target.name,
    repo: merged.newest.repository,
    deliveryId: merged.newest.deliveryId,
    coalesced: merged.count,
  });

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
    await report({
      outcome: 'rate-limited',
      status: response.status,
      latencyMs: response.latencyMs,
      error: `Retry-After ${response.retryAfter}`,
    });
    throw new RateLimitError(
      `${target.name} answered HTTP ${response.status} with Retry-After ${response.retryAfter}`,
      retryAt,
    );
  }
  await report({
    outcome: 'retry',
    status: response.status,
    latencyMs: response.latencyMs,
    error: `HTTP ${response.status}${detail}`,
  });
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
      files = await loadComparedFiles(
        deps.github.forInstallation(range.installationId),
        { owner, repo },
        range.before,
        range.after,
      );
    } catch (error) {
      log.warn(
        { err: { message: (error as Error).message }, before: range.before, after: range.after },
        'Compare API unavailable; relaying without narrowing by path',
      );
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
 * The relay job's dependencies, built once per worker process. Each target has its own jobs, so one
 * dead agent never delays the others.
 */
export function createRelayDeps(
  deps: JobDeps,
  targets: readonly RelayTarget[],
  options: { prefix: string; registry?: Registry },
): RelayDeps {
  return {
    log: deps.log,
    targets: new Map(targets.map((target) => [target.name, target])),
    store: new RelayStore(deps.redis, options.prefix),
    metrics: relayMetrics(options.registry),
    github: deps.github,
    now: deps.now,
  };
}
