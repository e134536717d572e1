import type { Context, Probot } from 'probot';
import type { RepoState } from '../../adapters/store/repo-state.js';
import type { RepoKey } from '../../adapters/store/subscriptions.js';
import type { Logger } from '../../observability/logger.js';
import type { Producer } from '../../queue/producer.js';

/** The names Probot takes in `app.on` (`push`, `pull_request.closed`, …). */
export type GitHubEventName = Context['name'];

/** What every handler may use: the producer, the repository state, this App, the time. One per App. */
export interface GitHubIntake {
  producer: Producer;
  log: Logger;
  store: RepoState | undefined;
  /** This App's id: deployment statuses of the Deployments it created itself are not agent reports. */
  appId: number | string | undefined;
  now: () => Date;
  /** This App's bot login (`<slug>[bot]`), asked once: only its own pull requests carry markers. */
  ownLogin: () => Promise<string>;
}

/** One delivery as a handler sees it. */
export interface IntakeEvent<E extends GitHubEventName> {
  /** `X-GitHub-Delivery`. */
  id: string;
  name: string;
  payload: Context<E>['payload'];
  /**
   * The repository the delivery is about: Probot's `context.repo()` (`owner`, `repo`). Undefined
   * when the delivery names no single repository (installation events list theirs).
   */
  repository: { owner: string; repo: string } | undefined;
  /** {@link repository} with the installation that may act on it; undefined without either. */
  repo: RepoKey | undefined;
  /** The installation's client, for the few reads intake makes (a default branch's head). */
  octokit: Context<E>['octokit'];
  /** The intake's logger with the delivery id. */
  log: Logger;
  intake: GitHubIntake;
}

/** One entry of the table (github/index.ts): the events it answers and how it registers with Probot. */
export interface GitHubHandler {
  events: readonly GitHubEventName[];
  register(app: Probot, intake: GitHubIntake): void;
}

/** A handler of `events`: `run` gets each delivery through the one context helper ({@link intakeEvent}). */
export function handler<E extends GitHubEventName>(
  events: E | readonly E[],
  run: (event: IntakeEvent<E>) => Promise<void>,
): GitHubHandler {
  const names: E[] = typeof events === 'string' ? [events] : [...events];
  return {
    events: names,
    register: (app, intake) => app.on(names, (context) => run(intakeEvent(context as Context<E>, intake))),
  };
}

/** The context helper: one delivery of Probot's as an {@link IntakeEvent}. */
export function intakeEvent<E extends GitHubEventName>(context: Context<E>, intake: GitHubIntake): IntakeEvent<E> {
  const payload = context.payload as { installation?: { id: number }; repository?: unknown };
  const repository = payload.repository ? (context.repo() as { owner: string; repo: string }) : undefined;
  return {
    id: context.id,
    name: context.name,
    payload: context.payload,
    repository,
    repo: payload.installation && repository ? { installationId: payload.installation.id, ...repository } : undefined,
    octokit: context.octokit,
    log: intake.log.child({ deliveryId: context.id }),
    intake,
  };
}
