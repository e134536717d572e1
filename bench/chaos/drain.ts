/**
 * Waiting for Escalator to finish everything it accepted: every BullMQ queue under the prefix
 * empty (waiting + active + delayed + prioritized + waiting-children = 0), the simulator's webhook
 * queue idle, and every failed webhook delivery either redelivered or given a recovery cycle.
 */
import { Queue } from 'bullmq';
import { Cluster, type Redis } from 'ioredis';
import { sleep } from '../support/stats.js';
import type { WebhookLog } from './driver.js';

const busyStates = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'] as const;

/**
 * The queues that exist under a prefix (BullMQ writes `<prefix>:<queue>:meta` for each).
 *
 * On a Cluster, SCAN goes to one node, and the client's idea of which node is a master is only
 * refreshed when a connection closes or a keyed command is MOVED: refreshed while a failover is
 * under way, it can name no master for Escalator's slot until the next keyed command, and a SCAN
 * of "the masters" then finds no queue at all (a first cluster run ended its drain after 3 s with
 * every bump still to do). So every node the client knows, replicas included, is scanned (a
 * replica holds the same keys) and a node that does not answer is skipped.
 */
export async function queuesUnder(redis: Redis, prefix: string): Promise<string[]> {
  const names = new Set<string>();
  const cluster = (redis as unknown) instanceof Cluster ? (redis as unknown as Cluster) : undefined;
  const nodes: Redis[] = cluster ? cluster.nodes('all') : [redis];
  let answered = 0;
  let lastError: unknown;
  for (const node of nodes) {
    try {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}:*:meta`, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) names.add(key.slice(prefix.length + 1, -':meta'.length));
      } while (cursor !== '0');
      answered++;
    } catch (error) {
      if (!cluster) throw error;
      lastError = error;
    }
  }
  if (answered === 0) throw new Error('no Redis node answered SCAN; is the cluster up?', { cause: lastError });
  return [...names].sort();
}

export interface DrainResult {
  drained: boolean;
  tookMs: number;
  /** Busy job counts per queue at the last look (empty when drained). */
  busy: Record<string, Record<string, number>>;
  /** Failed jobs per queue (all attempts used, or unrecoverable). */
  failed: Record<string, number>;
  /** Failed-job reasons, one example per distinct reason. */
  failedReasons: string[];
  /** Webhook deliveries (by event) that never succeeded. */
  undelivered: Record<string, number>;
  /** Each of them: event, what it was about, and every attempt's outcome. */
  undeliveredDetail: string[];
  /** What was still pending during the drain, sampled every 10 s. */
  timeline: string[];
}

export async function drain(input: {
  redis: Redis;
  prefix: string;
  webhooks: WebhookLog;
  idle: () => Promise<void>;
  recoverEveryMs: number;
  timeoutMs: number;
  /** Times in the detail are seconds since this. */ origin: number;
}): Promise<DrainResult> {
  const started = Date.now();
  const queues = new Map<string, Queue>();
  const queue = (name: string): Queue => {
    let found = queues.get(name);
    if (!found) {
      found = new Queue(name, { connection: input.redis, prefix: input.prefix });
      queues.set(name, found);
    }
    return found;
  };
  // Queues are never deleted during a run: one seen once is looked at until the end.
  const known = new Set<string>();
  const queueNames = async (): Promise<string[]> => {
    for (const name of await queuesUnder(input.redis, input.prefix)) known.add(name);
    return [...known].sort();
  };
  let busy: DrainResult['busy'];
  let quietSince: number | undefined;
  const timeline: string[] = [];
  let lastSample = 0;
  try {
    for (;;) {
      await input.idle();
      busy = {};
      for (const name of await queueNames()) {
        const counts = await queue(name).getJobCounts(...busyStates);
        // The recovery scheduler always has its next run delayed: that is not pending work.
        if (name === 'recover') counts.delayed = 0;
        const pending = Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0));
        if (Object.keys(pending).length > 0) busy[name] = pending;
      }
      // A failed delivery gets one redelivery from the next recovery run: wait for that run.
      const waitingForRecovery = [...input.webhooks.unresolved().values()].some(
        (at) => Date.now() - at < input.recoverEveryMs * 2 + 5_000,
      );
      // No queue found at all proves nothing (the run enqueued work): look again.
      const idle = known.size > 0 && Object.keys(busy).length === 0 && !waitingForRecovery;
      if (idle) {
        quietSince ??= Date.now();
        if (Date.now() - quietSince >= 3_000) break;
      } else {
        quietSince = undefined;
        if (waitingForRecovery && Object.keys(busy).length === 0)
          busy = { webhooks: { 'awaiting redelivery': input.webhooks.unresolved().size } };
      }
      if (Date.now() - lastSample >= 10_000 && Object.keys(busy).length > 0) {
        lastSample = Date.now();
        timeline.push(`+${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s pending ${JSON.stringify(busy)}`);
      }
      // A quiet spell already under way when the time is up gets its 3 s (a run once timed out 1 s into it).
      if (Date.now() - started > input.timeoutMs + (quietSince === undefined ? 0 : 3_500)) break;
      await sleep(500);
    }
    const failed: Record<string, number> = {};
    const reasons = new Map<string, string>();
    for (const name of await queueNames()) {
      const count = (await queue(name).getJobCounts('failed')).failed ?? 0;
      if (count === 0) continue;
      failed[name] = count;
      for (const job of await queue(name).getFailed(0, 50)) {
        const reason = `${name}: ${job.failedReason ?? '(no reason)'}`.slice(0, 240);
        const key = reason.replace(/#\d+|[0-9a-f]{7,40}|\d+ ms/g, '…');
        if (!reasons.has(key)) reasons.set(key, reason);
      }
    }
    const undelivered: Record<string, number> = {};
    const undeliveredDetail: string[] = [];
    const unresolved = input.webhooks.unresolved();
    for (const attempt of input.webhooks.attempts) {
      if (!unresolved.has(attempt.guid) || attempt.redelivery) continue;
      undelivered[attempt.event] = (undelivered[attempt.event] ?? 0) + 1;
      const payload = attempt.payload as {
        ref?: string;
        number?: number;
        issue?: { number?: number };
        repository?: { name?: string };
      };
      const number = payload.number ?? payload.issue?.number;
      const about = `${payload.repository?.name ?? '?'} ${payload.ref ?? (number !== undefined ? `#${number}` : '')}`;
      const tries = input.webhooks.attempts
        .filter((a) => a.guid === attempt.guid)
        .map(
          (a) =>
            `${a.redelivery ? 'redelivery' : 'original'} at +${((a.startedAt - input.origin) / 1000).toFixed(0)} s: ${a.status}`,
        );
      undeliveredDetail.push(
        `${attempt.event}${attempt.action ? `.${attempt.action}` : ''} ${about} (${attempt.guid.slice(0, 8)}): ${tries.join('; ')}`,
      );
    }
    const drained = quietSince !== undefined && Date.now() - quietSince >= 3_000;
    return {
      drained,
      tookMs: Date.now() - started,
      busy: drained ? {} : busy,
      failed,
      failedReasons: [...reasons.values()],
      undelivered,
      undeliveredDetail,
      timeline,
    };
  } finally {
    await Promise.all([...queues.values()].map((q) => q.close()));
  }
}
