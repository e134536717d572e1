import { readFile } from 'node:fs/promises';
import {
  createLocalJWKSet,
  errors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
} from 'jose';
import { HttpError } from './http.js';

/**
 * One verifier for the RS256 JWTs identity providers sign (Google's Pub/Sub push tokens, GitHub
 * Actions' `id-token`), checked against the provider's JWKS. The cryptography and the standard
 * claims are `jose`'s (`jwtVerify` over a `createLocalJWKSet`); what stays ours is what jose does
 * not do the way the intakes need:
 * 1. split and decode the token (three base64url parts, JSON objects), for a message that says so
 * 2. `alg` RS256 and a `kid` (jose would take the only key of a set for a token that names none)
 * 3. the JWKS, read from an https URL or a file and cached on our clock: an unknown `kid` refetches
 *    it, at most once a minute (jose's remote set reads the wall clock and no file)
 * 4. jose: the key of that `kid`, the signature before any claim is believed, `iss`, `aud`, `nbf`
 * 5. the times jose reads otherwise: `exp` passed (without skew), `iat` present and not in the
 *    future (within a small clock skew), and no longer a lifetime (`exp - iat`) than the provider
 *    issues (jose's `maxTokenAge` bounds a token's age, not its lifetime)
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
  let cache: { keys: JWTVerifyGetKey; until: number; fetchedAt: number } | undefined;
  async function load(): Promise<JWTVerifyGetKey> {
    try {
      const text = /^https?:\/\//.test(options.jwks)
        ? await (await fetch(options.jwks, { signal: AbortSignal.timeout(5_000) })).text()
        : await readFile(options.jwks, 'utf8');
      const parsed: unknown = JSON.parse(text);
      if (!isObject(parsed) || !Array.isArray(parsed.keys)) throw new Error('no "keys" array');
      return createLocalJWKSet({ keys: parsed.keys.filter(isObject) });
    } catch (error) {
      throw new HttpError(
        503,
        `could not read ${options.issuerName}'s signing keys from ${options.jwks} (${(error as Error).message}); ${options.retryNote}. Check that ${options.jwksSetting} is reachable from Escalator`,
        { 'retry-after': '30' },
      );
    }
  }
  async function keys(refresh = false): Promise<JWTVerifyGetKey> {
    if (cache && cache.until > now() && !(refresh && now() - cache.fetchedAt >= unknownKeyRefetchMs)) return cache.keys;
    const fetched = await load();
    cache = { keys: fetched, until: now() + (options.cacheMs ?? 3_600_000), fetchedAt: now() };
    return cache.keys;
  }
  // Providers rotate keys: a key not in the cached set refetches the JWKS, at most once a minute.
  const keyOf: JWTVerifyGetKey = async (header, token) => {
    try {
      return await (
        await keys()
      )(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
    }
    return (await keys(true))(header, token);
  };

  /** The refusal of jose's error, said as the intakes say it: which check failed, and what to do. */
  function refusal(error: unknown): HttpError {
    if (error instanceof HttpError) return error; // the JWKS out of reach (503)
    if (error instanceof errors.JWKSNoMatchingKey)
      return new HttpError(401, 'the token was signed with an unknown key');
    if (error instanceof errors.JWTClaimValidationFailed || error instanceof errors.JWTExpired) {
      switch (error.claim) {
        case 'iss':
          return new HttpError(401, `the token was not issued by ${options.issuerName}`);
        case 'aud':
          return new HttpError(401, `the token audience does not match ${options.audienceSetting}`);
        case 'nbf':
          return new HttpError(401, notYetValid);
        case 'exp':
          return new HttpError(401, error.reason === 'invalid' ? noExpiry : expired);
        case 'iat':
          return new HttpError(401, noIssueTime);
      }
    }
    if (error instanceof errors.JWTInvalid) return new HttpError(401, notObjects);
    // A bad signature, a key of the set that is not an RSA public key, a header jose refuses
    // (`crit`, `b64`): nothing the token says is believed.
    return new HttpError(401, 'the token signature is invalid');
  }

  /** jose's verdict: the claims of a token whose signature and standard claims hold. */
  async function verified(token: string, checks: JWTVerifyOptions): Promise<JWTPayload> {
    try {
      return (await jwtVerify(token, keyOf, checks)).payload;
    } catch (error) {
      if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw refusal(error);
      // Two keys of the set share the `kid`: the token holds when one of them verifies it (jose's documented way).
      for await (const key of error) {
        try {
          return (await jwtVerify(token, key, checks)).payload;
        } catch (inner) {
          if (!(inner instanceof errors.JWSSignatureVerificationFailed)) throw refusal(inner);
        }
      }
      throw refusal(new errors.JWSSignatureVerificationFailed());
    }
  }

  return async (token) => {
    const parts = token.split('.');
    if (parts.length !== 3) throw new HttpError(401, 'the bearer token is not a JWT');
    const [headerText, claimsText] = parts as [string, string, string];
    let header: unknown;
    let body: unknown;
    try {
      header = JSON.parse(Buffer.from(headerText, 'base64url').toString('utf8'));
      body = JSON.parse(Buffer.from(claimsText, 'base64url').toString('utf8'));
    } catch {
      throw new HttpError(401, 'the bearer token is not a JWT');
    }
    if (!isObject(header) || !isObject(body)) throw new HttpError(401, notObjects);
    if (header.alg !== 'RS256')
      throw new HttpError(
        401,
        `token algorithm ${String(header.alg).slice(0, 20)} is not accepted; ${options.issuerName} signs with RS256`,
      );
    if (typeof header.kid !== 'string') throw new HttpError(401, 'the token names no signing key (kid)');
    const claims = await verified(token, {
      algorithms: ['RS256'],
      issuer: [...options.issuers],
      audience: options.audience,
      currentDate: new Date(now()),
      clockTolerance: skew,
    });
    // jose has checked `exp` with the skew, and `iat` only when present.
    const seconds = now() / 1000;
    if (typeof claims.exp !== 'number' || !Number.isFinite(claims.exp)) throw new HttpError(401, noExpiry);
    if (claims.exp < seconds) throw new HttpError(401, expired);
    if (typeof claims.iat !== 'number' || !Number.isFinite(claims.iat)) throw new HttpError(401, noIssueTime);
    if (claims.iat - skew > seconds)
      throw new HttpError(
        401,
        'the token was issued in the future (iat); check the clocks of Escalator and the sender',
      );
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

const notObjects = 'the bearer token is not a JWT (its header and claims must be JSON objects)';
const expired = 'the token has expired; request a new one';
const noExpiry = 'the token has no expiry (exp)';
const noIssueTime = 'the token has no issue time (iat)';
const notYetValid = 'the token is not valid yet (nbf); check the clocks of Escalator and the sender';
