import type { SandboxControls } from './context.js';
import { HttpError } from './http.js';
import type { Principal } from './model.js';

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
    const message =
      'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. ' +
      `If you reach out to GitHub Support for help, please include the request ID ${requestId}.`;
    throw new HttpError(
      rule.mode === 'secondary-429' ? 429 : 403,
      message,
      { documentation_url: SECONDARY_DOCS },
      {
        'retry-after': String(rule.retryAfter),
      },
    );
  }

  /**
   * Counts one request against the caller's bucket and returns the `x-ratelimit-*` headers;
   * `count: false` (a 304 answer) reads the bucket without spending from it.
   */
  headers(principal: Principal | null, count = true): Record<string, string> {
    const key =
      principal === null
        ? 'anonymous'
        : principal.kind === 'installation'
          ? `installation:${principal.installation.id}`
          : principal.kind === 'user'
            ? `user:${principal.user.id}`
            : 'app';
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
