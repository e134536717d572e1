import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { z } from 'zod';
import type { EventScope } from '../events/image-published.js';
import { registries } from '../events/index.js';
import { HttpError } from './http.js';

/**
 * Scoped intake credentials: who may announce images, and for whom. Each entry binds one token to
 * the GitHub owners (organisation or user logins) whose repositories its events may change, and
 * optionally to image prefixes and sources. Only the token's SHA-256 is configured, so the
 * configuration leaks no credential; `escalator token` makes an entry.
 *
 * Read once at boot from `ESCALATOR_INTAKE_TOKENS` (JSON) or `ESCALATOR_INTAKE_TOKENS_FILE` (YAML
 * or JSON). The legacy global tokens (`ESCALATOR_REGISTRY_TOKEN`, `ESCALATOR_CI_TOKEN`) allow
 * every owner; they are refused beside scoped entries (docs/registries.md says why).
 */

type Registry = (typeof registries)[number];
/** A registry whose sender cannot set a header: its token is in the path, /registry/<source>/<token>. */
export type PathSource = Extract<Registry, { auth: 'path-token' }>['source'];
/** Senders that cannot set a header put the token in the path instead (the registry table's `path-token` registries). */
export const pathTokenSources: readonly PathSource[] = registries
  .filter((registry): registry is Extract<Registry, { auth: 'path-token' }> => registry.auth === 'path-token')
  .map((registry) => registry.source);
/** Routes that take a token in the Authorization header: the CI API and the table's `bearer` registries (`github` is the forwarding route /registry/github). */
export const headerTokenSources: readonly string[] = [
  'ci',
  ...registries.filter((registry) => registry.auth === 'bearer').map((registry) => registry.source),
];
/** Sources a token may be bound to; a registry that authenticates otherwise (`gar`: Google's OIDC token) takes none. */
const tokenSources = [...headerTokenSources, ...pathTokenSources] as [string, ...string[]];

/** Whether `source` is a path-token source. */
export function isPathSource(source: string): source is PathSource {
  return (pathTokenSources as readonly string[]).includes(source);
}

/** A GitHub login: letters, digits and single hyphens, at most 39 characters. */
const LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;
/** A normalized image name or a prefix of one (`ghcr.io/acme/`, `docker.io/library/nginx`). */
const IMAGE_PREFIX = /^[a-z0-9][a-z0-9._:[\]-]*(?:\/[a-z0-9._-]*)*$/;

export const IntakeTokenConfig = z
  .strictObject({
    /** Unique; appears in logs and in the job's scope, never the token. */
    name: z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/,
        'must be 1–63 letters, digits, `.`, `_` or `-`, starting with a letter or digit',
      ),
    /** SHA-256 of the token, 64 lowercase hex characters (`escalator token` prints it). */
    sha256: z
      .string()
      .regex(
        /^[0-9a-f]{64}$/,
        'must be the SHA-256 of the token as 64 lowercase hex characters, never the token itself; `escalator token` prints both',
      ),
    /** GitHub owners (organisation or user logins) whose repositories the token's events may change. */
    owners: z
      .array(z.string().regex(LOGIN, 'must be a GitHub organisation or user login such as "acme"'))
      .min(1, 'list at least one GitHub owner whose repositories the token may change, for example ["acme"]'),
    /** Image name prefixes the token may announce; a prefix ending in `/` covers what is below it, any other names one image. @default every image */
    images: z
      .array(
        z
          .string()
          .regex(
            IMAGE_PREFIX,
            'must be a lowercase image name or prefix with its registry, such as "ghcr.io/acme/" or "docker.io/library/nginx"',
          ),
      )
      .min(1, 'list at least one image prefix, or leave images out')
      .optional(),
    /** Routes the token is accepted on. A token for a path-token registry (Docker Hub, Quay) is a path token: it names that one source and is accepted only in its path. @default every header route ({@link headerTokenSources}) */
    sources: z
      .array(z.enum(tokenSources, { error: `must be one of ${tokenSources.join(', ')}` }))
      .min(1, 'list at least one source, or leave sources out')
      .optional(),
  })
  .superRefine((entry, context) => {
    const paths = entry.sources?.filter(isPathSource) ?? [];
    if (paths.length > 0 && entry.sources!.length > 1) {
      context.addIssue({
        code: 'custom',
        path: ['sources'],
        message: `a ${paths.join(' or ')} token sits in a URL that senders log; give it its own entry with sources: ["${paths[0]}"] and another token for the header routes`,
      });
    }
  });
