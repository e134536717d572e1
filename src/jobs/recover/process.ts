import { listDeliveries, redeliver } from '../../adapters/github/app.js';
import type { ProcessorContext } from '../../queue/worker.js';
import type { JobDeps } from '../shared/deps.js';

/** How far back failed deliveries are redelivered (GitHub keeps three days of them). */
export const recoveryWindowMs = 24 * 60 * 60 * 1000;

/** A delivery that still fails after this many redeliveries is left alone (and stays in GitHub's log). */
export const maxRedeliveries = 5;

/**
 * GitHub does not retry a failed webhook delivery by itself. On start and every few minutes:
 * 1. list the App's recent deliveries (newest first, cursor-paginated)
 * 2. keep the GUIDs that never succeeded (a later redelivery that succeeded counts)
 * 3. redeliver each, deduplicated across replicas per run, up to `maxRedeliveries` times per GUID
 */
export async function processRecoverJob(
  deps: JobDeps & { recoverEveryMs?: number },
  _data: unknown,
  { log }: ProcessorContext,
): Promise<number> {
  const everyMs = deps.recoverEveryMs ?? 600_000;
  const since = deps.now().getTime() - recoveryWindowMs;
  const byGuid = new Map<string, { id: number; ok: boolean }>();
  const app = deps.github.app;
  for await (const page of listDeliveries(app)) {
    let older = false;
    for (const delivery of page) {
      if (Date.parse(delivery.delivered_at) < since) {
        older = true;
        continue;
      }
      const ok = delivery.status_code >= 200 && delivery.status_code < 300;
      const seen = byGuid.get(delivery.guid);
      if (!seen) byGuid.set(delivery.guid, { id: delivery.id, ok });
      else if (ok) seen.ok = true;
    }
    if (older) break;
  }
  let redelivered = 0;
  for (const [guid, { id, ok }] of byGuid) {
    if (ok) continue;
    // One replica per run claims a GUID (the claim expires before the next run, so a GUID whose
    // redelivery failed too is tried again), at most `maxRedeliveries` times in the window.
    const claimed = await deps.redis.set(
      `${deps.store.prefix}:redelivering:${guid}`,
      String(id),
      'PX',
      Math.max(1_000, Math.floor(everyMs / 2)),
      'NX',
    );
    if (claimed !== 'OK') continue;
    const attempts = await deps.redis.incr(`${deps.store.prefix}:redelivered:${guid}`);
    await deps.redis.pexpire(`${deps.store.prefix}:redelivered:${guid}`, recoveryWindowMs * 2);
    if (attempts > maxRedeliveries) continue;
    await redeliver(app, id);
    redelivered++;
  }
  if (redelivered > 0) log.info({ redelivered, checked: byGuid.size }, 'Failed GitHub deliveries redelivered');
  return redelivered;
}
