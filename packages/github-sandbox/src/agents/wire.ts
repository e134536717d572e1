/**
 * The bodies a simulated agent posts to Escalator, in each agent's own wire format. One small
 * file, so it follows the shapes Escalator parses (its src/events/agents/) in one place.
 *
 * - Argo CD: the body of the `escalator-app-sync-health` template of the shipped
 *   `argocd-notifications-cm` snippet (deploy/agents/argocd-notifications-cm.yaml), sent by
 *   Argo CD Notifications' `webhook` service with `Authorization: Bearer <token>`.
 * - Flux: notification-controller's Event (fluxcd/pkg apis/event/v1beta1/event.go) as its
 *   `generic-hmac` Provider posts it, signed `X-Signature: sha256=<hex HMAC-SHA256 of the body>`
 *   (internal/notifier/forwarder.go), with the revision in `metadata.revision` as
 *   `<branch>@sha1:<commit>`.
 */
import { createHmac } from 'node:crypto';

export type SimulatedHealth = 'Healthy' | 'Degraded' | 'Progressing';

/** What the agent says about one of its objects at one moment. */
export interface AgentState {
  /** Argo CD Application name, or Flux Kustomization `namespace/name`. */
  object: string;
  revision: string;
  branch: string;
  health: SimulatedHealth;
  /** When the health last changed, and now (ISO). */
  changedAt: string;
  at: string;
  message?: string;
}

/** An Argo CD notification, as the shipped template renders it. */
export function argoCdBody(state: AgentState, context: { argocdUrl: string; repoURL: string }): string {
  const [namespace, name] = state.object.includes('/') ? state.object.split('/', 2) : ['argocd', state.object];
  const succeeded = state.health !== 'Degraded';
  return JSON.stringify({
    format: 'escalator/argocd-v1',
    app: name,
    namespace,
    repoURL: context.repoURL,
    revision: state.revision,
    syncStatus: 'Synced',
    healthStatus: state.health,
    healthChangedAt: state.changedAt,
    operationPhase: 'Succeeded',
    operationMessage: succeeded ? 'successfully synced (all tasks run)' : (state.message ?? 'successfully synced'),
    finishedAt: state.at,
    url: `${context.argocdUrl}/applications/${name}`,
  });
}

/** A Flux Event about a Kustomization, and the `X-Signature` header value for it. */
export function fluxEvent(state: AgentState, key: string): { body: string; signature: string } {
  const [namespace, name] = state.object.includes('/') ? state.object.split('/', 2) : ['flux-system', state.object];
  const degraded = state.health === 'Degraded';
  const progressing = state.health === 'Progressing';
  const body = JSON.stringify({
    involvedObject: {
      kind: 'Kustomization',
      namespace,
      name,
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    },
    severity: degraded ? 'error' : 'info',
    timestamp: state.at,
    message: degraded
      ? (state.message ?? 'health check failed after 30s: timeout waiting for: [Deployment/default/app status: Failed]')
      : progressing
        ? 'Reconciliation in progress'
        : 'Reconciliation finished, next run in 1m0s',
    reason: degraded ? 'HealthCheckFailed' : progressing ? 'Progressing' : 'ReconciliationSucceeded',
    metadata: { revision: `${state.branch}@sha1:${state.revision}` },
    reportingController: 'kustomize-controller',
    reportingInstance: 'kustomize-controller-sandbox',
  });
  return { body, signature: `sha256=${createHmac('sha256', key).update(body).digest('hex')}` };
}
