/**
 * Relay scheduling: which agent targets one GitHub event goes to, and one coalesced job per target.
 * Runs in intake (the web role), so it imports queue state and pure selection only.
 */
import {
  coalesceKey,
  selectRelayTargets,
  type PendingRelay,
  type RelayEvent,
  type RelaySelectable,
} from '../planners/relay.js';
import { enqueueRelayJob } from './enqueue.js';
import { jobId } from './names.js';
import { QueueUnavailableError, type Producer } from './producer.js';
import { RelayStore } from './relay-store.js';

/** What scheduling needs of a relay target (src/config/relay-targets.ts has the whole of it). */
export interface RelaySchedulable extends RelaySelectable {
  name: string;
  coalesceMs: number;
  attempts: number;
  backoffMs: number;
}

/** What the GitHub webhook handler passes for one push or pull request event. */
export type RelayInput = Omit<PendingRelay, 'receivedAt'>;

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
export async function enqueueRelay(
  producer: Producer,
  input: RelayInput,
  targets: readonly RelaySchedulable[],
  now: () => Date,
): Promise<number> {
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
    receivedAt: now().toISOString(),
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
        throw new QueueUnavailableError(
          `could not keep the relay payload in Redis (${(error as Error).message}); retry shortly`,
        );
      }
      if (waiting === 0) return 0; // this delivery was relayed to this target already
      try {
        await enqueueRelayJob(
          producer,
          { target: name, deliveryId: input.deliveryId, repository: input.repository, event: input.event, window },
          { delay: waiting === 1 ? 0 : target.coalesceMs, attempts: target.attempts, backoffMs: target.backoffMs },
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
