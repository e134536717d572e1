import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A read-only OCI registry on 127.0.0.1 for `npm run sandbox`: the images it serves are built in
 * memory at start (real image configs, uncompressed tar layers, image manifests and one index per
 * tag, each blob addressed by its sha256), so no image is downloaded and nothing needs installing.
 *
 * It answers the pull routes of the OCI Distribution Specification
 * (https://github.com/opencontainers/distribution-spec/blob/main/spec.md#endpoints):
 * - end-1  `GET /v2/`                                   200, the API is there
 * - end-2  `GET`/`HEAD /v2/<name>/blobs/<digest>`        the blob, or 404 `BLOB_UNKNOWN`
 * - end-3  `GET`/`HEAD /v2/<name>/manifests/<reference>` by tag or digest, with `Content-Type`
 *   (the manifest's `mediaType`) and `Docker-Content-Digest`; 404 `MANIFEST_UNKNOWN`
 * - end-8a `GET /v2/<name>/tags/list`                   `{name, tags}`; 404 `NAME_UNKNOWN`
 * Errors have the spec's body (`{"errors": [{code, message}]}`, "Error Codes"). Every push route
 * answers 405 `UNSUPPORTED`: the images are what the sandbox built.
 *
 * It stands in for one registry host (`ghcr.io`): a client reading it as that host's mirror says
 * so with `ns=<host>`, as containerd does (https://github.com/containerd/containerd/blob/main/docs/hosts.md);
 * a request for another host is 404 `NAME_UNKNOWN`, never answered with these images.
 */

export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';
const OCI_LAYER = 'application/vnd.oci.image.layer.v1.tar';

/** One tag of an image, as CI would build it (`docker buildx build --platform … --label …`). */
export interface ImageBuild {
  /** The repository without the host: `example/hello`. */
  repository: string;
  tag: string;
  /** `os/architecture[/variant]`; more than one makes an index. */
  platforms: string[];
  /** RFC 3339 build time. */
  created: string;
  /** Config labels (`org.opencontainers.image.source`, `.revision`, `.version`, …). */
  labels: Record<string, string>;
  /** Files of the one layer (path → text). */
  files: Record<string, string>;
}

/** What the registry serves for one tag: the digest a client resolves it to. */
export interface ServedImage {
  repository: string;
  tag: string;
  digest: string;
  mediaType: string;
}

export interface SandboxRegistry {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** The registry host it stands in for (`ghcr.io`). */
  host: string;
  images: ServedImage[];
  /** Requests it answered, as `METHOD path` (for tests and the sandbox's own log). */
  requests(): string[];
  close(): Promise<void>;
}

interface Blob {
  bytes: Buffer;
  mediaType: string;
}

const sha256 = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

/**
 * An uncompressed tar (POSIX ustar, https://pubs.opengroup.org/onlinepubs/9699919799/utilities/pax.html#tag_20_92_13_06)
 * of regular files, mode 0644, owned by root, with a fixed time: the same files make the same bytes.
 */
export function tarOf(files: Record<string, string>, mtime: Date): Buffer {
  const blocks: Buffer[] = [];
  for (const [path, text] of Object.entries(files).sort(([a], [b]) => a.localeCompare(b))) {
    const body = Buffer.from(text, 'utf8');
    const header = Buffer.alloc(512);
    const put = (value: string, offset: number, length: number) => header.write(value, offset, length, 'ascii');
    const octal = (value: number, length: number) => `${value.toString(8).padStart(length - 1, '0')}\0`;
    put(path, 0, 100);
    put(octal(0o644, 8), 100, 8);
    put(octal(0, 8), 108, 8);
    put(octal(0, 8), 116, 8);
    put(octal(body.length, 12), 124, 12);
    put(octal(Math.floor(mtime.getTime() / 1000), 12), 136, 12);
    put(' '.repeat(8), 148, 8);
    put('0', 156, 1);
    put('ustar\0', 257, 6);
    put('00', 263, 2);
    let sum = 0;
    for (const byte of header) sum += byte;
    put(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
    blocks.push(header, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

/** Builds every blob of `build` into `blobs`; returns the top manifest (an index for several platforms). */
function buildImage(build: ImageBuild, blobs: Map<string, Blob>): { digest: string; mediaType: string } {
  const add = (bytes: Buffer, mediaType: string) => {
    const digest = sha256(bytes);
    blobs.set(digest, { bytes, mediaType });
    return { mediaType, digest, size: bytes.length };
  };
  const json = (value: unknown) => Buffer.from(JSON.stringify(value));
  const created = new Date(build.created);
  const manifests = build.platforms.map((platform) => {
    const [os = 'linux', architecture = 'amd64', variant] = platform.split('/');
    // Each platform's layer differs as a real build's would: it holds its platform's name.
    const layer = add(tarOf({ ...build.files, 'etc/platform': `${platform}\n` }, created), OCI_LAYER);
    // https://github.com/opencontainers/image-spec/blob/main/config.md
    const config = add(
      json({
        created: build.created,
        architecture,
        os,
        ...(variant ? { variant } : {}),
        config: { Labels: build.labels, Cmd: ['/hello'] },
        rootfs: { type: 'layers', diff_ids: [layer.digest] },
        history: [{ created: build.created, created_by: 'COPY . / # buildkit' }],
      }),
      OCI_CONFIG,
    );
    // https://github.com/opencontainers/image-spec/blob/main/manifest.md
    const manifest = add(json({ schemaVersion: 2, mediaType: OCI_MANIFEST, config, layers: [layer] }), OCI_MANIFEST);
    return { ...manifest, platform: { os, architecture, ...(variant ? { variant } : {}) } };
  });
  if (manifests.length === 1) return { digest: manifests[0]!.digest, mediaType: OCI_MANIFEST };
  // https://github.com/opencontainers/image-spec/blob/main/image-index.md
  const index = add(json({ schemaVersion: 2, mediaType: OCI_INDEX, manifests }), OCI_INDEX);
  return { digest: index.digest, mediaType: OCI_INDEX };
}

/** Starts the registry on a free port of 127.0.0.1, serving `builds` as images of `host`. */
export async function startSandboxRegistry(host: string, builds: readonly ImageBuild[]): Promise<SandboxRegistry> {
  const blobs = new Map<string, Blob>();
  const repositories = new Map<string, { blobs: Set<string>; tags: Map<string, string> }>();
  const images: ServedImage[] = [];
  for (const build of builds) {
    const before = new Set(blobs.keys());
    const top = buildImage(build, blobs);
    const repository = repositories.get(build.repository) ?? { blobs: new Set<string>(), tags: new Map() };
    repositories.set(build.repository, repository);
    for (const digest of blobs.keys()) if (!before.has(digest)) repository.blobs.add(digest);
    repository.blobs.add(top.digest);
    repository.tags.set(build.tag, top.digest);
    images.push({ repository: build.repository, tag: build.tag, ...top });
  }
  const log: string[] = [];
  const server: Server = createServer((request, response) => {
    log.push(`${request.method} ${request.url}`);
    request.resume();
    answer(request, response);
  });

  function error(response: ServerResponse, status: number, code: string, message: string): void {
    const body = JSON.stringify({ errors: [{ code, message, detail: null }] });
    response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    response.end(body);
  }

  function send(request: IncomingMessage, response: ServerResponse, digest: string, blob: Blob): void {
    response.writeHead(200, {
      'content-type': blob.mediaType,
      'content-length': blob.bytes.length,
      'docker-content-digest': digest,
    });
    response.end(request.method === 'HEAD' ? undefined : blob.bytes);
  }

  function answer(request: IncomingMessage, response: ServerResponse): void {
    const url = new URL(request.url ?? '/', 'http://registry');
    response.setHeader('docker-distribution-api-version', 'registry/2.0');
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return error(
        response,
        405,
        'UNSUPPORTED',
        'The sandbox registry is read-only: it serves the images it built at start.',
      );
    if (url.pathname === '/v2/' || url.pathname === '/v2') {
      response.writeHead(200, { 'content-type': 'application/json' });
      return void response.end(request.method === 'HEAD' ? undefined : '{}');
    }
    // <name> is path components of [a-z0-9]+((\.|_|__|-+)[a-z0-9]+)* joined by `/` (the spec's "Pulling manifests").
    const route =
      /^\/v2\/((?:[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)(?:\/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*)\/(manifests|blobs|tags)\/(.+)$/.exec(
        url.pathname,
      );
    if (!route) return error(response, 404, 'NOT_FOUND', `No such route: ${url.pathname}`);
    const [, name = '', kind, reference = ''] = route;
    const ns = url.searchParams.get('ns');
    const repository = ns === null || ns === host ? repositories.get(name) : undefined;
    if (!repository)
      return error(
        response,
        404,
        'NAME_UNKNOWN',
        `The sandbox registry serves ${[...repositories.keys()].map((r) => `${host}/${r}`).join(', ')}; not ${ns ?? host}/${name}.`,
      );
    if (kind === 'tags') {
      if (reference !== 'list') return error(response, 404, 'NOT_FOUND', `No such route: ${url.pathname}`);
      const body = JSON.stringify({ name, tags: [...repository.tags.keys()].sort() });
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      return void response.end(request.method === 'HEAD' ? undefined : body);
    }
    const digest = kind === 'manifests' && !reference.includes(':') ? repository.tags.get(reference) : reference;
    const blob = digest && repository.blobs.has(digest) ? blobs.get(digest) : undefined;
    const isManifest = blob && (blob.mediaType === OCI_MANIFEST || blob.mediaType === OCI_INDEX);
    if (kind === 'manifests') {
      if (!blob || !isManifest)
        return error(response, 404, 'MANIFEST_UNKNOWN', `${host}/${name} has no manifest ${reference}.`);
      return send(request, response, digest!, blob);
    }
    if (!blob) return error(response, 404, 'BLOB_UNKNOWN', `${host}/${name} has no blob ${reference}.`);
    return send(request, response, digest!, blob);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    host,
    images,
    requests: () => [...log],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
