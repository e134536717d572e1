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

export function createGoogleTokenVerifier(options: GoogleOidcOptions): (authorization: string | undefined) => Promise<void> {
  const now = options.now ?? Date.now;
  let cache: { keys: Array<JsonWebKey & { kid?: string }>; until: number } | undefined;
  async function keys(): Promise<Array<JsonWebKey & { kid?: string }>> {
    if (cache && cache.until > now()) return cache.keys;
    const text = /^https?:\/\//.test(options.jwks) ? await (await fetch(options.jwks, { signal: AbortSignal.timeout(5_000) })).text() : await readFile(options.jwks, 'utf8');
    const parsed = JSON.parse(text) as { keys?: Array<JsonWebKey & { kid?: string }> };
    cache = { keys: parsed.keys ?? [], until: now() + (options.cacheMs ?? 3_600_000) };
    return cache.keys;
  }
  return async (authorization) => {
    const token = authorization?.startsWith('Bearer ') ? authorization.slice(7).trim() : undefined;
    if (!token) throw new HttpError(401, 'missing Authorization: Bearer <OIDC token>; enable authentication on the Pub/Sub push subscription');
    const parts = token.split('.');
    if (parts.length !== 3) throw new HttpError(401, 'the bearer token is not a JWT');
    const [headerText, claimsText, signature] = parts as [string, string, string];
    let header: { alg?: string; kid?: string };
    let claims: { iss?: string; aud?: string; exp?: number; email?: string; email_verified?: boolean };
    try {
      header = JSON.parse(Buffer.from(headerText, 'base64url').toString('utf8'));
      claims = JSON.parse(Buffer.from(claimsText, 'base64url').toString('utf8'));
    } catch {
      throw new HttpError(401, 'the bearer token is not a JWT');
    }
    if (header.alg !== 'RS256') throw new HttpError(401, `token algorithm ${String(header.alg)} is not accepted; Google signs with RS256`);
    let jwk = (await keys()).find((key) => key.kid === header.kid);
    if (!jwk) {
      cache = undefined; // Google rotates keys: refetch once before refusing.
      jwk = (await keys()).find((key) => key.kid === header.kid);
    }
    if (!jwk) throw new HttpError(401, 'the token was signed with an unknown key');
    const valid = verify('RSA-SHA256', Buffer.from(`${headerText}.${claimsText}`), createPublicKey({ key: jwk, format: 'jwk' }), Buffer.from(signature, 'base64url'));
    if (!valid) throw new HttpError(401, 'the token signature is invalid');
    if (!claims.iss || !issuers.has(claims.iss)) throw new HttpError(401, 'the token was not issued by Google');
    if (claims.aud !== options.audience) throw new HttpError(401, 'the token audience does not match ESCALATOR_GAR_AUDIENCE');
    if (typeof claims.exp !== 'number' || claims.exp * 1000 < now()) throw new HttpError(401, 'the token has expired');
    if (claims.email !== options.serviceAccount || claims.email_verified === false) throw new HttpError(401, 'the token was issued to another service account than ESCALATOR_GAR_SERVICE_ACCOUNT');
  };
}
