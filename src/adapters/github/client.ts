import { createAppAuth } from '@octokit/auth-app';
import { Octokit } from '@octokit/rest';
import { RequestError } from '@octokit/request-error';
import { RateLimitError } from '../../observability/errors.js';
import type { Logger } from '../../observability/logger.js';
import type { ConditionalCache } from './conditional-cache.js';
import { currentWritePriority, writePriorityOf, type WriteBudget } from './write-budget.js';
import { githubRateLimitRemaining, githubRequests, githubRouteLabel } from '../../observability/metrics.js';

export type { Octokit };

export interface GitHubClientOptions {
  appId: number;
  privateKey: string;
  baseUrl: string;
  log: Logger;
  /** Called once per HTTP request to GitHub (metrics, the per-bump call budget in tests and benches). */
  onRequest?: (info: { method: string; route: string; status: number; remaining?: number; durationMs: number }) => void;
  /** Injected clock for rate-limit arithmetic. */
  now?: () => number;
  /** Where installation clients keep ETags and bodies, so an unchanged read costs a 304. */
  conditional?: ConditionalCache;
  /** The per-installation budget of writes that keeps Escalator under GitHub's secondary limits. */
  writes?: WriteBudget;
}

/**
 * A write waits in process for a free slot up to this long; longer, its job is delayed instead
 * (no attempt spent), so an installation whose budget is spent does not hold worker slots.
 */
export const MAX_WRITE_WAIT_MS = 1_000;

/**
 * Octokit clients for the App and its installations. Installation tokens are minted in the worker
 * (job data never holds a token) and cached by @octokit/auth-app until shortly before expiry.
 * Rate limits are not retried in-process: they become `RateLimitError`, which the queue wrapper
 * turns into a delayed job, so a waiting job holds no worker slot.
 */
export class GitHubClients {
  readonly #installations = new Map<number, Octokit>();
  readonly app: Octokit;
  constructor(readonly options: GitHubClientOptions) {
    this.app = this.#create({ appId: options.appId, privateKey: options.privateKey });
  }

  forInstallation(installationId: number): Octokit {
    let octokit = this.#installations.get(installationId);
    if (!octokit) {
      octokit = this.#create({ appId: this.options.appId, privateKey: this.options.privateKey, installationId });
      this.#installations.set(installationId, octokit);
    }
    return octokit;
  }

