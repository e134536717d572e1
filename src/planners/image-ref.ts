/**
 * Container image references: the one grammar Escalator has for them. Registry events, the image
 * editor, the subscription index and tag policies all decide "is this the same repository" here.
 *
 * References are parsed and normalized the way distribution/reference (`ParseNormalizedNamed`)
 * does: `nginx` ≡ `docker.io/library/nginx`, and a first path part is a registry only when it
 * contains `.` or `:`, is `localhost`, or has uppercase letters (repository paths are lowercase,
 * so such a part cannot be a path component). Docker Hub has one set of other names
 * ({@link DOCKER_HUB_ALIASES}), folded into `docker.io` wherever a registry host is read.
 *
 * Normalization is only used to *decide* whether two spellings are the same image; files keep
 * their own spelling.
 */

/** A parsed, normalized image reference. */
export interface ImageRef {
  /** Registry host with optional port, `docker.io` for Docker Hub. */
  domain: string;
  /** Repository path inside the registry, `library/nginx` for official Docker Hub images. */
  path: string;
  /** Tag, when the reference carries one (`1.2.3`). */
  tag?: string;
  /** Digest, when the reference carries one (`sha256:…`). */
  digest?: string;
}

/** The outcome of {@link parseImageRef}: the reference, or why the text is not one. */
export type ParseResult = { ok: true; ref: ImageRef } | { ok: false; reason: string };

/** Docker Hub's canonical domain. */
export const DEFAULT_DOMAIN = 'docker.io';
/**
 * The other names of Docker Hub's registry, each the same repositories as `docker.io`:
 * - `index.docker.io`: distribution/reference's `legacyDefaultDomain`, which it folds itself;
 * - `registry-1.docker.io`: the host Docker Engine pulls and pushes `docker.io` images from
 *   (moby `registry.DefaultRegistryHost`), so a registry notification or a CI job that pushed
 *   there names it.
 *
 * `registry.hub.docker.com` is not one: neither distribution/reference nor Docker Engine treats it
 * as Docker Hub, so to them (and to the kubelet) an image spelled with it is another name.
 */
export const DOCKER_HUB_ALIASES: readonly string[] = ['index.docker.io', 'registry-1.docker.io'];
/** Single-component Docker Hub names are official images: `nginx` is `library/nginx`. */
const OFFICIAL_PREFIX = 'library/';
/** distribution/reference `RepositoryNameTotalLengthMax`: applies to the path. */
export const MAX_PATH_LENGTH = 255;

const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*';
const REMOTE_NAME = new RegExp(`^${PATH_COMPONENT}(?:/${PATH_COMPONENT})*$`);
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = new RegExp(`^(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?$`);
/** Docker tag grammar (distribution/reference `tag`). */
export const TAG_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const IDENTIFIER = /^[a-f0-9]{64}$/;
/** OCI image-spec descriptor digest grammar. */
const DIGEST = /^([a-z0-9]+(?:[.+_-][a-z0-9]+)*):([a-zA-Z0-9=_-]+)$/;
/** Registered algorithms with a fixed encoding (OCI image-spec, "Registered algorithms"). */
const REGISTERED_DIGESTS: Record<string, RegExp> = {
  sha256: /^[a-f0-9]{64}$/,
  sha512: /^[a-f0-9]{128}$/,
  blake3: /^[a-f0-9]{64}$/,
};

/** Whether `tag` is a valid Docker tag (`[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`). */
export function isValidTag(tag: string): boolean {
  return TAG_PATTERN.test(tag);
}

/**
 * Whether `path` is a repository path inside a registry (`library/nginx`, `team/app`): lowercase
 * components separated by `/`, at most {@link MAX_PATH_LENGTH} characters.
 */
export function isRepositoryPath(path: string): boolean {
  return path.length <= MAX_PATH_LENGTH && REMOTE_NAME.test(path);
}

/**
 * A registry domain as this grammar compares it: Docker Hub's aliases are `docker.io`. Exact, as
 * distribution/reference is: callers that read a host name from a payload lowercase it first.
 */
export function canonicalDomain(domain: string): string {
  return DOCKER_HUB_ALIASES.includes(domain) ? DEFAULT_DOMAIN : domain;
}

/**
 * A domain and the rest of a name (`nginx`, `team/app:1.2`) as one repository: the domain
 * canonical, and a single-component Docker Hub name under `library/`.
 */
export function canonicalRepository(domain: string, remainder: string): { domain: string; remainder: string } {
  const canonical = canonicalDomain(domain);
  const official = canonical === DEFAULT_DOMAIN && remainder !== '' && !remainder.includes('/');
  return { domain: canonical, remainder: official ? OFFICIAL_PREFIX + remainder : remainder };
}

/**
 * Whether `text` is an OCI digest (`algorithm:encoded`). sha256, sha512 and blake3 must have
 * their exact lowercase-hex length; other algorithms only need the generic grammar.
 */
export function isDigest(text: string): boolean {
  const match = DIGEST.exec(text);
  if (!match) return false;
  const fixed = REGISTERED_DIGESTS[match[1] ?? ''];
  return fixed ? fixed.test(match[2] ?? '') : true;
}

