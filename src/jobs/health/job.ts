import { createHash } from 'node:crypto';
import { z } from 'zod';
import { exponential, KEEP_FAILED, RepoRef, type JobKind } from '../../queue/kind.js';
import { jobId } from '../../queue/names.js';
import type { Producer } from '../../queue/producer.js';

const HealthSourceSchema = z.object({
  agent: z.enum(['argocd', 'flux', 'status']),
  object: z.string().min(1).max(600),
  url: z.string().max(2_000).optional(),
});

/** One agent report, already mapped to an (environment, app) of a repository: record it, follow a change. */
export const HealthJob = z.object({
  ...RepoRef,
  report: z.object({
    owner: z.string().min(1),
    repo: z.string().min(1),
    environment: z.string().min(1),
    app: z.string(),
    revision: z.string().regex(/^[0-9a-f]{40}$/),
    sync: z.enum(['synced', 'out-of-sync', 'failed', 'unknown']),
    health: z.enum(['healthy', 'progressing', 'degraded', 'missing', 'suspended', 'unknown']),
    at: z.string().datetime({ offset: true }),
    source: HealthSourceSchema,
    message: z.string().max(1_000).optional(),
  }),
});
export type HealthJob = z.infer<typeof HealthJob>;

export const healthKind = {
  name: 'health',
  schema: HealthJob,
  options: { attempts: 5, backoff: exponential(1_000), removeOnComplete: { age: 3_600 }, removeOnFail: KEEP_FAILED },
  enqueue: { enqueueHealth },
} as const satisfies JobKind;

/**
 * Record one agent report for one (environment, app). The id is the report itself (who, about
 * what, which state, when): an agent retrying a delivery records it once.
 */
export async function enqueueHealth(
  producer: Producer,
  data: HealthJob,
  /** Look at the recorded report again at this time (a degraded spell reaching `tolerate`): a job of its own. */
  recheck?: { at: number; now: number },
): Promise<{ id: string; duplicate: boolean }> {
  const { report } = data;
  const key = createHash('sha256')
    .update(
      JSON.stringify([
        report.source.agent,
        report.source.object,
        report.revision,
        report.sync,
        report.health,
        report.at,
      ]),
    )
    .digest('hex')
    .slice(0, 32);
  const id = jobId(
    'health',
    data.owner,
    data.repo,
    report.environment,
    report.app || '_',
    recheck ? `${key}-recheck` : key,
  );
  const added = await producer.enqueue(
    healthKind.name,
    HealthJob,
    data,
    { ...healthKind.options, jobId: id, ...(recheck ? { delay: Math.max(0, recheck.at - recheck.now) } : {}) },
    { reportDuplicate: true },
  );
  return { id: added.id, duplicate: Boolean(added.duplicate) };
}