export type IntakeTokenConfig = z.infer<typeof IntakeTokenConfig>;

const IntakeTokensConfig = z.array(IntakeTokenConfig, {
  error: 'must be a list of token entries [{name, sha256, owners, images?, sources?}]',
});

/** One credential as intake uses it. */
export interface IntakeCredential {
  name: string;
  hash: Buffer;
  owners: string[];
  images?: string[];
  /** Header routes it is accepted on (undefined: every header route), or the one path source. */
  sources?: string[];
  path?: PathSource;
}

/** A request's credentials, once they matched: the scope the events will carry, and the images allowed. */
export interface Authenticated {
  scope: EventScope;
  /** Image prefixes the credential may announce (undefined: every image). */
  images?: string[];
}

export type CredentialsResult = { ok: true; credentials: IntakeCredential[] } | { ok: false; problems: string[] };

/** The SHA-256 of a token as configured: 64 lowercase hex characters. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * Read and validate the scoped tokens. Neither variable set: none. Every problem names the entry
 * and the field, and what to write instead; no problem quotes a hash.
 */
export function loadIntakeCredentials(env: Readonly<Record<string, string | undefined>>): CredentialsResult {
  const inline = env.ESCALATOR_INTAKE_TOKENS?.trim();
  const file = env.ESCALATOR_INTAKE_TOKENS_FILE?.trim();
  if (inline && file)
    return {
      ok: false,
      problems: ['ESCALATOR_INTAKE_TOKENS and ESCALATOR_INTAKE_TOKENS_FILE are both set; keep one of them'],
    };
  if (!inline && !file) return { ok: true, credentials: [] };
  const where = file ?? 'ESCALATOR_INTAKE_TOKENS';
  let text: string;
  if (file) {
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      return {
        ok: false,
        problems: [
          `ESCALATOR_INTAKE_TOKENS_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'}); check the path and the file's permissions`,
        ],
      };
    }
  } else text = inline!;
  let raw: unknown;
  try {
    raw = parse(text, { maxAliasCount: 0, uniqueKeys: true });
  } catch (error) {
    return {
      ok: false,
      problems: [
        `${where}: ${(error as Error).message.split('\n')[0]}; write a list of entries [{name, sha256, owners}] in JSON or YAML (docs/registries.md)`,
      ],
    };
  }
  const parsed = IntakeTokensConfig.safeParse(raw);
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map(
        (issue) =>
          `${where}${issue.path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('')}: ${issue.message}`,
      ),
    };
  }
  const problems: string[] = [];
  const names = new Set<string>();
  const hashes = new Map<string, string>();
  for (const [i, entry] of parsed.data.entries()) {
    if (names.has(entry.name))
      problems.push(`${where}[${i}].name: "${entry.name}" is used by another entry; names must be unique`);
    names.add(entry.name);
    const other = hashes.get(entry.sha256);
    if (other)
      problems.push(
        `${where}[${i}].sha256: the same token as entry "${other}"; every entry needs its own token (run \`escalator token\` for a new one)`,
      );
    hashes.set(entry.sha256, entry.name);
  }
  if (inline || file) {
    for (const legacy of ['ESCALATOR_REGISTRY_TOKEN', 'ESCALATOR_CI_TOKEN']) {
      if (env[legacy])
        problems.push(
          `${legacy}: a global token lets whoever holds it announce images into every installation, which undoes the scoped tokens of ${where}; remove ${legacy} and give its senders entries of their own (docs/registries.md)`,
        );
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    credentials: parsed.data.map((entry) => {
      const path = entry.sources?.find(isPathSource);
      return {
        name: entry.name,
        hash: Buffer.from(entry.sha256, 'hex'),
        owners: entry.owners,
        ...(entry.images ? { images: entry.images } : {}),
        ...(path ? { path } : entry.sources ? { sources: entry.sources } : {}),
      };
    }),
  };
}

/** Whether `repository` (a normalized name with its registry) is one of `prefixes`. */
export function imageAllowed(prefixes: readonly string[], repository: string): boolean {
  return prefixes.some((prefix) => (prefix.endsWith('/') ? repository.startsWith(prefix) : repository === prefix));
}