/** Splits `name[:tag][@digest]` into its textual parts, without validating them. */
export function splitReference(text: string): { name: string; tag?: string; digest?: string } {
  const at = text.indexOf('@');
  const nameAndTag = at >= 0 ? text.slice(0, at) : text;
  const digest = at >= 0 ? text.slice(at + 1) : undefined;
  const colon = nameAndTag.lastIndexOf(':');
  const slash = nameAndTag.lastIndexOf('/');
  const hasTag = colon > slash;
  const result: { name: string; tag?: string; digest?: string } = {
    name: hasTag ? nameAndTag.slice(0, colon) : nameAndTag,
  };
  if (hasTag) result.tag = nameAndTag.slice(colon + 1);
  if (digest !== undefined) result.digest = digest;
  return result;
}

/** Splits a familiar or full name into registry domain and remainder, as `splitDockerDomain` does. */
function splitDomain(text: string): { domain: string; remainder: string } {
  const slash = text.indexOf('/');
  if (slash >= 0) {
    const first = text.slice(0, slash);
    if (first === 'localhost' || /[.:]/.test(first) || first.toLowerCase() !== first)
      return canonicalRepository(first, text.slice(slash + 1));
  }
  return canonicalRepository(DEFAULT_DOMAIN, text);
}

/**
 * Parses an image reference (`repo`, `repo:tag`, `repo@digest`, `repo:tag@digest`) into its
 * normalized form, or says why it is not valid.
 */
export function parseImageRef(text: string): ParseResult {
  if (text === '') return { ok: false, reason: 'the image reference is empty' };
  if (IDENTIFIER.test(text)) {
    return { ok: false, reason: `"${text}" is a 64-character hexadecimal image id, not a repository name` };
  }
  const { domain, remainder } = splitDomain(text);
  if (!DOMAIN.test(domain)) return { ok: false, reason: `"${text}" has an invalid registry "${domain}"` };
  const parts = splitReference(remainder);
  // A ':' in the remainder before the last '/' cannot be a tag separator (ports live in the domain).
  if (parts.name.includes(':')) return { ok: false, reason: `"${text}" is not a valid image reference` };
  if (!REMOTE_NAME.test(parts.name)) {
    if (parts.name.toLowerCase() !== parts.name && REMOTE_NAME.test(parts.name.toLowerCase())) {
      return { ok: false, reason: `the repository name in "${text}" must be lowercase` };
    }
    return { ok: false, reason: `"${text}" is not a valid image reference (invalid repository name)` };
  }
  if (parts.name.length > MAX_PATH_LENGTH) {
    return {
      ok: false,
      reason: `the repository name in "${text.slice(0, 40)}…" is longer than ${MAX_PATH_LENGTH} characters`,
    };
  }
  if (parts.tag !== undefined && !isValidTag(parts.tag)) {
    return {
      ok: false,
      reason: `"${parts.tag}" in "${text}" is not a valid tag (allowed: [A-Za-z0-9_][A-Za-z0-9_.-]{0,127})`,
    };
  }
  if (parts.digest !== undefined && !isDigest(parts.digest)) {
    return {
      ok: false,
      reason: `"${parts.digest}" in "${text}" is not a valid digest (expected algorithm:encoded, e.g. sha256:<64 hex>)`,
    };
  }
  const ref: ImageRef = { domain, path: parts.name };
  if (parts.tag !== undefined) ref.tag = parts.tag;
  if (parts.digest !== undefined) ref.digest = parts.digest;
  return { ok: true, ref };
}

/** `docker.io/library/nginx`: the name used to decide whether two spellings are the same image. */
export function normalizedName(ref: ImageRef): string {
  return `${ref.domain}/${ref.path}`;
}

/** `nginx` for `docker.io/library/nginx`, `example/app` for `docker.io/example/app`; others unchanged. */
export function familiarName(ref: ImageRef): string {
  if (ref.domain !== DEFAULT_DOMAIN) return normalizedName(ref);
  if (ref.path.startsWith(OFFICIAL_PREFIX)) {
    const rest = ref.path.slice(OFFICIAL_PREFIX.length);
    if (!rest.includes('/')) return rest;
  }
  return ref.path;
}

/** The normalized name of `text` (tag and digest dropped), or undefined when it is not a reference. */
export function normalizeName(text: string): string | undefined {
  const parsed = parseImageRef(text);
  return parsed.ok ? normalizedName(parsed.ref) : undefined;
}

/** Whether two spellings name the same repository (tags and digests ignored); false when either is invalid. */
export function sameRepository(a: string, b: string): boolean {
  const left = normalizeName(a);
  return left !== undefined && left === normalizeName(b);
}

/** The normalized reference as text: `docker.io/library/nginx:1.2@sha256:…`. */
export function formatImageRef(ref: ImageRef): string {
  return `${normalizedName(ref)}${ref.tag !== undefined ? `:${ref.tag}` : ''}${ref.digest !== undefined ? `@${ref.digest}` : ''}`;
}