  #create(auth: { appId: number; privateKey: string; installationId?: number }): Octokit {
    const { baseUrl, log } = this.options;
    const onRequest = (info: Parameters<NonNullable<GitHubClientOptions['onRequest']>>[0]): void => {
      githubRequests.inc({
        route: githubRouteLabel(info.method, info.route.slice(info.method.length + 1)),
        status: String(info.status),
      });
      if (info.remaining !== undefined) githubRateLimitRemaining.set(info.remaining);
      this.options.onRequest?.(info);
    };
    const now = this.options.now ?? Date.now;
    const octokit = new Octokit({
      authStrategy: createAppAuth,
      auth,
      baseUrl,
      userAgent: 'escalator',
      log: {
        debug: () => {},
        info: () => {},
        warn: (m: string) => log.warn({ octokit: m }, 'Octokit warning'),
        error: () => {},
      },
    });
    const cache = auth.installationId !== undefined ? this.options.conditional : undefined;
    const writes = auth.installationId !== undefined ? this.options.writes : undefined;
    octokit.hook.wrap('request', async (request, options) => {
      const route = `${options.method} ${routeOf(options.url)}`;
      const started = performance.now();
      const cacheKey = cache ? conditionalKey(octokit.request.endpoint.parse(options)) : undefined;
      const cached = cacheKey !== undefined ? await cache!.get(auth.installationId!, cacheKey) : undefined;
      if (cached) options.headers = { ...options.headers, 'if-none-match': cached.etag };
      // Minting the installation token is the App's request, not a write in the installation.
      if (writes && options.method !== 'GET' && options.method !== 'HEAD' && !options.url.startsWith('/app/'))
        await this.#takeWrite(writes, auth.installationId!, route, now);
      try {
        const response = await request(options);
        const etag = response.headers.etag;
        if (cacheKey !== undefined && response.status === 200 && typeof etag === 'string')
          await cache!.set(auth.installationId!, cacheKey, {
            etag,
            data: response.data,
            headers: keptHeaders(response.headers as Record<string, unknown>),
          });
        onRequest({
          method: options.method,
          route,
          status: response.status,
          remaining: numberHeader(response.headers['x-ratelimit-remaining']),
          durationMs: performance.now() - started,
        });
        return response;
      } catch (error) {
        if (error instanceof RequestError && error.status === 304 && cached) {
          onRequest({
            method: options.method,
            route,
            status: 304,
            remaining: numberHeader(error.response?.headers['x-ratelimit-remaining']),
            durationMs: performance.now() - started,
          });
          return {
            status: 200,
            url: error.response?.url ?? '',
            headers: { ...error.response?.headers, ...cached.headers, etag: cached.etag },
            data: cached.data,
          } as Awaited<ReturnType<typeof request>>;
        }
        if (error instanceof RequestError) {
          onRequest({
            method: options.method,
            route,
            status: error.status,
            remaining: numberHeader(error.response?.headers['x-ratelimit-remaining']),
            durationMs: performance.now() - started,
          });
          const resetAt = rateLimitReset(error, now());
          if (resetAt !== undefined)
            throw new RateLimitError(
              `GitHub rate limit on ${route}; retrying after ${new Date(resetAt).toISOString()}`,
              resetAt,
            );
        }
        throw error;
      }
    });
    return octokit;
  }

  /** Waits for a write slot briefly, or delays the job (no attempt spent) when the wait is long. */
  async #takeWrite(writes: WriteBudget, installationId: number, route: string, now: () => number): Promise<void> {
    const level = writePriorityOf(route, currentWritePriority());
    for (;;) {
      const wait = await writes.take(installationId, level);
      if (wait === 0) return;
      if (wait > MAX_WRITE_WAIT_MS) {
        const resetAt = now() + wait;
        throw new RateLimitError(
          `Escalator's budget of GitHub writes for installation ${installationId} (${level} work) is spent for now, to stay under GitHub's secondary rate limits; ${route} retries after ${new Date(resetAt).toISOString()}`,
          resetAt,
        );
      }
      this.options.log.debug({ installationId, level, waitMs: wait, route }, 'Waiting for a GitHub write slot');
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/**
 * The route a request is counted under: the URL template (`/repos/{owner}/{repo}/pulls`), or for
 * GraphQL, which Octokit calls by full URL (`https://api.github.com/graphql`, `…/api/graphql` on
 * GitHub Enterprise), `/graphql`: never a host or port in a metric label.
 */
function routeOf(url: string): string {
  if (!/^https?:\/\//.test(url)) return url;
  const path = new URL(url).pathname;
  return path.endsWith('/graphql') ? '/graphql' : path;
}

/**
 * The cache key of a GET worth asking conditionally: its full URL and what it accepts. Archives
 * (tarballs, zipballs) redirect to downloads and are never kept; a caller's own conditional
 * header means it handles 304 itself.
 */
function conditionalKey(parsed: { method: string; url: string; headers: Record<string, unknown> }): string | undefined {
  if (parsed.method !== 'GET' || /\/(tarball|zipball)(\/|$)/.test(parsed.url)) return undefined;
  if (parsed.headers['if-none-match'] !== undefined || parsed.headers['if-modified-since'] !== undefined)
    return undefined;
  return `${String(parsed.headers.accept ?? '')} ${parsed.url}`;
}

/** The headers of a 200 a caller may read again from a cached answer. */
function keptHeaders(headers: Record<string, unknown>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of ['content-type', 'link', 'last-modified'])
    if (typeof headers[name] === 'string') kept[name] = headers[name];
  return kept;
}

function numberHeader(value: unknown): number | undefined {
  const n = Number(value);
  return value === undefined || !Number.isFinite(n) ? undefined : n;
}

/**
 * When GitHub says to slow down, the time it may be asked again (ms since epoch):
 * secondary limits send `retry-after` (seconds); primary limits send `x-ratelimit-remaining: 0`
 * with `x-ratelimit-reset` (epoch seconds). GitHub's docs: wait at least a minute when neither is set.
 */
export function rateLimitReset(error: RequestError, now: number): number | undefined {
  if (error.status !== 403 && error.status !== 429) return undefined;
  const headers = error.response?.headers ?? {};
  const retryAfter = numberHeader(headers['retry-after']);
  if (retryAfter !== undefined) return now + retryAfter * 1000;
  if (headers['x-ratelimit-remaining'] === '0') {
    const reset = numberHeader(headers['x-ratelimit-reset']);
    return reset !== undefined ? Math.max(reset * 1000, now + 1000) : now + 60_000;
  }
  const message = String((error.response?.data as { message?: string } | undefined)?.message ?? error.message);
  if (error.status === 429 || /secondary rate limit|rate limit exceeded/i.test(message)) return now + 60_000;
  return undefined;
}
