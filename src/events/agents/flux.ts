import { z } from 'zod';
import type { HealthState, SyncState } from '../../planners/health.js';
import { boundMessage, commitOf, isoOf, type AgentResult } from './report.js';

/**
 * Flux notification-controller's Event, as its `generic-hmac` Provider posts it (the JSON of
 * `Event` in fluxcd/pkg apis/event/v1beta1/event.go, signed by internal/notifier/forwarder.go with
 * `X-Signature: sha256=<hex HMAC-SHA256 of the body>` keyed by the Secret's `token`). Only the
 * fields read here are checked.
 */
export const FluxEvent = z.object({
  involvedObject: z.object({
    kind: z.string().min(1),
    name: z.string().min(1),
    namespace: z.string().optional(),
    apiVersion: z.string().optional(),
  }),
  severity: z.string().min(1),
  timestamp: z.string().min(1),
  message: z.string().default(''),
  reason: z.string().min(1),
  metadata: z.record(z.string(), z.string()).optional(),
  reportingController: z.string().optional(),
});
export type FluxEvent = z.infer<typeof FluxEvent>;

/**
 * What each Ready-condition reason says (kustomize-controller sends the Ready condition's reason
 * as the event's, internal/controller/kustomization_controller.go `event`), from the controllers'
 * own constants: fluxcd/pkg apis/meta (ReconciliationSucceeded, ReconciliationFailed, Progressing,
 * ProgressingWithRetry, DependencyNotReady, Suspended, HealthCheckFailed, HealthCheckCanceled,
 * ArtifactFailed, BuildFailed, PruneFailed), kustomize-controller api/v1beta2/condition_types.go
 * (ValidationFailed) and helm-controller api/v2/condition_types.go (Install…, Upgrade…, Test…,
 * Rollback…). Another reason counts by severity: error is a failed sync.
 */
const REASONS: Record<string, { sync: SyncState; health: HealthState }> = {
  ReconciliationSucceeded: { sync: 'synced', health: 'healthy' },
  HealthCheckFailed: { sync: 'synced', health: 'degraded' },
  HealthCheckCanceled: { sync: 'out-of-sync', health: 'progressing' },
  Progressing: { sync: 'out-of-sync', health: 'progressing' },
  ProgressingWithRetry: { sync: 'out-of-sync', health: 'progressing' },
  DependencyNotReady: { sync: 'out-of-sync', health: 'progressing' },
  Suspended: { sync: 'unknown', health: 'suspended' },
  ReconciliationFailed: { sync: 'failed', health: 'unknown' },
  BuildFailed: { sync: 'failed', health: 'unknown' },
  ValidationFailed: { sync: 'failed', health: 'unknown' },
  ArtifactFailed: { sync: 'failed', health: 'unknown' },
  PruneFailed: { sync: 'failed', health: 'unknown' },
  InstallSucceeded: { sync: 'synced', health: 'healthy' },
  UpgradeSucceeded: { sync: 'synced', health: 'healthy' },
  TestSucceeded: { sync: 'synced', health: 'healthy' },
  InstallFailed: { sync: 'failed', health: 'unknown' },
  UpgradeFailed: { sync: 'failed', health: 'unknown' },
  TestFailed: { sync: 'synced', health: 'degraded' },
  RollbackSucceeded: { sync: 'synced', health: 'degraded' },
  RollbackFailed: { sync: 'failed', health: 'degraded' },
};

/**
 * The revision in the event's metadata. notification-controller strips the involved object's API
 * group from the keys before posting (internal/server/event_handlers.go, Flux RFC 0008), so it is
 * `revision`; older versions post `kustomize.toolkit.fluxcd.io/revision`. `originRevision` (the
 * Git commit an OCI artifact was built from) comes first, as in the Event's own `GetRevision`.
 */
function revisionOf(metadata: Record<string, string> | undefined): string | undefined {
  if (!metadata) return undefined;
  const find = (key: string): string | undefined =>
    metadata[key] ?? Object.entries(metadata).find(([name]) => name.endsWith(`/${key}`))?.[1];
  return commitOf(find('originRevision')) ?? commitOf(find('revision'));
}

/** A Flux event as a report; `invalid` names the first field that is not as Flux sends it. */
export function normalizeFluxEvent(payload: unknown): AgentResult {
  const parsed = FluxEvent.safeParse(payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return {
      kind: 'invalid',
      message: `the body is not a Flux event: ${issue.path.join('.') || '(root)'}: ${issue.message}; point a Flux Provider of type generic-hmac at this route (docs/health.md)`,
    };
  }
  const event = parsed.data;
  if (event.severity === 'trace') return { kind: 'ignored', reason: 'a trace event says nothing about sync or health' };
  const at = isoOf(event.timestamp);
  if (!at) return { kind: 'invalid', message: `the event's timestamp "${event.timestamp.slice(0, 40)}" is not a time` };
  const state =
    REASONS[event.reason] ??
    (event.severity === 'error'
      ? { sync: 'failed' as const, health: 'unknown' as const }
      : { sync: 'unknown' as const, health: 'unknown' as const });
  const revision = revisionOf(event.metadata);
  const message = boundMessage(event.message);
  return {
    kind: 'report',
    report: {
      agent: 'flux',
      object: {
        name: event.involvedObject.name,
        kind: event.involvedObject.kind,
        ...(event.involvedObject.namespace ? { namespace: event.involvedObject.namespace } : {}),
      },
      ...(revision ? { revision } : {}),
      ...state,
      at,
      ...(message ? { message } : {}),
    },
  };
}
