import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Logger } from '../../observability/logger.js';
import { sourceFacts, type ImageFacts } from '../../planners/image-facts.js';
import { servesOwner, type RegistryAuthEntry, type RegistryCredential } from './auth-file.js';

/**
 * A client of the OCI Distribution API (https://github.com/opencontainers/distribution-spec/blob/main/spec.md),
 * read-only: `HEAD`/`GET /v2/<name>/manifests/<ref>` and `GET /v2/<name>/blobs/<digest>`.
 *
 * Authentication follows the registry's challenge: `WWW-Authenticate: Basic` gets the host's
 * credential; `WWW-Authenticate: Bearer realm=…,service=…,scope=…` gets a token from the realm
 * (Docker's token protocol, https://distribution.github.io/distribution/spec/auth/token/: a GET
 * with basic auth, or a POST with the identity token as OAuth2 refresh token), kept until it
 * expires. Every call is bounded: a time limit, a byte limit on the body, a token bucket per
 * registry host, and a few retries on 429/5xx that honour `Retry-After`. Credentials and tokens
 * are never logged nor put in an error message.
 */

export const MEDIA_TYPES = {
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
} as const;

/** What a manifest request accepts: both index kinds and both image manifest kinds. */
export const MANIFEST_ACCEPT = [
  MEDIA_TYPES.ociIndex,
  MEDIA_TYPES.dockerList,
  MEDIA_TYPES.ociManifest,
  MEDIA_TYPES.dockerManifest,
].join(', ');

