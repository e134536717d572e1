import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * Conditional requests as api.github.com answers them (recorded in @octokit/fixtures, e.g. the
 * get-content, get-repository and labels scenarios): every successful answer with a body carries
 * an `ETag` and `Cache-Control: private, max-age=60, s-maxage=60`; GETs carry `Last-Modified`; a
 * GET whose `If-None-Match` names the current ETag, or whose `If-Modified-Since` is not before
 * the representation's time, is answered `304 Not Modified` with no body, and does not count
 * against the primary rate limit
 * (https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#use-conditional-requests-if-appropriate).
 *
 * ETags vary by caller (GitHub's answers carry `Vary: Accept, Authorization, Cookie`), so one
 * installation's ETag never matches another's representation.
 */
export class ConditionalRequests {
  /** When each representation (by ETag) was first served: its `Last-Modified`. Bounded. */
  readonly #firstServed = new Map<string, number>();

  constructor(
    private readonly clock: () => Date,
    private readonly limit = 50_000,
  ) {}

  /** The ETag of a representation: a hash of the bytes, their type and who asked. */
  etag(payload: Buffer | string, contentType: string, caller: string): string {
    const hash = createHash('sha256').update(caller).update('\0').update(contentType).update('\0').update(payload);
    return `"${hash.digest('hex').slice(0, 32)}"`;
  }

  /** The headers a successful answer gets, and whether a GET's conditions make it a 304. */
  decide(
    method: string,
    status: number,
    payload: Buffer | string | undefined,
    contentType: string,
    caller: string,
    request: IncomingHttpHeaders,
    lastModified = true,
  ): { headers: Record<string, string>; notModified: boolean } {
    if (payload === undefined || status < 200 || status >= 300) return { headers: {}, notModified: false };
    const etag = this.etag(payload, contentType, caller);
    const headers: Record<string, string> = { etag, 'cache-control': 'private, max-age=60, s-maxage=60' };
    if (method !== 'GET' && method !== 'HEAD') return { headers, notModified: false };
    headers.vary = 'Accept, Authorization, Cookie, X-GitHub-OTP';
    // Lists and the root index carry no Last-Modified on GitHub (labels, issues, collaborators,
    // statuses in the recordings), so If-Modified-Since cannot match them.
    const modified = lastModified ? this.#modifiedAt(etag) : Number.NaN;
    if (lastModified) headers['last-modified'] = new Date(modified).toUTCString();
    return { headers, notModified: status === 200 && this.#fresh(request, etag, modified) };
  }

  #modifiedAt(etag: string): number {
    let at = this.#firstServed.get(etag);
    if (at === undefined) {
      // Whole seconds, as HTTP dates have them.
      at = Math.floor(this.clock().getTime() / 1000) * 1000;
      if (this.#firstServed.size >= this.limit) {
        const oldest = this.#firstServed.keys().next().value;
        if (oldest !== undefined) this.#firstServed.delete(oldest);
      }
      this.#firstServed.set(etag, at);
    }
    return at;
  }

  /** RFC 9110 §13.1: If-None-Match wins over If-Modified-Since; weak comparison for If-None-Match. */
  #fresh(request: IncomingHttpHeaders, etag: string, modified: number): boolean {
    const noneMatch = request['if-none-match'];
    if (noneMatch !== undefined) {
      const tags = noneMatch.split(',').map((tag) => tag.trim().replace(/^W\//, ''));
      return tags.includes('*') || tags.includes(etag);
    }
    const since = request['if-modified-since'];
    if (since === undefined) return false;
    const time = Date.parse(since);
    return Number.isFinite(time) && modified <= time;
  }
}
