import type { Probot } from 'probot';
import type { RepoState } from '../adapters/store/repo-state.js';
import type { Logger } from '../observability/logger.js';
import type { Producer } from '../queue/producer.js';
import { githubHandlers, type GitHubIntake } from './github/index.js';

/**
 * The Probot application: GitHub webhook events in, jobs out. Probot has verified the
 * `X-Hub-Signature-256` over the raw body before any handler here runs.
 * Handlers stay tiny — normalize and enqueue — because GitHub aborts a delivery after 10 s. A
 * handler that throws makes Probot answer 500, so GitHub records a failed delivery that can be
 * redelivered: nothing accepted is lost. The handlers are a table (src/intake/github/index.ts);
 * each gets its delivery through one context helper (src/intake/github/event.ts).
 */
export interface GitHubAppDeps {
  log: Logger;
  producer?: Producer;
  store?: RepoState;
  /** This App's id: deployment statuses of the Deployments it created itself are not agent reports. */
  appId?: number | string;
  now?: () => Date;
}

export function createGitHubApp(deps: GitHubAppDeps) {
  return (app: Probot): void => {
    const producer = deps.producer;
    if (!producer) return; // Probot's setup mode: no queues yet.
    // This App's bot login (`<slug>[bot]`), asked once: only its own pull requests carry markers.
    let botLogin: Promise<string> | undefined;
    const intake: GitHubIntake = {
      producer,
      log: deps.log,
      store: deps.store,
      appId: deps.appId,
      now: deps.now ?? (() => new Date()),
      ownLogin: () =>
        (botLogin ??= app
          .auth()
          .then((octokit) => octokit.rest.apps.getAuthenticated())
          .then(({ data }) => `${data?.slug}[bot]`)
          .catch((error: unknown) => {
            botLogin = undefined;
            throw error;
          })),
    };
    for (const handler of githubHandlers) handler.register(app, intake);
  };
}