export interface RegistryClientOptions {
  /**
   * Credentials by registry host (`docker.io`, `ghcr.io`, `registry.example.com:5000`) or by host
   * and namespace (`ghcr.io/example`): the most specific key matching an image is used, as
   * containers-auth.json(5) looks them up. Only the credentials of one owner: see {@link RegistryAccess}.
   */
  credentials?: ReadonlyMap<string, RegistryCredential>;
  /**
   * Hosts the operator named in the credentials file, whoever they serve: they may be internal
   * addresses and, on loopback, plain HTTP. @default the hosts of `credentials`
   */
  knownHosts?: ReadonlySet<string>;
  log?: Logger;
  /** Per request, including the token request. @default 10000 */
  timeoutMs?: number;
  /** Largest body read from a manifest, a config blob or a token answer. @default 4 MiB */
  maxBytes?: number;
  /** Requests per second to one registry host (token bucket), and the burst. @default 10 and 20 */
  ratePerSecond?: number;
  burst?: number;
  /** Retries on 429 and 5xx (and network errors), each after `Retry-After` or a backoff. @default 3 */
  retries?: number;
  /** Longest wait Escalator accepts from a `Retry-After`; longer ones fail the read. @default 30000 */
  maxRetryWaitMs?: number;
  /**
   * Hosts spoken to over plain HTTP. By default: loopback hosts (as Docker treats 127.0.0.0/8)
   * that the credentials name. Image names come from repository files, so without that consent a
   * repository could make workers call services listening on their own loopback; other loopback
   * hosts are refused with a reason.
   */
  plainHttp?: (host: string) => boolean;
  /** Called once per HTTP request to a registry (metrics, the call budget of benches). */
  onRequest?: (info: {
    host: string;
    method: string;
    kind: 'manifest' | 'blob' | 'token' | 'ping';
    status: number;
  }) => void;
  /** The token buckets per host, shared by the clients of every owner (RegistryAccess), so the rate is per host. */
  buckets?: RegistryBuckets;
  /**
   * Registry hosts read from another registry (`ghcr.io` → `http://127.0.0.1:5000`), as a
   * containerd mirror is (https://github.com/containerd/containerd/blob/main/docs/hosts.md): the
   * OCI Distribution paths stay, and `ns=<host>` names the registry the image is from, as
   * containerd and buildkit send it to a mirror. When set, a host it does not map is never
   * contacted: reading its images fails with a reason (ESCALATOR_REGISTRY_MIRRORS, `npm run sandbox`).
   */
  mirrors?: ReadonlyMap<string, URL>;
  /** Injected for tests of the limiter; real time otherwise. */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/** Why a registry read failed, in words for the operator. `kind` says what to do about it. */
export class RegistryError extends Error {
  override name = 'RegistryError';
  constructor(
    message: string,
    readonly kind: 'not-found' | 'unauthorized' | 'unavailable' | 'invalid' | 'too-large',
  ) {
    super(message);
  }
}

/** A manifest as the registry serves it: its digest, media type and parsed body. */
export interface ManifestAnswer {
  digest: string;
  mediaType: string;
  body: Manifest;
  bytes: number;
}

const Descriptor = z.object({
  mediaType: z.string().optional(),
  artifactType: z.string().optional(),
  digest: z.string().regex(/^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$/),
  size: z.number().int().nonnegative(),
  annotations: z.record(z.string(), z.string()).optional(),
  platform: z.object({ os: z.string(), architecture: z.string(), variant: z.string().optional() }).optional(),
});
const Manifest = z.object({
  schemaVersion: z.literal(2),
  mediaType: z.string().optional(),
  artifactType: z.string().optional(),
  config: Descriptor.optional(),
  layers: z.array(Descriptor).optional(),
  manifests: z.array(Descriptor).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});
type Manifest = z.infer<typeof Manifest>;
const ImageConfig = z.object({
  created: z.string().optional(),
  os: z.string().optional(),
  architecture: z.string().optional(),
  variant: z.string().optional(),
  config: z.object({ Labels: z.record(z.string(), z.string()).nullish() }).nullish(),
});

interface Bucket {
  tokens: number;
  at: number;
}

/** Token buckets by registry host. */
export type RegistryBuckets = Map<string, Bucket>;

/** `docker.io` is served by `registry-1.docker.io`; every other host serves itself. */
function apiHost(host: string): string {
  return host === 'docker.io' ? 'registry-1.docker.io' : host;
}

function isLoopback(host: string): boolean {
  const name = host.replace(/:\d+$/, '');
  return name === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(name) || name === '[::1]';
}

/**
 * Whether `host` (`name[:port]`, as a URL would read it: `127.1` is 127.0.0.1) is an address of
 * this machine or its private network: loopback, unspecified, RFC 1918, carrier-grade NAT,
 * link-local (cloud metadata services live there), IPv6 unique-local and link-local, and IPv4
 * mapped into IPv6. Image names come from repository files, so without this a repository could
 * make workers probe internal services and publish the answers in a pull request. Names are not
 * resolved: a public name pointing inside is not caught here (docs/security.md says so).
 */
export function isInternalHost(host: string): boolean {
  let name: string;
  try {
    name = new URL(`https://${host}`).hostname.toLowerCase();
  } catch {
    return true;
  }
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(name);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168)
    );
  }
  if (name.startsWith('[')) {
    const v6 = name.slice(1, -1);
    if (v6 === '::1' || v6 === '::') return true;
    if (/^f[cd]/.test(v6) || /^fe[89ab]/.test(v6)) return true;
    const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(v6);
    if (mapped) {
      const high = Number.parseInt(mapped[1]!, 16);
      const low = Number.parseInt(mapped[2]!, 16);
      return isInternalHost(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`);
    }
    return /^::ffff:/.test(v6);
  }
  return false;
}

/** `Bearer realm="…",service="…"` → its parameters (quoted strings may hold commas). */
export function parseChallenge(header: string): { scheme: string; params: Record<string, string> } | undefined {
  const match = /^\s*([A-Za-z]+)\s*(.*)$/s.exec(header);
  if (!match) return undefined;
  const params: Record<string, string> = {};
  const re = /([A-Za-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?\s*/g;
  for (const part of (match[2] ?? '').matchAll(re))
    params[(part[1] ?? '').toLowerCase()] = (part[2] ?? part[3] ?? '').replace(/\\(.)/g, '$1');
  return { scheme: (match[1] ?? '').toLowerCase(), params };
}

/** Seconds or an HTTP date, as RFC 9110 allows; undefined when absent or unreadable. */
function retryAfterMs(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export class RegistryClient {
  readonly #credentials: ReadonlyMap<string, RegistryCredential>;
  readonly #knownHosts: ReadonlySet<string>;
  readonly #tokens = new Map<string, { token: string; expiresAt: number }>();
  readonly #buckets: RegistryBuckets;
  readonly #options: Required<
    Pick<RegistryClientOptions, 'timeoutMs' | 'maxBytes' | 'ratePerSecond' | 'burst' | 'retries' | 'maxRetryWaitMs'>
  >;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #now: () => number;

  constructor(readonly options: RegistryClientOptions = {}) {
    this.#credentials = options.credentials ?? new Map();
    this.#buckets = options.buckets ?? new Map();
    this.#knownHosts =
      options.knownHosts ?? new Set([...this.#credentials.keys()].map((key) => key.replace(/\/.*$/, '')));
    this.#options = {
      timeoutMs: options.timeoutMs ?? 10_000,
      maxBytes: options.maxBytes ?? 4 * 1024 * 1024,
      ratePerSecond: options.ratePerSecond ?? 10,
      burst: options.burst ?? 20,
      retries: options.retries ?? 3,
      maxRetryWaitMs: options.maxRetryWaitMs ?? 30_000,
    };
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#now = options.now ?? Date.now;
  }

  /**
   * Whether this client holds a credential for the image (`host/name`) or, given a bare host,
   * for anything on it. Verification of an announced image applies only then.
   */
  hasCredentials(hostOrRepository: string): boolean {
    if (!hostOrRepository.includes('/'))
      return [...this.#credentials.keys()].some(
        (key) => key === hostOrRepository || key.startsWith(`${hostOrRepository}/`),
      );
    const slash = hostOrRepository.indexOf('/');
    return this.#credentialFor(hostOrRepository.slice(0, slash), hostOrRepository.slice(slash + 1)) !== undefined;
  }

  /** The most specific credential for `host/name`: `host/a/b`, then `host/a`, then `host` (containers-auth.json(5)). */
  #credentialFor(host: string, name: string): RegistryCredential | undefined {
    const parts = name.split('/');
    for (let n = parts.length; n >= 0; n--) {
      const key = n === 0 ? host : `${host}/${parts.slice(0, n).join('/')}`;
      const credential = this.#credentials.get(key);
      if (credential) return credential;
    }
    return undefined;
  }

  /** `HEAD` the manifest: the digest a tag resolves to, or null when the registry has no such tag or digest. */
  async resolve(repository: string, reference: string): Promise<{ digest: string; mediaType: string } | null> {
    const { host, name } = splitRepository(repository);
    const response = await this.#request(host, name, 'HEAD', `/v2/${name}/manifests/${reference}`, 'manifest', {
      accept: MANIFEST_ACCEPT,
    });
    if (response.status === 404) return null;
    await expectOk(response, host, `manifest ${name}:${reference}`);
    const digest = response.headers.get('docker-content-digest');
    if (digest) return { digest, mediaType: contentType(response) };
    // Some registries omit the header on HEAD; the body's digest is the manifest's.
    const answer = await this.manifest(repository, reference);
    return answer ? { digest: answer.digest, mediaType: answer.mediaType } : null;
  }

  /** `GET` the manifest or index; its digest is checked against the bytes when asked by digest. */
  async manifest(repository: string, reference: string): Promise<ManifestAnswer | null> {
    const { host, name } = splitRepository(repository);
    const response = await this.#request(host, name, 'GET', `/v2/${name}/manifests/${reference}`, 'manifest', {
      accept: MANIFEST_ACCEPT,
    });
    if (response.status === 404) return null;
    await expectOk(response, host, `manifest ${name}:${reference}`);
    const bytes = await readLimited(response, this.#options.maxBytes, `the manifest ${name}:${reference} of ${host}`);
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    if (reference.startsWith('sha256:') && reference !== digest)
      throw new RegistryError(
        `${host} served a manifest for ${name}@${reference} whose bytes hash to ${digest}; the registry or a proxy in front of it altered it`,
        'invalid',
      );
    const header = response.headers.get('docker-content-digest');
    let body: Manifest;
    try {
      body = Manifest.parse(JSON.parse(bytes.toString('utf8')));
    } catch {
      throw new RegistryError(
        `${host} served a manifest for ${name}:${reference} that is not an OCI or Docker v2 manifest`,
        'invalid',
      );
    }
    return {
      digest: header?.startsWith('sha256:') || !header ? (header ?? digest) : digest,
      mediaType: body.mediaType ?? contentType(response),
      body,
      bytes: bytes.length,
    };
  }

  /**
   * The referrers of a manifest (OCI Distribution 1.1, "Listing Referrers":
   * `GET /v2/<name>/referrers/<digest>`), an image index; null when the registry does not serve
   * the API (404), so the caller falls back to the referrers tag schema (`sha256-<hex>`, the same
   * spec's "Referrers Tag Schema"). Read with the same bounds as a manifest.
   */
  async referrers(repository: string, digest: string): Promise<ManifestAnswer | null> {
    const { host, name } = splitRepository(repository);
    const response = await this.#request(host, name, 'GET', `/v2/${name}/referrers/${digest}`, 'manifest', {
      accept: MEDIA_TYPES.ociIndex,
    });
    if (response.status === 404) {
      await response.body?.cancel();
      return null;
    }
    await expectOk(response, host, `referrers of ${name}@${digest}`);
    const bytes = await readLimited(response, this.#options.maxBytes, `the referrers of ${name}@${digest} on ${host}`);
    let body: Manifest;
    try {
      body = Manifest.parse(JSON.parse(bytes.toString('utf8')));
    } catch {
      throw new RegistryError(`${host} served referrers of ${name}@${digest} that are not an OCI index`, 'invalid');
    }
    return {
      digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}`,
      mediaType: body.mediaType ?? contentType(response),
      body,
      bytes: bytes.length,
    };
  }

  /** `GET` a blob (the image config), checked against its digest. */
  async blob(repository: string, digest: string): Promise<Buffer> {
    const { host, name } = splitRepository(repository);
    const response = await this.#request(host, name, 'GET', `/v2/${name}/blobs/${digest}`, 'blob', {});
    if (response.status === 404)
      throw new RegistryError(`${host} has no blob ${digest} in ${name}; the image is incomplete`, 'not-found');
    await expectOk(response, host, `blob ${digest} of ${name}`);
    const bytes = await readLimited(response, this.#options.maxBytes, `the blob ${digest} of ${name} on ${host}`);
    if (digest.startsWith('sha256:') && `sha256:${createHash('sha256').update(bytes).digest('hex')}` !== digest)
      throw new RegistryError(`${host} served blob ${digest} of ${name} with other bytes`, 'invalid');
    return bytes;
  }

  /**
   * Everything the pull request shows about `repository:tag`: the digest (of the index for a
   * multi-arch image), created time, platforms, size and the OCI source annotations or labels.
   * The image read for size, labels and config is linux/amd64 when the index has it, else the first.
   * Null when the registry has no such tag.
   */
  async inspect(repository: string, tag: string): Promise<ImageFacts | null> {
    const top = await this.manifest(repository, tag);
    if (!top) return null;
    let image: ManifestAnswer = top;
    let platforms: string[] = [];
    let sizePlatform: string | undefined;
    if (top.body.manifests) {
      const children = top.body.manifests.filter(
        (child) => child.platform && child.platform.os !== 'unknown' && child.platform.architecture !== 'unknown',
      );
      platforms = children.map((child) => platformOf(child.platform!));
      const chosen = children.find((child) => platformOf(child.platform!) === 'linux/amd64') ?? children[0];
      if (!chosen) throw new RegistryError(`the index ${repository}:${tag} lists no image`, 'invalid');
      const child = await this.manifest(repository, chosen.digest);
      if (!child)
        throw new RegistryError(
          `the index ${repository}:${tag} names ${chosen.digest}, which the registry lacks`,
          'not-found',
        );
      image = child;
      sizePlatform = platformOf(chosen.platform!);
    }
    const config = image.body.config;
    let parsed: z.infer<typeof ImageConfig> | undefined;
    if (config) {
      try {
        parsed = ImageConfig.parse(JSON.parse((await this.blob(repository, config.digest)).toString('utf8')));
      } catch (error) {
        if (error instanceof RegistryError) throw error;
        parsed = undefined; // An artifact's config is not an image config: no labels, nothing more.
      }
    }
    if (platforms.length === 0 && parsed?.os && parsed.architecture)
      platforms = [platformOf({ os: parsed.os, architecture: parsed.architecture, variant: parsed.variant })];
    const size =
      config || image.body.layers
        ? (config?.size ?? 0) + (image.body.layers ?? []).reduce((sum, layer) => sum + layer.size, 0)
        : undefined;
    const annotations = { ...image.body.annotations, ...top.body.annotations };
    const facts = sourceFacts(annotations, parsed?.config?.Labels ?? undefined);
    const created =
      facts.created ?? (parsed?.created && !parsed.created.startsWith('0001-') ? parsed.created : undefined);
    return {
      repository,
      tag,
      digest: top.digest,
      mediaType: top.mediaType,
      platforms,
      ...(size !== undefined ? { size } : {}),
      ...(sizePlatform ? { sizePlatform } : {}),
      ...facts,
      ...(created ? { created } : {}),
    };
  }

  /** One request with rate limit, authentication (one challenge round) and retries. */
  async #request(
    host: string,
    name: string,
    method: 'GET' | 'HEAD',
    path: string,
    kind: 'manifest' | 'blob',
    headers: Record<string, string>,
  ): Promise<Response> {
    const scope = `repository:${name}:pull`;
    const mirrors = this.options.mirrors;
    const mirror = mirrors?.get(host);
    if (mirrors && !mirror)
      throw new RegistryError(
        `this Escalator reads registries only through ESCALATOR_REGISTRY_MIRRORS, which has no mirror for ${host} (it has ${[...mirrors.keys()].join(', ') || 'none'}), so ${host} was not contacted; add "${host}" to ESCALATOR_REGISTRY_MIRRORS, or unset it to read registries directly`,
        'unavailable',
      );
    if (!mirror && !this.#mayReach(host))
      throw new RegistryError(
        `Escalator reads a registry on this machine or its private network (${host}) only when ESCALATOR_REGISTRY_AUTH_FILE names it`,
        'invalid',
      );
    const url = mirror
      ? `${mirror.origin}${mirror.pathname.replace(/\/+$/, '')}${path}?ns=${encodeURIComponent(host)}`
      : `${this.#scheme(host)}://${apiHost(host)}${path}`;
    let authorization = this.#cachedAuthorization(host, scope);
    let challenged = false;
    for (let attempt = 0; ;) {
      const response = await this.#send(host, method, url, kind, {
        ...headers,
        ...(authorization ? { authorization } : {}),
      });
      // A 401 from where a redirect led (a blob store, a CDN) is not answered with this registry's
      // credential: it would hand the credential to whatever realm that host names.
      const sameOrigin = !response.url || new URL(response.url).origin === new URL(url).origin;
      if (response.status === 401 && !challenged && sameOrigin) {
        // One answer to the challenge; a second 401 is the answer (expectOk words it).
        challenged = true;
        await response.body?.cancel();
        const challenge = parseChallenge(response.headers.get('www-authenticate') ?? '');
        const fresh = challenge ? await this.#authorize(host, name, challenge, scope) : undefined;
        if (!fresh) return response;
        authorization = fresh;
        continue;
      }
      if ((response.status === 429 || response.status >= 500) && attempt < this.#options.retries) {
        attempt++;
        await response.body?.cancel();
        await this.#backoff(host, response, attempt);
        continue;
      }
      return response;
    }
  }

  async #backoff(host: string, response: Response, attempt: number): Promise<void> {
    const wait = retryAfterMs(response.headers.get('retry-after'), this.#now()) ?? 250 * 2 ** (attempt - 1);
    if (wait > this.#options.maxRetryWaitMs)
      throw new RegistryError(
        `${host} answered ${response.status} and asks to wait ${Math.round(wait / 1000)} s; Escalator reads it again on the next event`,
        'unavailable',
      );
    this.options.log?.debug({ host, status: response.status, waitMs: wait }, 'Registry asked to retry');
    await this.#sleep(wait);
  }

  /** Sends one HTTP request through the host's token bucket, with the time limit. */
  async #send(
    host: string,
    method: string,
    url: string,
    kind: 'manifest' | 'blob' | 'token',
    headers: Record<string, string>,
    body?: string,
  ): Promise<Response> {
    await this.#take(host);
    // Redirects are followed here, not by fetch: blob stores (S3, GCS, a CDN) get the request
    // without Escalator's Authorization header, which is meant for the registry alone.
    let target = new URL(url);
    let sent = { 'user-agent': 'escalator', ...headers };
    const signal = AbortSignal.timeout(this.#options.timeoutMs);
    for (let hop = 0; ; hop++) {
      let response: Response;
      try {
        response = await fetch(target, {
          method,
          headers: sent,
          ...(body !== undefined ? { body } : {}),
          signal,
          redirect: 'manual',
        });
      } catch (error) {
        const reason =
          (error as Error).name === 'TimeoutError'
            ? `no answer within ${this.#options.timeoutMs} ms`
            : (error as Error).message;
        this.options.onRequest?.({ host, method, kind, status: 0 });
        throw new RegistryError(
          `cannot reach ${host} (${reason}); check the registry host and the network`,
          'unavailable',
        );
      }
      this.options.onRequest?.({ host, method, kind, status: response.status });
      const location = response.headers.get('location');
      if (![301, 302, 303, 307, 308].includes(response.status) || !location || body !== undefined) return response;
      await response.body?.cancel();
      if (hop >= 3) throw new RegistryError(`${host} redirected the ${kind} request more than 3 times`, 'invalid');
      const next = new URL(location, target);
      if (next.host !== target.host && !this.#knownHosts.has(host) && !this.#mayReach(next.host))
        throw new RegistryError(`${host} redirected to an internal address (${next.host}); not followed`, 'invalid');
      if (next.protocol !== 'https:' && !(next.protocol === 'http:' && target.protocol === 'http:'))
        throw new RegistryError(`${host} redirected to a URL that is not HTTPS (${next.host})`, 'invalid');
      if (next.origin !== target.origin) {
        const { authorization: _dropped, ...rest } = sent as Record<string, string>;
        sent = rest as typeof sent;
      }
      target = next;
    }
  }

  /** Waits for a token of the host's bucket (in process; one worker's calls to one registry). */
  async #take(host: string): Promise<void> {
    const { ratePerSecond, burst } = this.#options;
    for (;;) {
      const now = this.#now();
      const bucket = this.#buckets.get(host) ?? { tokens: burst, at: now };
      bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * ratePerSecond);
      bucket.at = now;
      if (!this.#buckets.has(host)) forgetOldest(this.#buckets);
      this.#buckets.set(host, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return;
      }
      await this.#sleep(Math.ceil(((1 - bucket.tokens) / ratePerSecond) * 1000));
    }
  }

  /** Internal addresses only where the operator named them (credentials file, or plain HTTP for tests). */
  #mayReach(host: string): boolean {
    return (
      !isInternalHost(host) || this.#knownHosts.has(host) || this.#scheme(host) === 'http' || !!this.options.plainHttp
    );
  }

  #scheme(host: string): 'http' | 'https' {
    const plain = this.options.plainHttp ?? ((name: string) => isLoopback(name) && this.#knownHosts.has(name));
    return plain(host) ? 'http' : 'https';
  }

  #cachedAuthorization(host: string, scope: string): string | undefined {
    const token = this.#tokens.get(`${host} ${scope}`);
    if (token && token.expiresAt > this.#now()) return `Bearer ${token.token}`;
    return undefined;
  }

  /** The Authorization header answering a challenge, or undefined when Escalator has nothing to answer with. */
  async #authorize(
    host: string,
    name: string,
    challenge: { scheme: string; params: Record<string, string> },
    scope: string,
  ): Promise<string | undefined> {
    const credential = this.#credentialFor(host, name);
    if (challenge.scheme === 'basic') {
      if (credential?.kind !== 'basic') return undefined;
      return `Basic ${Buffer.from(`${credential.username}:${credential.password}`).toString('base64')}`;
    }
    if (challenge.scheme !== 'bearer' || !challenge.params.realm) return undefined;
    let realm: URL;
    try {
      realm = new URL(challenge.params.realm);
    } catch {
      throw new RegistryError(`${host} sent a token realm that is not a URL`, 'invalid');
    }
    if (realm.host !== host && !this.#knownHosts.has(host) && !this.#mayReach(realm.host))
      throw new RegistryError(
        `${host} names a token realm at an internal address (${realm.host}); not asked`,
        'invalid',
      );
    if (realm.protocol !== 'https:' && !(realm.protocol === 'http:' && this.#scheme(host) === 'http'))
      throw new RegistryError(
        `${host} asks for credentials at a plain-HTTP token realm (${realm.host}); Escalator sends credentials over HTTPS only`,
        'invalid',
      );
    const wanted = challenge.params.scope ?? scope;
    const service = challenge.params.service;
    let response: Response;
    if (credential?.kind === 'identity-token') {
      const form = new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: credential.token,
        client_id: 'escalator',
        scope: wanted,
        ...(service ? { service } : {}),
      });
      response = await this.#send(
        host,
        'POST',
        realm.toString(),
        'token',
        {
          'content-type': 'application/x-www-form-urlencoded',
        },
        form.toString(),
      );
    } else {
      if (service) realm.searchParams.set('service', service);
      realm.searchParams.set('scope', wanted);
      response = await this.#send(
        host,
        'GET',
        realm.toString(),
        'token',
        credential?.kind === 'basic'
          ? {
              authorization: `Basic ${Buffer.from(`${credential.username}:${credential.password}`).toString('base64')}`,
            }
          : {},
      );
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new RegistryError(
        `the token server of ${host} (${realm.host}) refused ${credential ? 'the credential of ESCALATOR_REGISTRY_AUTH_FILE' : 'an anonymous pull'} for ${wanted} with ${response.status}; ${credential ? 'check the credential and its access to the repository' : 'add a credential for the host to ESCALATOR_REGISTRY_AUTH_FILE'}`,
        'unauthorized',
      );
    }
    const bytes = await readLimited(response, 64 * 1024, `the token answer of ${realm.host}`);
    let answer: { token?: string; access_token?: string; expires_in?: number };
    try {
      answer = JSON.parse(bytes.toString('utf8')) as typeof answer;
    } catch {
      throw new RegistryError(`the token server of ${host} answered something that is not JSON`, 'invalid');
    }
    const token = answer.token ?? answer.access_token;
    if (typeof token !== 'string' || token === '')
      throw new RegistryError(`the token server of ${host} answered without a token`, 'invalid');
    // The spec's default lifetime is 60 s; a token is dropped 10 s early so it never expires in flight.
    const lifetime = typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in : 60;
    forgetOldest(this.#tokens);
    this.#tokens.set(`${host} ${scope}`, { token, expiresAt: this.#now() + Math.max(0, lifetime - 10) * 1000 });
    return `Bearer ${token}`;
  }
}

