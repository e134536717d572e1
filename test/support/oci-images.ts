import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './net.js';

/**
 * Images with labels, annotations and several platforms, built on disk as OCI image layouts
 * (https://github.com/opencontainers/image-spec/blob/main/image-layout.md) and pushed to a real
 * Debian `docker-registry` (CNCF Distribution) with `skopeo copy --all`, as CI pushes images.
 */

export interface ImageSpec {
  /** Config labels (what `docker build --label` writes). */
  labels?: Record<string, string>;
  /** Manifest annotations (what `buildx --annotation manifest:…` writes). */
  annotations?: Record<string, string>;
  created?: string;
  /** One image per platform; more than one makes an index. @default ['linux/amd64'] */
  platforms?: string[];
  /** Index annotations (`buildx --annotation index:…`). */
  indexAnnotations?: Record<string, string>;
  /** Bytes of the one layer, so two images differ. @default 512 */
  layerBytes?: number;
  /** Fills the layer, so two images of one size differ. */
  seed?: number;
  /** `docker`: pushed as Docker schema 2 (manifest list and manifests), converted by skopeo. */
  format?: 'oci' | 'docker';
}

function writeBlob(dir: string, buf: Buffer): { digest: string; size: number } {
  const hex = createHash('sha256').update(buf).digest('hex');
  writeFileSync(join(dir, 'blobs', 'sha256', hex), buf);
  return { digest: `sha256:${hex}`, size: buf.length };
}

/** Writes the layout of `spec` under `dir` with the ref name `name`. */
export function buildImageLayout(dir: string, name: string, spec: ImageSpec): void {
  mkdirSync(join(dir, 'blobs', 'sha256'), { recursive: true });
  const platforms = spec.platforms ?? ['linux/amd64'];
  const manifests = platforms.map((platform, i) => {
    const [os = 'linux', architecture = 'amd64', variant] = platform.split('/');
    const layer = writeBlob(dir, Buffer.alloc((spec.layerBytes ?? 512) + i, (spec.seed ?? 0) + i));
    const config = writeBlob(
      dir,
      Buffer.from(
        JSON.stringify({
          ...(spec.created ? { created: spec.created } : {}),
          architecture,
          os,
          ...(variant ? { variant } : {}),
          config: { Labels: spec.labels ?? {} },
          rootfs: { type: 'layers', diff_ids: [layer.digest] },
        }),
      ),
    );
    const manifest = writeBlob(
      dir,
      Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
          layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', ...layer }],
          ...(spec.annotations ? { annotations: spec.annotations } : {}),
        }),
      ),
    );
    return {
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      ...manifest,
      platform: { os, architecture, ...(variant ? { variant } : {}) },
      size: manifest.size,
      configSize: config.size,
      layerSize: layer.size,
    };
  });
  let top: { mediaType: string; digest: string; size: number };
  if (manifests.length === 1) {
    const [only] = manifests;
    top = { mediaType: only!.mediaType, digest: only!.digest, size: only!.size };
  } else {
    const index = writeBlob(
      dir,
      Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: 'application/vnd.oci.image.index.v1+json',
          manifests: manifests.map(({ mediaType, digest, size, platform }) => ({ mediaType, digest, size, platform })),
          ...(spec.indexAnnotations ? { annotations: spec.indexAnnotations } : {}),
        }),
      ),
    );
    top = { mediaType: 'application/vnd.oci.image.index.v1+json', ...index };
  }
  writeFileSync(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  writeFileSync(
    join(dir, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [{ ...top, annotations: { 'org.opencontainers.image.ref.name': name } }],
    }),
  );
}

/** A running `docker-registry`, optionally behind htpasswd basic auth. */
export interface LocalRegistry {
  host: string;
  /** Pushes `spec` as `repository:tag` (repository without the host) and returns the digest the registry serves. */
  push(repository: string, tag: string, spec: ImageSpec): Promise<string>;
  close(): void;
}

/** Starts Debian's `docker-registry` on a free loopback port; `auth` puts it behind htpasswd (bcrypt, by `htpasswd -B`). */
export async function startRegistry(auth?: { username: string; password: string }): Promise<LocalRegistry> {
  const work = mkdtempSync(join(tmpdir(), 'escalator-oci-'));
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  let authConfig = '';
  if (auth) {
    const line = execFileSync('htpasswd', ['-nbB', auth.username, auth.password], { encoding: 'utf8' }).trim();
    writeFileSync(join(work, 'htpasswd'), `${line}\n`);
    authConfig = `auth:\n  htpasswd:\n    realm: escalator-test\n    path: ${join(work, 'htpasswd')}\n`;
  }
  writeFileSync(
    join(work, 'config.yml'),
    `version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: ${join(work, 'storage')}\nhttp:\n  addr: ${host}\n${authConfig}`,
  );
  const child: ChildProcess = spawn('docker-registry', ['serve', join(work, 'config.yml')], { stdio: 'ignore' });
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      const response = await fetch(`http://${host}/v2/`);
      if (response.status === 200 || response.status === 401) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new Error(`docker-registry did not start on ${host} within 20 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  let n = 0;
  return {
    host,
    async push(repository, tag, spec) {
      const layout = join(work, `layout-${n++}`);
      buildImageLayout(layout, tag, spec);
      const creds = auth ? ['--dest-creds', `${auth.username}:${auth.password}`] : [];
      execFileSync('skopeo', [
        'copy',
        '--quiet',
        '--all',
        ...(spec.format === 'docker' ? ['--format', 'v2s2'] : ['--preserve-digests']),
        '--dest-tls-verify=false',
        ...creds,
        `oci:${layout}:${tag}`,
        `docker://${host}/${repository}:${tag}`,
      ]);
      const head = await fetch(`http://${host}/v2/${repository}/manifests/${tag}`, {
        method: 'HEAD',
        headers: {
          accept:
            'application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.list.v2+json, application/vnd.docker.distribution.manifest.v2+json',
          ...(auth
            ? { authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}` }
            : {}),
        },
      });
      const digest = head.headers.get('docker-content-digest');
      if (!digest) throw new Error(`the registry serves no digest for ${repository}:${tag} (${head.status})`);
      return digest;
    },
    close() {
      child.kill('SIGTERM');
      rmSync(work, { recursive: true, force: true });
    },
  };
}
