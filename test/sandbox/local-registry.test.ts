/**
 * The sandbox's local registry (packages/github-sandbox/src/registry.ts) read by Escalator's
 * registry client as the mirror of ghcr.io (ESCALATOR_REGISTRY_MIRRORS): the OCI Distribution
 * routes answer as the spec says, the facts a pull request shows come out of the images it builds,
 * and with mirrors set a host without one is refused before any request is sent.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandboxRegistry, tarOf, type SandboxRegistry } from '@escalator/github-sandbox/registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RegistryClient } from '../../src/adapters/registry/client.js';
import { parseRegistryMirrors } from '../../src/config/registry-mirrors.js';

const SOURCE = 'http://127.0.0.1:1/example/hello';
const REVISION = 'b'.repeat(40);

describe('the sandbox registry, read as the mirror of ghcr.io', () => {
  let registry: SandboxRegistry;
  const calls: Array<{ host: string; kind: string; status: number }> = [];
  let client: RegistryClient;

  beforeAll(async () => {
    registry = await startSandboxRegistry('ghcr.io', [
      {
        repository: 'example/hello',
        tag: '1.1.0',
        platforms: ['linux/amd64', 'linux/arm64'],
        created: '2026-11-24T14:30:00Z',
        labels: {
          'org.opencontainers.image.source': SOURCE,
          'org.opencontainers.image.revision': REVISION,
          'org.opencontainers.image.version': '1.1.0',
        },
        files: { hello: 'hello 1.1.0\n' },
      },
      {
        repository: 'example/hello',
        tag: '1.0.0',
        platforms: ['linux/amd64'],
        created: '2026-11-03T10:15:00Z',
        labels: {},
        files: { hello: 'hello 1.0.0\n' },
      },
    ]);
    const parsed = parseRegistryMirrors(JSON.stringify({ 'ghcr.io': registry.url }));
    if (!parsed.ok) throw new Error(parsed.problems.join('; '));
    client = new RegistryClient({ mirrors: parsed.mirrors!, onRequest: (info) => calls.push(info), retries: 0 });
  });
  afterAll(() => registry?.close());

  it('serves what a registry serves: the facts of a multi-platform image with OCI labels', async () => {
    const facts = await client.inspect('ghcr.io/example/hello', '1.1.0');
    const served = registry.images.find((image) => image.tag === '1.1.0')!;
    expect(facts).toMatchObject({
      repository: 'ghcr.io/example/hello',
      tag: '1.1.0',
      digest: served.digest,
      mediaType: 'application/vnd.oci.image.index.v1+json',
      platforms: ['linux/amd64', 'linux/arm64'],
      created: '2026-11-24T14:30:00Z',
      source: SOURCE,
      revision: REVISION,
      version: '1.1.0',
    });
    expect(facts?.size).toBeGreaterThan(0);
    // by digest too (the client checks the bytes hash to it), and a single-platform image is a manifest
    expect((await client.manifest('ghcr.io/example/hello', served.digest))?.digest).toBe(served.digest);
    expect(await client.resolve('ghcr.io/example/hello', '1.0.0')).toEqual({
      digest: registry.images.find((image) => image.tag === '1.0.0')!.digest,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
    });
    expect(await client.inspect('ghcr.io/example/hello', '9.9.9')).toBeNull();
    // every request went to the mirror, named by the host it stands in for, with `ns`
    expect(calls.every((call) => call.host === 'ghcr.io')).toBe(true);
    expect(registry.requests().every((line) => line.includes('?ns=ghcr.io'))).toBe(true);
  });

  it('refuses a registry host it has no mirror for, before any request', async () => {
    const before = calls.length;
    const seen = registry.requests().length;
    await expect(client.inspect('docker.io/library/nginx', '1.27')).rejects.toThrow(
      'this Escalator reads registries only through ESCALATOR_REGISTRY_MIRRORS, which has no mirror for docker.io (it has ghcr.io), so docker.io was not contacted; add "docker.io" to ESCALATOR_REGISTRY_MIRRORS, or unset it to read registries directly',
    );
    expect(calls.length).toBe(before);
    expect(registry.requests().length).toBe(seen);
  });

  it('answers the OCI Distribution routes and errors as the spec writes them', async () => {
    const base = registry.url;
    const v2 = await fetch(`${base}/v2/`);
    expect(v2.status).toBe(200);
    expect(v2.headers.get('docker-distribution-api-version')).toBe('registry/2.0');
    expect(await (await fetch(`${base}/v2/example/hello/tags/list`)).json()).toEqual({
      name: 'example/hello',
      tags: ['1.0.0', '1.1.0'],
    });
    const missing = await fetch(`${base}/v2/example/hello/manifests/2.0.0`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { errors: Array<{ code: string }> }).errors[0]?.code).toBe('MANIFEST_UNKNOWN');
    const blob = await fetch(`${base}/v2/example/hello/blobs/sha256:${'0'.repeat(64)}`);
    expect(((await blob.json()) as { errors: Array<{ code: string }> }).errors[0]?.code).toBe('BLOB_UNKNOWN');
    const other = await fetch(`${base}/v2/example/hello/manifests/1.1.0?ns=quay.io`);
    expect(((await other.json()) as { errors: Array<{ code: string }> }).errors[0]?.code).toBe('NAME_UNKNOWN');
    const push = await fetch(`${base}/v2/example/hello/blobs/uploads/`, { method: 'POST' });
    expect(push.status).toBe(405);
    expect(((await push.json()) as { errors: Array<{ code: string }> }).errors[0]?.code).toBe('UNSUPPORTED');
  });

  it('builds layers that tar reads', () => {
    const work = mkdtempSync(join(tmpdir(), 'escalator-tar-'));
    try {
      const file = join(work, 'layer.tar');
      writeFileSync(
        file,
        tarOf({ hello: 'hello 1.1.0\n', 'etc/platform': 'linux/amd64\n' }, new Date('2026-11-24T14:30:00Z')),
      );
      expect(execFileSync('tar', ['-tvf', file], { encoding: 'utf8' })).toMatch(/etc\/platform\n.*hello\n$/);
      expect(execFileSync('tar', ['-xOf', file, 'hello'], { encoding: 'utf8' })).toBe('hello 1.1.0\n');
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});

describe('ESCALATOR_REGISTRY_MIRRORS', () => {
  it('names every problem, and never takes a credential in a URL', () => {
    expect(parseRegistryMirrors(undefined)).toEqual({ ok: true, mirrors: undefined });
    expect(parseRegistryMirrors('ghcr.io=http://x')).toEqual({
      ok: false,
      problems: ['is not JSON: write an object of registry host to URL, e.g. {"ghcr.io": "http://127.0.0.1:5000"}'],
    });
    const parsed = parseRegistryMirrors(
      JSON.stringify({ 'ghcr.io': 'ftp://x', 'docker.io': 'http://user:pass@127.0.0.1:5000', 'a b': 'http://x' }),
    );
    expect(parsed).toEqual({
      ok: false,
      problems: [
        'the mirror of ghcr.io must be an http(s) URL, e.g. "http://127.0.0.1:5000"',
        'the mirror of docker.io must be a plain URL without credentials, query or fragment (credentials go in ESCALATOR_REGISTRY_AUTH_FILE)',
        '"a b" is not a registry host (host[:port], e.g. ghcr.io)',
      ],
    });
    expect(JSON.stringify(parsed)).not.toContain('pass');
  });
});
