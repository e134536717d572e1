/**
 * What Escalator knows of one image from its registry: the manifest (or index) and the image
 * config, read through the OCI Distribution API by `src/adapters/registry/`. Pure: the adapter
 * fetches, these functions read.
 */

/** OCI image-spec annotation keys (https://github.com/opencontainers/image-spec/blob/main/annotations.md). */
export const OCI_SOURCE = 'org.opencontainers.image.source';
export const OCI_REVISION = 'org.opencontainers.image.revision';
export const OCI_VERSION = 'org.opencontainers.image.version';
export const OCI_CREATED = 'org.opencontainers.image.created';

export interface ImageFacts {
  /** The image's repository as announced (`registry.example.com/team/app`). */
  repository: string;
  tag: string;
  /** The digest the tag resolves to: of the index for a multi-arch image. */
  digest: string;
  mediaType: string;
  /** RFC 3339, from the `created` annotation or the config's `created`. */
  created?: string;
  /** `os/architecture[/variant]` of each image of an index; one entry for a single image. */
  platforms: string[];
  /** Bytes of the config and layers of one image (for an index: of `sizePlatform`'s). */
  size?: number;
  sizePlatform?: string;
  /** `org.opencontainers.image.source`, `.revision`, `.version` (annotations win over labels). */
  source?: string;
  revision?: string;
  version?: string;
}

/** The source facts of an image out of its manifest annotations and config labels; annotations win. */
export function sourceFacts(
  annotations: Record<string, string> | undefined,
  labels: Record<string, string> | undefined,
): Pick<ImageFacts, 'source' | 'revision' | 'version' | 'created'> {
  const read = (key: string): string | undefined => {
    const value = annotations?.[key] ?? labels?.[key];
    return typeof value === 'string' && value.trim() !== '' && value.length <= 2048 ? value.trim() : undefined;
  };
  const facts: Pick<ImageFacts, 'source' | 'revision' | 'version' | 'created'> = {};
  const source = read(OCI_SOURCE);
  const revision = read(OCI_REVISION);
  const version = read(OCI_VERSION);
  const created = read(OCI_CREATED);
  if (source) facts.source = source;
  if (revision) facts.revision = revision;
  if (version) facts.version = version;
  if (created && isTimestamp(created)) facts.created = created;
  return facts;
}

/** RFC 3339 date-time, as the OCI spec asks for `created`. */
export function isTimestamp(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/.test(text);
}

/** A GitHub repository named by a source URL, or undefined when the URL is not a GitHub repository. */
export interface SourceRepository {
  host: string;
  owner: string;
  repo: string;
}

/**
 * The repository an `org.opencontainers.image.source` value names: `https://github.com/o/r`,
 * `https://github.com/o/r.git`, `git+https://…`, `git@github.com:o/r.git`, with or without a
 * trailing path (`/tree/main/app`). `githubHost` is the server's web host (github.com, or the
 * GitHub Enterprise host); anything else is not reachable through the App.
 */
export function parseSourceRepository(source: string, githubHost = 'github.com'): SourceRepository | undefined {
  const host = githubHost.toLowerCase();
  const text = source.trim();
  const ssh = /^(?:ssh:\/\/)?git@([^:/]+)[:/]([^/]+)\/([^/]+?)(?:\.git)?\/?$/.exec(text);
  const web = /^(?:git\+)?https?:\/\/([^/]+)\/([^/]+)\/([^/#?]+?)(?:\.git)?(?:[/#?].*)?$/.exec(text);
  const match = ssh ?? web;
  if (!match) return undefined;
  const [, matchedHost = '', owner = '', repo = ''] = match;
  if (matchedHost.toLowerCase() !== host && matchedHost.toLowerCase() !== `www.${host}`) return undefined;
  if (!/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/.test(owner) || !/^[A-Za-z0-9._-]{1,100}$/.test(repo)) return undefined;
  if (repo === '.' || repo === '..') return undefined;
  return { host, owner, repo };
}
