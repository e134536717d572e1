import { createPublicKey, verify, type JsonWebKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { HttpError } from './http.js';

/**
 * One verifier for the RS256 JWTs identity providers sign (Google's Pub/Sub push tokens, GitHub
 * Actions' `id-token`), checked against the provider's JWKS:
 * 1. split and decode the token (three base64url parts, JSON objects)
 * 2. `alg` RS256 and a `kid`; the key from the JWKS (an unknown `kid` refetches it, at most once a minute)
 * 3. the signature, before any claim is believed
 * 4. `iss`, `aud`, then the times: `exp` not passed, `iat` and `nbf` not in the future (within a
 *    small clock skew), and no longer a lifetime (`exp - iat`) than the provider issues
 * Every refusal is a 401 whose message says which check failed; a JWKS out of reach is a 503.
 */
export interface JwtVerifierOptions {
  /** Accepted `iss` values. */
  issuers: readonly string[];
  /** The one `aud` accepted (a token's `aud` may be a string or a list holding it). */
  audience: string;
  /** https URL of the JWKS, or a local file path (tests, air-gapped). */
  jwks: string;
  /** Longest `exp - iat` accepted, in seconds (before the skew). */
  maxLifetimeSeconds: number;
  /** Clock difference tolerated on every time check, in seconds. @default 60 */
  clockSkewSeconds?: number;
  /** Who issues the tokens, for messages: "Google", "GitHub Actions". */
  issuerName: string;
  /** The setting that names the audience, for messages. */
  audienceSetting: string;
  /** The setting that names the JWKS, for messages. */
  jwksSetting: string;
  /** What happens to the request when the keys are out of reach ("the push is retried"). */
  retryNote: string;
  now?: () => number;
  cacheMs?: number;
}

/** The claims of a token that passed every check. */
export type JwtClaims = Record<string, unknown> & { iss: string; exp: number; iat: number };

/** A key the token names that is not in the cached JWKS refetches it, but at most this often. */
const unknownKeyRefetchMs = 60_000;

type Jwks = Array<JsonWebKey & { kid?: string }>;

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The token of `Authorization: Bearer <token>`, or undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (!authorization || !/^bearer /i.test(authorization)) return undefined;
  return authorization.slice(7).trim() || undefined;
}

/** Whether a bearer token has the shape of a JWT (three base64url parts, a JSON header). */
export function looksLikeJwt(token: string): boolean {
  return /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

export function createJwtVerifier(options: JwtVerifierOptions): (token: string) => Promise<JwtClaims> {
  const now = options.now ?? Date.now;
  const skew = options.clockSkewSeconds ?? 60;
  let cache: { keys: Jwks; until: number; fetchedAt: number } | undefined;
  async function load(): Promise<Jwks> {
    try {
      const text = /^https?:\/\//.test(options.jwks)
        ? await (await fetch(options.jwks, { signal: AbortSignal.timeout(5_000) })).text()
        : await readFile(options.jwks, 'utf8');
      const parsed: unknown = JSON.parse(text);
      if (!isObject(parsed) || !Array.isArray(parsed.keys)) throw new Error('no "keys" array');
      return parsed.keys.filter(isObject) as Jwks;
    } catch (error) {
      throw new HttpError(
        503,
        `could not read ${options.issuerName}'s signing keys from ${options.jwks} (${(error as Error).message}); ${options.retryNote}. Check that ${options.jwksSetting} is reachable from Escalator`,
        { 'retry-after': '30' },
      );
    }
  }
  async function keys(refresh = false): Promise<Jwks> {
    if (cache && cache.until > now() && !(refresh && now() - cache.fetchedAt >= unknownKeyRefetchMs)) return cache.keys;
    const fetched = await load();
    cache = { keys: fetched, until: now() + (options.cacheMs ?? 3_600_000), fetchedAt: now() };
    return cache.keys;
  }
  return async (token) => {
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
    if (!isObject(header) || !isObject(body))
      throw new HttpError(401, 'the bearer token is not a JWT (its header and claims must be JSON objects)');
    if (header.alg !== 'RS256')
      throw new HttpError(
        401,
        `token algorithm ${String(header.alg).slice(0, 20)} is not accepted; ${options.issuerName} signs with RS256`,
      );
    if (typeof header.kid !== 'string') throw new HttpError(401, 'the token names no signing key (kid)');
    // Providers rotate keys: a key not in the cache refetches the JWKS, at most once a minute.
    const jwk =
      (await keys()).find((key) => key.kid === header.kid) ?? (await keys(true)).find((key) => key.kid === header.kid);
    if (!jwk) throw new HttpError(401, 'the token was signed with an unknown key');
    let valid: boolean;
    try {
      valid = verify(
        'RSA-SHA256',
        Buffer.from(`${headerText}.${claimsText}`),
        createPublicKey({ key: jwk, format: 'jwk' }),
        Buffer.from(signature, 'base64url'),
      );
    } catch {
      valid = false; // a key that is not an RSA public key verifies nothing
    }
    if (!valid) throw new HttpError(401, 'the token signature is invalid');
    const claims = body;
    if (typeof claims.iss !== 'string' || !options.issuers.includes(claims.iss))
      throw new HttpError(401, `the token was not issued by ${options.issuerName}`);
    const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!audiences.includes(options.audience))
      throw new HttpError(401, `the token audience does not match ${options.audienceSetting}`);
    const seconds = now() / 1000;
    if (typeof claims.exp !== 'number' || !Number.isFinite(claims.exp))
      throw new HttpError(401, 'the token has no expiry (exp)');
    if (claims.exp < seconds) throw new HttpError(401, 'the token has expired; request a new one');
    if (typeof claims.iat !== 'number' || !Number.isFinite(claims.iat))
      throw new HttpError(401, 'the token has no issue time (iat)');
    if (claims.iat - skew > seconds)
      throw new HttpError(
        401,
        'the token was issued in the future (iat); check the clocks of Escalator and the sender',
      );
    if (claims.nbf !== undefined && (typeof claims.nbf !== 'number' || claims.nbf - skew > seconds))
      throw new HttpError(401, 'the token is not valid yet (nbf); check the clocks of Escalator and the sender');
    const lifetime = claims.exp - claims.iat;
    if (lifetime > options.maxLifetimeSeconds + skew) {
      throw new HttpError(
        401,
        `the token lives ${Math.round(lifetime)} s, longer than the ${options.maxLifetimeSeconds} s ${options.issuerName} issues; a token minted to outlive its issuer's limit is not accepted`,
      );
    }
    return claims as JwtClaims;
  };
}
