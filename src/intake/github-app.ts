import type { Probot } from 'probot';
import type { Logger } from '../observability/logger.js';

/**
 * The Probot application: GitHub webhook events in, jobs out. Probot has already verified the
 * `X-Hub-Signature-256` over the raw body before any handler here runs.
 * Handlers stay tiny — normalize and enqueue — because GitHub aborts a delivery after 10 s.
 */
export interface GitHubAppDeps {
  log: Logger;
  /** Called for every verified delivery; later features route events to queues here. */
  onEvent?: (event: { name: string; id: string; installationId?: number; repository?: string; payload: unknown }) => Promise<void>;
}

export function createGitHubApp(deps: GitHubAppDeps) {
  return (app: Probot): void => {
    app.onAny(async (context) => {
      const payload = context.payload as { installation?: { id: number }; repository?: { full_name: string } };
      const event = {
        name: context.name,
        id: context.id,
        installationId: payload.installation?.id,
        repository: payload.repository?.full_name,
        payload: context.payload,
      };
      deps.log.info({ deliveryId: event.id, event: event.name, repo: event.repository }, 'GitHub event received');
      await deps.onEvent?.(event);
    });
  };
}
