import { HttpError } from './http.js';
import type { Authenticated } from './credentials.js';
import { createJwtVerifier } from './jwt.js';

/**
 * GitHub Actions OIDC for the CI API ("trusted publishing"): a workflow with
 * `permissions: id-token: write` asks GitHub for a token with Escalator's audience and sends it as
 * its bearer token; no long-lived secret is kept in CI. The token is checked like every JWT
 * (src/intake/jwt.ts: RS256 against GitHub's JWKS, `iss`, `aud`, `exp`, `iat`, `nbf`, lifetime),
 * then its `repository_owner` decides which installations the event may touch: only that owner's
 * repositories. An optional allow-list narrows which owners or repositories may announce at all.
 * Claims: https://docs.github.com/en/actions/reference/security/oidc
 */
export interface GitHubOidcOptions {
  /** The audience workflows request (`core.getIDToken(audience)`); required to enable OIDC. */
  audience: string;
  /** @default https://token.actions.githubusercontent.com (GHES: https://HOST/_services/token) */
  issuer: string;
  /** https URL of the JWKS, or a local file path. */
  jwks: string;
  /** Longest `exp - iat` accepted, in seconds. */
  maxLifetimeSeconds: number;
  /** Owners (logins) whose workflows may announce; unset with `repositories` unset: every owner, each for itself. */
  owners?: readonly string[];
  /** Repositories (`owner/name`) whose workflows may announce, beside `owners`. */
  repositories?: readonly string[];
  now?: () => number;
}

/** The options from the environment, or undefined while `ESCALATOR_CI_OIDC_AUDIENCE` is unset. */
export function githubOidcFromEnv(env: {
  ESCALATOR_CI_OIDC_AUDIENCE?: string | undefined;
  ESCALATOR_CI_OIDC_ISSUER: string;
  ESCALATOR_CI_OIDC_JWKS_URL: string;
  ESCALATOR_CI_OIDC_MAX_LIFETIME_SECONDS: number;
  ESCALATOR_CI_OIDC_OWNERS?: string | undefined;
  ESCALATOR_CI_OIDC_REPOSITORIES?: string | undefined;
}): GitHubOidcOptions | undefined {
  if (!env.ESCALATOR_CI_OIDC_AUDIENCE) return undefined;
  const list = (text: string | undefined) =>
    text
      ?.split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  const owners = list(env.ESCALATOR_CI_OIDC_OWNERS);
  const repositories = list(env.ESCALATOR_CI_OIDC_REPOSITORIES);
  return {
    audience: env.ESCALATOR_CI_OIDC_AUDIENCE,
    issuer: env.ESCALATOR_CI_OIDC_ISSUER,
    jwks: env.ESCALATOR_CI_OIDC_JWKS_URL,
    maxLifetimeSeconds: env.ESCALATOR_CI_OIDC_MAX_LIFETIME_SECONDS,
    ...(owners?.length ? { owners } : {}),
    ...(repositories?.length ? { repositories } : {}),
  };
}

export function createGitHubOidcVerifier(options: GitHubOidcOptions): (token: string) => Promise<Authenticated> {
  const verify = createJwtVerifier({
    issuers: [options.issuer],
    audience: options.audience,
    jwks: options.jwks,
    maxLifetimeSeconds: options.maxLifetimeSeconds,
    issuerName: 'GitHub Actions',
    audienceSetting: 'ESCALATOR_CI_OIDC_AUDIENCE (request the token with that audience: core.getIDToken(audience))',
    jwksSetting: 'ESCALATOR_CI_OIDC_JWKS_URL',
    retryNote: 'retry the request',
    ...(options.now ? { now: options.now } : {}),
  });
  const owners = options.owners?.map((owner) => owner.toLowerCase());
  const repositories = options.repositories?.map((repository) => repository.toLowerCase());
  return async (token) => {
    const claims = await verify(token);
    const owner = claims.repository_owner;
    const repository = claims.repository;
    if (
      typeof owner !== 'string' ||
      typeof repository !== 'string' ||
      !owner ||
      !repository.toLowerCase().startsWith(`${owner.toLowerCase()}/`)
    ) {
      throw new HttpError(
        401,
        'the token names no repository_owner and repository of its workflow; send the id-token of a GitHub Actions job',
      );
    }
    if (owners || repositories) {
      const allowed =
        (owners?.includes(owner.toLowerCase()) ?? false) || (repositories?.includes(repository.toLowerCase()) ?? false);
      if (!allowed) {
        throw new HttpError(
          403,
          `workflows of ${repository.slice(0, 140)} may not announce images here: ${owner.slice(0, 39)} is not in ESCALATOR_CI_OIDC_OWNERS and the repository is not in ESCALATOR_CI_OIDC_REPOSITORIES; an operator adds it there`,
        );
      }
    }
    return { scope: { by: `oidc:${repository.slice(0, 140)}`, owners: [owner] } };
  };
}
