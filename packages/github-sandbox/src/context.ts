import type { KeyedLock } from './lock.js';
import type { Principal, SandboxRepo, SandboxUser } from './model.js';
import type { SandboxState } from './state.js';
import type { Urls } from './urls.js';
import type { WebhookDispatcher } from './webhooks.js';

/** How the next requests fail, set through the control API so tests can prove back-off. */
export interface ThrottleSwitch {
  /** `secondary`: 403 + `retry-after`; `secondary-429`: 429 + `retry-after`; `primary`: 403 with `x-ratelimit-remaining: 0`. */
  mode: 'secondary' | 'secondary-429' | 'primary';
  /** How many more API requests answer this way. */
  remaining: number;
  /** Seconds to wait (`retry-after`, or until `x-ratelimit-reset`). */
  retryAfter: number;
}

/** Test and demo switches, changed through `/_sandbox/…`. */
export interface SandboxControls {
  throttle: ThrottleSwitch | null;
  /** Added to the real clock: lets demos skip a soak time. */
  clockOffsetMs: number;
}

/** What every route and service of the simulator works with. */
export interface SandboxContext {
  state: SandboxState;
  urls: Urls;
  webhooks: WebhookDispatcher;
  /** One lock per repository: ref updates, merges and their webhooks never interleave. */
  locks: KeyedLock;
  /** Commits GitHub itself would have signed (App API commits with default identity, web merges). */
  verifiedCommits: Set<string>;
  controls: SandboxControls;
}

export function fullName(repo: SandboxRepo): string {
  return `${repo.owner.login}/${repo.name}`;
}

/** The account a request acts as: the user, or the App's bot user for installations and the App. */
export function actorOf(context: SandboxContext, principal: Principal | null): SandboxUser {
  if (principal?.kind === 'user') return principal.user;
  return context.state.requireApp().bot;
}

/** Runs `work` holding the repository's write lock. */
export function withRepoLock<T>(context: SandboxContext, repo: SandboxRepo, work: () => Promise<T>): Promise<T> {
  return context.locks.run(`repo:${repo.id}`, work);
}
