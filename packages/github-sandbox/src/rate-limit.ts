import type { SandboxControls } from './context.js';
import { HttpError } from './http.js';
import type { Principal } from './model.js';

/** Who a request counts against: its installation, user, the App, or nobody. Rate limits and ETags vary by it. */
export function callerKey(principal: Principal | null): string {
  if (principal === null) return 'anonymous';
  if (principal.kind === 'installation') return `installation:${principal.installation.id}`;
  if (principal.kind === 'user') return `user:${principal.user.id}`;
  return 'app';
}

const LIMIT = 5000;
const WINDOW_MS = 60 * 60 * 1000;
const SECONDARY_DOCS =
  'https://docs.github.com/enterprise-server@3.17/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits';

/**
 * Primary rate-limit bookkeeping per credential (`x-ratelimit-*` headers, one-hour windows)
 * and the control switch that makes the next N requests fail like GitHub's limits do.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { used: number; resetAt: number }>();

  constructor(private readonly clock: () => Date) {}

  /** Throws GitHub's rate-limit answer while the switch is on, counting the request down. */
  throttle(controls: SandboxControls, principal: Principal | null, requestId: string): void {
    const rule = controls.throttle;
    if (!rule || rule.remaining <= 0) return;
    rule.remaining -= 1;
    if (rule.remaining === 0) controls.throttle = null;
    if (rule.mode === 'primary') {
      const who =
        principal?.kind === 'installation' ? `installation ID ${principal.installation.id}` : 'this credential';
      const reset = Math.ceil(this.clock().getTime() / 1000) + rule.retryAfter;
      throw new HttpError(
        403,
        `API rate limit exceeded for ${who}.`,
        {},
        {
          'x-ratelimit-limit': String(LIMIT),
          'x-ratelimit-remaining': '0',
          'x-ratelimit-used': String(LIMIT),
          'x-ratelimit-reset': String(reset),
          'x-ratelimit-resource': 'core',
        },
      );
    }
    throw secondaryLimitError(rule.mode === 'secondary-429' ? 429 : 403, rule.retryAfter, requestId);
  }

  /**
   * Counts one request against the caller's bucket and returns the `x-ratelimit-*` headers;
   * `count: false` (a 304 answer) reads the bucket without spending from it.
   */
  headers(principal: Principal | null, count = true): Record<string, string> {
    const key = callerKey(principal);
    const now = this.clock().getTime();
    let bucket = this.buckets.get(key);
    if (!bucket || bucket.resetAt <= now) {
      bucket = { used: 0, resetAt: now + WINDOW_MS };
      this.buckets.set(key, bucket);
    }
    if (count) bucket.used += 1;
    const limit = principal === null ? 60 : LIMIT;
    return {
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(Math.max(limit - bucket.used, 0)),
      'x-ratelimit-used': String(bucket.used),
      'x-ratelimit-reset': String(Math.ceil(bucket.resetAt / 1000)),
      'x-ratelimit-resource': 'core',
    };
  }
}

/** GitHub's documented secondary limits on content-creating requests, per App installation. */
export interface SecondaryLimits {
  /** Content-creating requests (POST, PATCH, PUT, DELETE; GraphQL mutations) per minute. Default 80. */
  perMinute?: number;
  /** Content-creating requests per hour. Default 500. */
  perHour?: number;
  /** Requests in flight at once (any method). Default 100. */
  concurrent?: number;
}

/**
 * GitHub's secondary rate limits as its docs describe them
 * (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits):
 * at most 100 concurrent requests, and at most 80 content-generating requests per minute and 500
 * per hour. Past them GitHub answers 403 (or 429) with the secondary-limit message and a
 * `retry-after` header; a refused request is not counted.
 */
export class SecondaryLimiter {
  readonly #created = new Map<string, number[]>();
  readonly #inFlight = new Map<string, number>();
  /** How many requests each caller was refused, for benches and tests. */
  readonly refused = new Map<string, number>();

  constructor(
    private readonly clock: () => Date,
    private readonly limits: Required<SecondaryLimits>,
  ) {}

  /** Throws GitHub's secondary-limit answer, or counts the request in and returns its release. */
  enter(caller: string, creates: boolean, requestId: string): () => void {
    const inFlight = this.#inFlight.get(caller) ?? 0;
    if (inFlight >= this.limits.concurrent) this.#refuse(caller, 60, requestId);
    if (creates) {
      const now = this.clock().getTime();
      const times = (this.#created.get(caller) ?? []).filter((time) => time > now - 3_600_000);
      const inMinute = times.filter((time) => time > now - 60_000);
      if (inMinute.length >= this.limits.perMinute)
        this.#refuse(caller, Math.ceil((inMinute[0]! + 60_000 - now) / 1000), requestId);
      if (times.length >= this.limits.perHour)
        this.#refuse(caller, Math.ceil((times[0]! + 3_600_000 - now) / 1000), requestId);
      times.push(now);
      this.#created.set(caller, times);
    }
    this.#inFlight.set(caller, inFlight + 1);
    return () => this.#inFlight.set(caller, (this.#inFlight.get(caller) ?? 1) - 1);
  }

  #refuse(caller: string, retryAfter: number, requestId: string): never {
    this.refused.set(caller, (this.refused.get(caller) ?? 0) + 1);
    throw secondaryLimitError(403, Math.max(retryAfter, 1), requestId);
  }
}

/** GitHub's answer past a secondary limit: its documented message, the request id, and `retry-after`. */
function secondaryLimitError(status: 403 | 429, retryAfter: number, requestId: string): HttpError {
  return new HttpError(
    status,
    'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. ' +
      `If you reach out to GitHub Support for help, please include the request ID ${requestId}.`,
    { documentation_url: SECONDARY_DOCS },
    { 'retry-after': String(retryAfter) },
  );
}
