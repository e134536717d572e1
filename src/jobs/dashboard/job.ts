import { z } from 'zod';
import { exponential, KEEP_FAILED, RepoRef, type JobKind } from '../../queue/kind.js';
import { jobId } from '../../queue/names.js';
import type { Producer } from '../../queue/producer.js';

/**
 * Render the dashboard issue of one repository again. Coalesced: one waits at a time per
 * repository (and one forced, after a person ticked a box, so the box is unticked).
 */
export const DashboardJob = z.object({
  ...RepoRef,
  /** Write the body even when it hashes as the last one written (a person edited the issue). */
  force: z.boolean().optional(),
});
export type DashboardJob = z.infer<typeof DashboardJob>;

export const dashboardKind = {
  name: 'dashboard',
  schema: DashboardJob,
  options: { attempts: 5, backoff: exponential(2_000), removeOnComplete: { count: 100 }, removeOnFail: KEEP_FAILED },
  enqueue: { enqueueDashboard },
} as const satisfies JobKind;

/**
 * How long changes to one repository gather before its dashboard is rendered again, unless the
 * producer says otherwise (ESCALATOR_DASHBOARD_DEBOUNCE_MS, which tests lower).
 */
export const DASHBOARD_DEBOUNCE_MS = 2_000;

/**
 * Render one repository's dashboard within the debounce (`DASHBOARD_DEBOUNCE_MS` by default): every change while one waits
 * folds into it (BullMQ deduplication, not pushed back, so a steady stream still renders every
 * couple of seconds), and a change while one runs schedules exactly one more. `key` only keeps job
 * ids distinct (a timestamp); a forced render has a slot of its own.
 */
export async function enqueueDashboard(producer: Producer, data: DashboardJob, key: string): Promise<void> {
  const slot = data.force ? 'force' : 'change';
  await producer.enqueue(dashboardKind.name, DashboardJob, data, {
    ...dashboardKind.options,
    jobId: jobId('dashboard', data.owner, data.repo, slot, key),
    delay: producer.delays.dashboard ?? DASHBOARD_DEBOUNCE_MS,
    deduplication: { id: jobId('dashboard', data.owner, data.repo, slot), keepLastIfActive: true },
  });
}