/** The legacy global tokens: every owner, every image; kept for single-organisation setups. */
export interface LegacyTokens {
  registryToken?: string;
  ciToken?: string;
}

/**
 * Matches a presented token against the scoped credentials and the legacy tokens, in constant
 * time over every entry (the token is hashed once, every hash compared, no early exit).
 */
export class IntakeCredentials {
  constructor(
    readonly entries: readonly IntakeCredential[],
    readonly legacy: LegacyTokens = {},
  ) {}

  /** Whether any credential is accepted on this route (otherwise the route answers 404). */
  enabled(source: string, pathToken: boolean): boolean {
    if (source === 'ci')
      return (
        Boolean(this.legacy.ciToken) ||
        this.entries.some((entry) => !entry.path && (!entry.sources || entry.sources.includes('ci')))
      );
    if (pathToken) return Boolean(this.legacy.registryToken) || this.entries.some((entry) => entry.path === source);
    return (
      Boolean(this.legacy.registryToken) ||
      this.entries.some((entry) => !entry.path && (!entry.sources || entry.sources.includes(source)))
    );
  }

  /**
   * The credential of `token` presented on `source` (in a header, or in the path for Docker Hub
   * and Quay): 401 when nothing matches, 403 when it matches a credential not allowed on this route.
   */
  authenticate(token: string, source: string, inPath: boolean): Authenticated {
    const given = createHash('sha256').update(token, 'utf8').digest();
    let found: IntakeCredential | undefined;
    for (const entry of this.entries) {
      if (timingSafeEqual(given, entry.hash) && !found) found = entry;
    }
    const legacyToken = source === 'ci' ? this.legacy.ciToken : this.legacy.registryToken;
    const legacy =
      legacyToken !== undefined && timingSafeEqual(given, createHash('sha256').update(legacyToken, 'utf8').digest());
    if (found) {
      if (found.path) {
        if (!inPath || found.path !== source) throw this.#unknown(source, inPath);
      } else if (inPath) {
        throw this.#unknown(source, inPath);
      } else if (found.sources && !found.sources.includes(source)) {
        throw new HttpError(
          403,
          `the token "${found.name}" is not allowed on ${source} (it is for ${found.sources.join(', ')}); give this sender a token whose entry lists ${source} in sources`,
        );
      }
      return {
        scope: { by: `token:${found.name}`, owners: found.owners },
        ...(found.images ? { images: found.images } : {}),
      };
    }
    if (legacy)
      return {
        scope: { by: `legacy:${source === 'ci' ? 'ESCALATOR_CI_TOKEN' : 'ESCALATOR_REGISTRY_TOKEN'}`, owners: '*' },
      };
    throw this.#unknown(source, inPath);
  }

  #unknown(source: string, inPath: boolean): HttpError {
    if (inPath) {
      const name = this.legacy.registryToken
        ? 'ESCALATOR_REGISTRY_TOKEN'
        : `the token of an ESCALATOR_INTAKE_TOKENS entry with sources: ["${source}"]`;
      return new HttpError(
        401,
        `the path token does not match; configure the webhook URL as /registry/${source}/<${name}>`,
      );
    }
    return new HttpError(
      401,
      `the Authorization token does not match any token ${source === 'ci' ? 'the CI API' : `/registry/${source}`} accepts; expected ${this.#expected(source)} (never a token value in this answer)`,
      { 'www-authenticate': 'Bearer' },
    );
  }

  /** Which tokens a route sent in a header accepts, by the name they are configured under (never a value, nor an entry's name). */
  #expected(source: string): string {
    const names: string[] = [];
    if (source === 'ci' && this.legacy.ciToken) names.push('ESCALATOR_CI_TOKEN');
    if (source !== 'ci' && this.legacy.registryToken) names.push('ESCALATOR_REGISTRY_TOKEN');
    if (this.entries.some((entry) => !entry.path && (!entry.sources || entry.sources.includes(source))))
      names.push(`the token of an ESCALATOR_INTAKE_TOKENS entry whose sources include ${source} (or list none)`);
    // The CI API is open without either only when it takes GitHub Actions id-tokens.
    if (names.length === 0)
      names.push(source === 'ci' ? 'a GitHub Actions id-token (ESCALATOR_CI_OIDC_AUDIENCE)' : 'none');
    return names.join(', or ');
  }
}
