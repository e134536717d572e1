import { readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * Registry credentials from a Docker `config.json`, the file every container tool already reads
 * (`docker login`, `skopeo login --authfile`, `crane auth login`, Kubernetes `dockerconfigjson`
 * secrets). Only `auths` is read: `auths.<host>.auth` is base64 `user:password`, or
 * `username`/`password` apart; `identitytoken` is an OAuth2 refresh token for the registry's token
 * server. Credential helpers (`credsStore`, `credHelpers`) run programs and are not followed.
 * Each entry also names the GitHub owners it serves (`owners`, Escalator's own field): an image is
 * read for an installation only with an entry of its owner, else anonymously.
 * Format: https://github.com/containers/image/blob/main/docs/containers-auth.json.5.md
 */

/** The credential Escalator presents to one registry host. Never logged. */
export type RegistryCredential =
  { kind: 'basic'; username: string; password: string } | { kind: 'identity-token'; username: string; token: string };

/**
 * One entry of `auths`: where it applies (`host`, or `host/namespace` as containers-auth.json
 * allows: the most specific key matching an image wins), whose installations it serves, and the
 * credential. `owners` is Escalator's own field: Docker, skopeo and crane ignore fields they do
 * not know, so the same file still works for them.
 */
export interface RegistryAuthEntry {
  /** `host` or `host/namespace…`, lowercase host, no scheme, no trailing slash. */
  key: string;
  /** GitHub owners (organisation or user logins) whose installations read images with it; `*` is every installation, written on purpose. */
  owners: readonly string[] | '*';
  credential: RegistryCredential;
}

const AuthEntry = z.object({
  auth: z.string().optional(),
  username: z.string().optional(),
  password: z.string().optional(),
  identitytoken: z.string().optional(),
  owners: z.array(z.string()).optional(),
});
const ConfigFile = z.object({ auths: z.record(z.string(), AuthEntry).default({}) });

/** A GitHub login: what an owner of `owners` must look like. */
const GITHUB_LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;

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

/**
 * The key an entry applies to: its host, and the namespace after it when the key names one
 * (`ghcr.io/example` → `ghcr.io/example`); the Docker Hub URL key (`https://index.docker.io/v1/`)
 * and a URL's path are the host alone, as Docker reads them.
 */
export function authKey(key: string): string {
  const trimmed = key.trim();
  const host = authHost(trimmed);
  if (/^https?:\/\//.test(trimmed)) return host;
  const slash = trimmed.indexOf('/');
  const path = slash < 0 ? '' : trimmed.slice(slash + 1).replace(/\/+$/, '');
  return path ? `${host}/${path}` : host;
}

/** Credentials of the file, every entry with its owners, or every problem of the file (never a secret in a message). */
export type AuthFileResult = { ok: true; entries: RegistryAuthEntry[] } | { ok: false; problems: string[] };

/** Parses the text of a Docker `config.json`. `where` names the file in messages. */
export function parseAuthFile(text: string, where: string): AuthFileResult {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return {
      ok: false,
      problems: [
        `${where} is not JSON; write it as docker login does, with the owners each entry serves: {"auths": {"host": {"auth": "<base64 user:password>", "owners": ["<GitHub owner>"]}}}`,
      ],
    };
  }
  const parsed = ConfigFile.safeParse(json);
  if (!parsed.success)
    return {
      ok: false,
      problems: parsed.error.issues.map(
        (issue) =>
          `${where}: ${issue.path.join('.') || 'the file'} ${issue.message} (expected {"auths": {"host": {"auth": "…", "owners": ["<GitHub owner>"]}}})`,
      ),
    };
  const entries: RegistryAuthEntry[] = [];
  const problems: string[] = [];
  for (const [key, entry] of Object.entries(parsed.data.auths)) {
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
    const credential: RegistryCredential | undefined = entry.identitytoken
      ? { kind: 'identity-token', username, token: entry.identitytoken }
      : username || password
        ? { kind: 'basic', username, password }
        : undefined;
    // An entry with neither (a credential helper's placeholder) gives nothing: anonymous access.
    if (!credential) continue;
    const owners = readOwners(entry.owners, key, where);
    if (typeof owners === 'string') {
      problems.push(owners);
      continue;
    }
    entries.push({ key: authKey(key), owners: owners.owners, credential });
  }
  const seen = new Set<string>();
  for (const entry of entries) {
    if (seen.has(entry.key))
      problems.push(
        `${where}: two entries of auths name ${entry.key}; keep one per host or namespace (give the others a namespace key such as ${entry.key}/<owner>)`,
      );
    seen.add(entry.key);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, entries };
}

/**
 * An entry's `owners`: GitHub logins, or `["*"]` alone. A credential serving whoever asks is what
 * let one installation read another's private images, so an entry without owners is refused
 * with the line to add (the upgrade of a file written before owners existed).
 */
function readOwners(
  owners: string[] | undefined,
  key: string,
  where: string,
): { owners: readonly string[] | '*' } | string {
  const example = `"${key}": {"auth": "…", "owners": ["<GitHub owner>"]}`;
  if (owners === undefined || owners.length === 0)
    return `${where}: auths.${key} names no owners, so Escalator does not know whose images its credential may read; add "owners": ["<GitHub owner>"] to it (${example}), the organisations or users whose installations may read with it, or "owners": ["*"] to let every installation read with it, on purpose (docs/registries.md, "Giving Escalator registry credentials")`;
  if (owners.includes('*'))
    return owners.length === 1
      ? { owners: '*' }
      : `${where}: auths.${key}.owners lists "*" beside owners; write ["*"] alone (every installation) or the owners alone`;
  const bad = owners.filter((owner) => !GITHUB_LOGIN.test(owner));
  if (bad.length > 0)
    return `${where}: auths.${key}.owners has ${bad.map((owner) => JSON.stringify(owner.slice(0, 60))).join(', ')}, which ${bad.length === 1 ? 'is not a GitHub login' : 'are not GitHub logins'}; write organisation or user logins such as "example"`;
  return { owners: [...new Set(owners.map((owner) => owner.toLowerCase()))] };
}

/** Whether the entry serves the installation of `owner` (a GitHub login, compared without case). */
export function servesOwner(entry: RegistryAuthEntry, owner: string): boolean {
  return entry.owners === '*' || entry.owners.includes(owner.toLowerCase());
}

/** Reads `ESCALATOR_REGISTRY_AUTH_FILE`; unset means no credentials (anonymous pulls only). */
export function loadAuthFile(path: string | undefined): AuthFileResult {
  if (!path) return { ok: true, entries: [] };
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
