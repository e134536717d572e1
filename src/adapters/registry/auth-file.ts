import { readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * Registry credentials from a Docker `config.json`, the file every container tool already reads
 * (`docker login`, `skopeo login --authfile`, `crane auth login`, Kubernetes `dockerconfigjson`
 * secrets). Only `auths` is read: `auths.<host>.auth` is base64 `user:password`, or
 * `username`/`password` apart; `identitytoken` is an OAuth2 refresh token for the registry's token
 * server. Credential helpers (`credsStore`, `credHelpers`) run programs and are not followed.
 * Format: https://github.com/containers/image/blob/main/docs/containers-auth.json.5.md
 */

/** The credential Escalator presents to one registry host. Never logged. */
export type RegistryCredential =
  { kind: 'basic'; username: string; password: string } | { kind: 'identity-token'; username: string; token: string };

const AuthEntry = z.object({
  auth: z.string().optional(),
  username: z.string().optional(),
  password: z.string().optional(),
  identitytoken: z.string().optional(),
});
const ConfigFile = z.object({ auths: z.record(z.string(), AuthEntry).default({}) });

/** Docker Hub's historic key (`docker login` writes it) and its other spellings, all meaning `docker.io`. */
const DOCKER_HUB_KEYS = new Set([
  'https://index.docker.io/v1/',
  'index.docker.io',
  'registry-1.docker.io',
  'docker.io',
  'registry.hub.docker.com',
]);

/** The registry host a key of `auths` names: `https://host:port/v1/` → `host:port`; Docker Hub → `docker.io`. */
export function authHost(key: string): string {
  const trimmed = key.trim();
  if (DOCKER_HUB_KEYS.has(trimmed) || DOCKER_HUB_KEYS.has(trimmed.replace(/^https?:\/\//, '').replace(/\/.*$/, '')))
    return 'docker.io';
  return trimmed
    .replace(/^https?:\/\//, '')
    .replace(/\/.*$/, '')
    .toLowerCase();
}

/** Credentials by registry host, or every problem of the file (never a secret in a message). */
export type AuthFileResult =
  { ok: true; credentials: Map<string, RegistryCredential> } | { ok: false; problems: string[] };

/** Parses the text of a Docker `config.json`. `where` names the file in messages. */
export function parseAuthFile(text: string, where: string): AuthFileResult {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return {
      ok: false,
      problems: [
        `${where} is not JSON; write it as docker login does: {"auths": {"host": {"auth": "<base64 user:password>"}}}`,
      ],
    };
  }
  const parsed = ConfigFile.safeParse(json);
  if (!parsed.success)
    return {
      ok: false,
      problems: parsed.error.issues.map(
        (issue) =>
          `${where}: ${issue.path.join('.') || 'the file'} ${issue.message} (expected {"auths": {"host": {"auth": "…"}}})`,
      ),
    };
  const credentials = new Map<string, RegistryCredential>();
  const problems: string[] = [];
  for (const [key, entry] of Object.entries(parsed.data.auths)) {
    const host = authHost(key);
    let username = entry.username ?? '';
    let password = entry.password ?? '';
    if (entry.auth) {
      const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) {
        problems.push(`${where}: auths.${key}.auth is not base64 of "user:password"; run docker login again or fix it`);
        continue;
      }
      username = decoded.slice(0, colon);
      password = decoded.slice(colon + 1);
    }
    if (entry.identitytoken) credentials.set(host, { kind: 'identity-token', username, token: entry.identitytoken });
    else if (username || password) credentials.set(host, { kind: 'basic', username, password });
    // An entry with neither (a credential helper's placeholder) gives nothing: anonymous access.
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, credentials };
}

/** Reads `ESCALATOR_REGISTRY_AUTH_FILE`; unset means no credentials (anonymous pulls only). */
export function loadAuthFile(path: string | undefined): AuthFileResult {
  if (!path) return { ok: true, credentials: new Map() };
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return {
      ok: false,
      problems: [
        `ESCALATOR_REGISTRY_AUTH_FILE: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'}); check the path and the file's permissions`,
      ],
    };
  }
  return parseAuthFile(text, `ESCALATOR_REGISTRY_AUTH_FILE (${path})`);
}
