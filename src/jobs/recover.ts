import type { ProcessorContext } from '../queue/worker.js';
import type { JobDeps } from './deps.js';

/** How far back failed deliveries are redelivered (GitHub keeps three days of them). */
export const recoveryWindowMs = 24 * 60 * 60 * 1000;

/**
 * GitHub does not retry a failed webhook delivery by itself. On start and every few minutes:
 * 1. list the App's recent deliveries (newest first, cursor-paginated)
 * 2. keep the GUIDs that never succeeded (a later redelivery that succeeded counts)
 * 3. redeliver each once, deduplicated across replicas by a Redis key per GUID
 */
export async function processRecoverJob(deps: JobDeps, _data: unknown, { log }: ProcessorContext): Promise<number> {
  const since = deps.now().getTime() - recoveryWindowMs;
  const byGuid = new Map<string, { id: number; ok: boolean }>();
  const app = deps.github.app;
  for await (const page of app.paginate.iterator(app.rest.apps.listWebhookDeliveries, { per_page: 100 })) {
    let older = false;
    for (const delivery of page.data) {
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
    // One replica redelivers a GUID once per window; the key outlives the window.
    const claimed = await deps.redis.set(`${deps.store.prefix}:redelivered:${guid}`, String(id), 'PX', recoveryWindowMs * 2, 'NX');
    if (claimed !== 'OK') continue;
    await app.rest.apps.redeliverWebhookDelivery({ delivery_id: id });
    redelivered++;
  }
  if (redelivered > 0) log.info({ redelivered, checked: byGuid.size }, 'Failed GitHub deliveries redelivered');
  return redelivered;
}
