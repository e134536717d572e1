import { createPublicKey, verify, type JsonWebKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { HttpError } from './http.js';

/**
 * Verifies the OIDC token Pub/Sub push subscriptions send (`Authorization: Bearer <JWT>`):
 * RS256 signature against Google's JWKS, `iss`, `aud`, `exp`, and the service account `email`
 * (https://cloud.google.com/pubsub/docs/authenticate-push-subscriptions).
 */
export interface GoogleOidcOptions {
  audience: string;
  serviceAccount: string;
  /** https URL of the JWKS (default Google's), or a local file path (tests, air-gapped). */
  jwks: string;
  now?: () => number;
  cacheMs?: number;
}

const issuers = new Set(['https://accounts.google.com', 'accounts.google.com']);

/** A key the token names that is not in the cached JWKS refetches it, but at most this often. */
const unknownKeyRefetchMs = 60_000;

type Jwks = Array<JsonWebKey & { kid?: string }>;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function createGoogleTokenVerifier(options: GoogleOidcOptions): (authorization: string | undefined) => Promise<void> {
  const now = options.now ?? Date.now;
  let cache: { keys: Jwks; until: number; fetchedAt: number } | undefined;
  async function load(): Promise<Jwks> {
    try {
      const text = /^https?:\/\//.test(options.jwks) ? await (await fetch(options.jwks, { signal: AbortSignal.timeout(5_000) })).text() : await readFile(options.jwks, 'utf8');
      const parsed: unknown = JSON.parse(text);
      if (!isObject(parsed) || !Array.isArray(parsed.keys)) throw new Error('no "keys" array');
      return parsed.keys.filter(isObject) as Jwks;
    } catch (error) {
      // Pub/Sub retries a 503 with backoff, so a push is delayed, not lost, while the keys are out of reach.
      throw new HttpError(503, `could not read Google's signing keys from ${options.jwks} (${(error as Error).message}); the push is retried. Check that ESCALATOR_GAR_JWKS_URL is reachable from Escalator`, { 'retry-after': '30' });
    }
  }
  async function keys(refresh = false): Promise<Jwks> {
    if (cache && cache.until > now() && !(refresh && now() - cache.fetchedAt >= unknownKeyRefetchMs)) return cache.keys;
    const fetched = await load();
    cache = { keys: fetched, until: now() + (options.cacheMs ?? 3_600_000), fetchedAt: now() };
    return cache.keys;
  }
  return async (authorization) => {
    const token = authorization?.startsWith('Bearer ') ? authorization.slice(7).trim() : undefined;
    if (!token) throw new HttpError(401, 'missing Authorization: Bearer <OIDC token>; enable authentication on the Pub/Sub push subscription');
    const parts = token.split('.');
    if (parts.length !== 3) throw new HttpError(401, 'the bearer token is not a JWT');
    const [headerText, claimsText, signature] = parts as [string, string, string];
    let header: unknown;
    let body: unknown;
    try {
      header = JSON.parse(Buffer.from(headerText, 'base64url').toString('utf8'));
      body = JSON.parse(Buffer.from(claimsText, 'base64url').toString('utf8'));
    } catch {
      throw new HttpError(401, 'the bearer token is not a JWT');
    }
    if (!isObject(header) || !isObject(body)) throw new HttpError(401, 'the bearer token is not a JWT (its header and claims must be JSON objects)');
    const claims = body as { iss?: unknown; aud?: unknown; exp?: unknown; email?: unknown; email_verified?: unknown };
    if (header.alg !== 'RS256') throw new HttpError(401, `token algorithm ${String(header.alg).slice(0, 20)} is not accepted; Google signs with RS256`);
    if (typeof header.kid !== 'string') throw new HttpError(401, 'the token names no signing key (kid)');
    // Google rotates keys: a key not in the cache refetches the JWKS, at most once a minute.
    const jwk = (await keys()).find((key) => key.kid === header.kid) ?? (await keys(true)).find((key) => key.kid === header.kid);
    if (!jwk) throw new HttpError(401, 'the token was signed with an unknown key');
    let valid: boolean;
    try {
      valid = verify('RSA-SHA256', Buffer.from(`${headerText}.${claimsText}`), createPublicKey({ key: jwk, format: 'jwk' }), Buffer.from(signature, 'base64url'));
    } catch {
      valid = false; // a key that is not an RSA public key verifies nothing
    }
    if (!valid) throw new HttpError(401, 'the token signature is invalid');
    if (typeof claims.iss !== 'string' || !issuers.has(claims.iss)) throw new HttpError(401, 'the token was not issued by Google');
    if (claims.aud !== options.audience) throw new HttpError(401, 'the token audience does not match ESCALATOR_GAR_AUDIENCE');
    if (typeof claims.exp !== 'number' || claims.exp * 1000 < now()) throw new HttpError(401, 'the token has expired');
    if (claims.email !== options.serviceAccount || claims.email_verified === false) throw new HttpError(401, 'the token was issued to another service account than ESCALATOR_GAR_SERVICE_ACCOUNT');
  };
}
