import { z } from 'zod';
import type { HealthState, SyncState } from '../../planners/health.js';
import { boundMessage, commitOf, isoOf, type AgentResult } from './report.js';

/** The `format` the shipped template writes first: a body without it was not made by that template. */
export const ARGOCD_FORMAT = 'escalator/argocd-v1';

/** Where the template is shipped, for error messages and docs. */
export const ARGOCD_TEMPLATE_FILE = 'deploy/agents/argocd-notifications-cm.yaml';

/**
 * Go templates print a missing map key as `<no value>`; `toJson` of one gives `null`. Both mean absent.
 */
const text = z
  .string()
  .nullish()
  .transform((value) => (value === null || value === undefined || value === '<no value>' ? undefined : value));

/**
 * The body of the `escalator-app-sync-health` template in deploy/agents/argocd-notifications-cm.yaml:
 * an Argo CD Application's fields, each rendered with `toJson`.
 */
export const ArgoCdBody = z.object({
  format: z.literal(ARGOCD_FORMAT),
  app: z.string().min(1),
  namespace: text,
  repoURL: text,
  revision: text,
  /** A multi-source Application's `spec.sources[].repoURL` and `status.sync.revisions`, in the same order. */
  sources: z.array(z.string()).nullish(),
  revisions: z.array(z.string()).nullish(),
  syncStatus: z.string().min(1),
  healthStatus: z.string().min(1),
  healthChangedAt: text,
  operationPhase: text,
  operationMessage: text,
  finishedAt: text,
  url: text,
});
export type ArgoCdBody = z.infer<typeof ArgoCdBody>;

/** Argo CD's sync status codes (pkg/apis/application/v1alpha1: Synced, OutOfSync, Unknown). */
const SYNC: Record<string, SyncState> = { Synced: 'synced', OutOfSync: 'out-of-sync', Unknown: 'unknown' };

/** Argo CD's health status codes (gitops-engine pkg/health: Healthy, Progressing, Degraded, Suspended, Missing, Unknown). */
const HEALTH: Record<string, HealthState> = {
  Healthy: 'healthy',
  Progressing: 'progressing',
  Degraded: 'degraded',
  Suspended: 'suspended',
  Missing: 'missing',
  Unknown: 'unknown',
};

/**
 * The Git commit and repository of the report. A single-source Application has `revision` and
 * `repoURL`; a multi-source one has `sources` and `revisions`, and its Git source is the one whose
 * revision is a commit (a Helm chart source's revision is a chart version): the first such.
 */
function sourceOf(body: ArgoCdBody): { revision?: string; repoURL?: string } {
  const revision = commitOf(body.revision);
  if (revision) return { revision, ...(body.repoURL ? { repoURL: body.repoURL } : {}) };
  const sources = body.sources ?? [];
  const revisions = body.revisions ?? [];
  for (let i = 0; i < Math.min(sources.length, revisions.length); i++) {
    const commit = commitOf(revisions[i]);
    if (commit) return { revision: commit, repoURL: sources[i]! };
  }
  return body.repoURL ? { repoURL: body.repoURL } : {};
}

/** The later of two ISO times (either may be absent). */
function later(a: string | undefined, b: string | undefined): string | undefined {
  if (!a) return b;
  if (!b) return a;
  return Date.parse(a) >= Date.parse(b) ? a : b;
}

/**
 * An Argo CD notification as a report. `invalid` says what is not as the shipped template makes
 * it. A failed or errored sync operation counts as a failed sync. The report's time is the later
 * of the health's last transition and the operation's end: the app was in this state from then.
 */
export function normalizeArgoCdBody(payload: unknown): AgentResult {
  if (typeof payload === 'object' && payload !== null && (payload as { format?: unknown }).format !== ARGOCD_FORMAT)
    return {
      kind: 'invalid',
      message: `the body has no "format": "${ARGOCD_FORMAT}"; it was not made by Escalator's Argo CD template: use the escalator-app-sync-health template of ${ARGOCD_TEMPLATE_FILE} (docs/health.md)`,
    };
  const parsed = ArgoCdBody.safeParse(payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return {
      kind: 'invalid',
      message: `the body is not the one Escalator's Argo CD template makes: ${issue.path.join('.') || '(root)'}: ${issue.message}; use the escalator-app-sync-health template of ${ARGOCD_TEMPLATE_FILE} unchanged (docs/health.md)`,
    };
  }
  const body = parsed.data;
  const sync = SYNC[body.syncStatus];
  const health = HEALTH[body.healthStatus];
  if (!sync || !health)
    return {
      kind: 'invalid',
      message: `syncStatus "${body.syncStatus.slice(0, 40)}" or healthStatus "${body.healthStatus.slice(0, 40)}" is not an Argo CD status; the template renders .app.status.sync.status and .app.status.health.status`,
    };
  const failed = body.operationPhase === 'Failed' || body.operationPhase === 'Error';
  const { revision, repoURL } = sourceOf(body);
  const at = later(isoOf(body.healthChangedAt), isoOf(body.finishedAt));
  const message = boundMessage(body.operationMessage);
  return {
    kind: 'report',
    report: {
      agent: 'argocd',
      object: { name: body.app, ...(body.namespace ? { namespace: body.namespace } : {}) },
      ...(revision ? { revision } : {}),
      sync: failed ? 'failed' : sync,
      health,
      ...(at ? { at } : {}),
      ...(body.url && /^https?:\/\//.test(body.url) ? { url: body.url } : {}),
      ...(message ? { message } : {}),
      ...(repoURL ? { repoURL } : {}),
    },
  };
}
