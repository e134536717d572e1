import { verify } from 'node:crypto';
import type { Principal, SandboxApp } from './model.js';
import type { SandboxState } from './state.js';

/** Why a credential was refused; `message` is the text GitHub answers with. */
export interface AuthFailure {
  message: string;
}

// GitHub's exact wording: @octokit/auth-app matches these to correct clock skew and retry.
export const JWT_EXPIRED =
  "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires";
export const JWT_TOO_LONG = "'Expiration time' claim ('exp') is too far in the future";
export const JWT_IAT_FUTURE =
  "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued";
export const JWT_UNDECODABLE = 'A JSON web token could not be decoded';
export const BAD_CREDENTIALS = 'Bad credentials';

/** Leeway GitHub allows for clocks that drift, in seconds. */
const SKEW_SECONDS = 60;

/**
 * Checks an App JWT the way GitHub does: RS256 over the App's public key, `iss` naming the App
 * (its id or client id), `iat` not in the future, `exp` in the future and at most 10 minutes after `iat`.
 */
export function verifyAppJwt(token: string, app: SandboxApp, now: Date): AuthFailure | null {
  const parts = token.split('.');
  if (parts.length !== 3) return { message: JWT_UNDECODABLE };
  const [header, payload, signature] = parts as [string, string, string];
  const claims = decodeJson(payload);
  const head = decodeJson(header);
  if (!claims || !head || head.alg !== 'RS256') return { message: JWT_UNDECODABLE };
  const signed = verify(
    'RSA-SHA256',
    Buffer.from(`${header}.${payload}`),
    app.publicKey,
    Buffer.from(signature, 'base64url'),
  );
  if (!signed) return { message: JWT_UNDECODABLE };
  if (String(claims.iss) !== String(app.id) && claims.iss !== app.clientId) return { message: JWT_UNDECODABLE };
  const seconds = Math.floor(now.getTime() / 1000);
  const { iat, exp } = claims;
  if (typeof iat !== 'number' || !Number.isInteger(iat) || iat > seconds + SKEW_SECONDS)
    return { message: JWT_IAT_FUTURE };
  if (typeof exp !== 'number' || exp <= seconds - SKEW_SECONDS) return { message: JWT_EXPIRED };
  if (exp - iat > 600 || exp > seconds + 600 + SKEW_SECONDS) return { message: JWT_TOO_LONG };
  return null;
}

/**
 * Turns an `Authorization` header into who is calling: `Bearer <jwt>` is the App,
 * `token|Bearer ghs_…` an installation, `token|Bearer ghp_…` a user.
 */
export function authenticate(header: string | undefined, state: SandboxState): Principal | AuthFailure | null {
  if (!header) return null;
  const match = /^(?:token|bearer)\s+(\S+)$/i.exec(header.trim());
  if (!match?.[1]) return { message: BAD_CREDENTIALS };
  const credential = match[1];
  const now = state.clock();
  if (credential.startsWith('ghs_')) {
    const token = state.installationTokens.get(credential);
    const installation = token && state.installations.get(token.installationId);
    if (!token || !installation || token.expiresAt <= now) return { message: BAD_CREDENTIALS };
    return { kind: 'installation', installation, token: credential };
  }
  const user = state.userTokens.get(credential);
  if (user) return { kind: 'user', user };
  if (credential.split('.').length === 3 && state.app) {
    const failure = verifyAppJwt(credential, state.app, now);
    return failure ?? { kind: 'app' };
  }
  return { message: BAD_CREDENTIALS };
}

export function isFailure(value: Principal | AuthFailure | null): value is AuthFailure {
  return value !== null && 'message' in value;
}

function decodeJson(part: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
