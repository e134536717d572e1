import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A one-layer OCI image layout built on disk (no downloads), for `skopeo copy oci:<dir>:<name>`.
 * Returns the manifest digest the registry will report for the pushed tag.
 */
export function buildOciLayout(dir: string, name: string, label: string): { manifestDigest: string } {
  mkdirSync(join(dir, 'blobs', 'sha256'), { recursive: true });
  const blob = (buf: Buffer) => {
    const hex = createHash('sha256').update(buf).digest('hex');
    writeFileSync(join(dir, 'blobs', 'sha256', hex), buf);
    return { digest: `sha256:${hex}`, size: buf.length };
  };
  const layer = blob(Buffer.alloc(512));
  const config = blob(
    Buffer.from(
      JSON.stringify({
        architecture: 'amd64',
        os: 'linux',
        config: { Labels: { 'org.opencontainers.image.title': label } },
        rootfs: { type: 'layers', diff_ids: [layer.digest] },
      }),
    ),
  );
  const manifest = blob(
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
        layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', ...layer }],
      }),
    ),
  );
  writeFileSync(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  writeFileSync(
    join(dir, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          ...manifest,
          annotations: { 'org.opencontainers.image.ref.name': name },
        },
      ],
    }),
  );
  return { manifestDigest: manifest.digest };
}
