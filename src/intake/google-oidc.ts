import { HttpError } from './http.js';
import { bearerToken, createJwtVerifier } from './jwt.js';

/**
 * Verifies the OIDC token Pub/Sub push subscriptions send (`Authorization: Bearer <JWT>`):
 * RS256 signature against Google's JWKS, `iss`, `aud`, `exp`, `iat`, `nbf`, a lifetime of at most
 * the hour Google's ID tokens live, and the service account `email` with `email_verified: true`
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

const issuers = ['https://accounts.google.com', 'accounts.google.com'];

/** Google's ID tokens live one hour. */
const googleTokenLifetimeSeconds = 3_600;

export function createGoogleTokenVerifier(
  options: GoogleOidcOptions,
): (authorization: string | undefined) => Promise<void> {
  const verify = createJwtVerifier({
    issuers,
    audience: options.audience,
    jwks: options.jwks,
    maxLifetimeSeconds: googleTokenLifetimeSeconds,
    issuerName: 'Google',
    audienceSetting: 'ESCALATOR_GAR_AUDIENCE',
    jwksSetting: 'ESCALATOR_GAR_JWKS_URL',
    retryNote: 'the push is retried',
    ...(options.now ? { now: options.now } : {}),
    ...(options.cacheMs !== undefined ? { cacheMs: options.cacheMs } : {}),
  });
  return async (authorization) => {
    const token = bearerToken(authorization);
    if (!token)
      throw new HttpError(
        401,
        'missing Authorization: Bearer <OIDC token>; enable authentication on the Pub/Sub push subscription',
      );
    const claims = await verify(token);
    if (claims.email !== options.serviceAccount)
      throw new HttpError(401, 'the token was issued to another service account than ESCALATOR_GAR_SERVICE_ACCOUNT');
    // Google sets email_verified on tokens for service accounts; a token without it proves no address.
    if (claims.email_verified !== true)
      throw new HttpError(
        401,
        'the token does not say its e-mail is verified (email_verified must be true); Pub/Sub sets it for service accounts',
      );
  };
}