/**
 * The registry clients of a worker, one per GitHub owner: the client of an owner holds only the
 * entries of the credentials file that serve it (`owners`), so facts of an image are read for an
 * installation with its owner's credential or anonymously, never with another owner's. Each
 * owner's client has its own token cache: a registry token obtained with one owner's credential
 * never answers for another.
 */
export class RegistryAccess {
  readonly #entries: readonly RegistryAuthEntry[];
  readonly #knownHosts: ReadonlySet<string>;
  readonly #clients = new Map<string, RegistryClient>();
  readonly #buckets: RegistryBuckets = new Map();

  constructor(
    entries: readonly RegistryAuthEntry[],
    readonly options: Omit<RegistryClientOptions, 'credentials' | 'knownHosts' | 'buckets'> = {},
  ) {
    this.#entries = entries;
    this.#knownHosts = new Set(entries.map((entry) => entry.key.replace(/\/.*$/, '')));
  }

  /** The hosts the file names (for the start-up log; no owner, no secret). */
  hosts(): string[] {
    return [...this.#knownHosts];
  }

  /** The client reading images for installations of `owner` (a GitHub login). */
  forOwner(owner: string): RegistryClient {
    const key = owner.toLowerCase();
    let client = this.#clients.get(key);
    if (!client) {
      const credentials = new Map(
        this.#entries.filter((entry) => servesOwner(entry, key)).map((entry) => [entry.key, entry.credential]),
      );
      client = new RegistryClient({
        ...this.options,
        credentials,
        knownHosts: this.#knownHosts,
        buckets: this.#buckets,
      });
      forgetOldest(this.#clients);
      this.#clients.set(key, client);
    }
    return client;
  }
}

/** Hosts and scopes come from repository files: a map keyed by them keeps its newest 1,000 entries. */
function forgetOldest(map: Map<string, unknown>): void {
  if (map.size >= 1000) map.delete(map.keys().next().value as string);
}

/** `registry.example.com:5000/team/app` → host and repository name. */
export function splitRepository(repository: string): { host: string; name: string } {
  const slash = repository.indexOf('/');
  if (slash <= 0) throw new RegistryError(`${repository} names no registry host`, 'invalid');
  return { host: repository.slice(0, slash), name: repository.slice(slash + 1) };
}

function platformOf(platform: { os: string; architecture: string; variant?: string | undefined }): string {
  return `${platform.os}/${platform.architecture}${platform.variant ? `/${platform.variant}` : ''}`;
}

function contentType(response: Response): string {
  return (response.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
}

async function expectOk(response: Response, host: string, what: string): Promise<void> {
  if (response.ok) return;
  await response.body?.cancel();
  if (response.status === 401 || response.status === 403)
    throw new RegistryError(
      `${host} refused to serve the ${what} (${response.status}); add a credential for ${host} to ESCALATOR_REGISTRY_AUTH_FILE whose owners include this repository's owner, or give it pull access`,
      'unauthorized',
    );
  throw new RegistryError(
    `${host} answered ${response.status} for the ${what}; Escalator reads it again on the next event`,
    'unavailable',
  );
}

/** The body, refusing more than `max` bytes before holding them. */
async function readLimited(response: Response, max: number, what: string): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) {
    await response.body?.cancel();
    throw new RegistryError(`${what} is ${declared} bytes, more than the ${max} Escalator reads`, 'too-large');
  }
  const chunks: Buffer[] = [];
  let total = 0;
  if (!response.body) return Buffer.alloc(0);
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel();
      throw new RegistryError(`${what} is more than the ${max} bytes Escalator reads`, 'too-large');
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks);
}
