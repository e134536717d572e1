import { createHash, createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fulcioHandler, initializeCA, initializeCTLog, initializeTLog, rekorHandler } from '@sigstore/mock';
import { attest } from 'sigstore';

/**
 * Signatures made in the test, as the tools that sign images store them:
 * - cosign's keyed signatures, produced from its published specification
 *   (https://github.com/sigstore/cosign/blob/main/specs/SIGNATURE_SPEC.md): a simple-signing
 *   payload (containers-signature(5), "JSON Data Format") as a layer of an OCI manifest tagged
 *   `sha256-<hex>.sig`, its ECDSA P-256 / SHA-256 signature (ASN.1 DER, base64) in the layer's
 *   `dev.cosignproject.cosign/signature` annotation;
 * - Sigstore bundles (keyless) made by `sigstore`'s own `attest` against @sigstore/mock's test
 *   Fulcio (with its CT log) and Rekor, served on 127.0.0.1, and attached to the image as an OCI
 *   1.1 referrer (artifactType `application/vnd.dev.sigstore.bundle.v0.3+json`, `subject` the
 *   image) listed in the referrers tag schema `sha256-<hex>` (the registry has no referrers API),
 *   as `actions/attest-build-provenance` with `push-to-registry` stores them.
 * Everything is pushed through the OCI Distribution API (blob upload, manifest PUT), as cosign does.
 */

const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
const BUNDLE_TYPE = 'application/vnd.dev.sigstore.bundle.v0.3+json';
const EMPTY = Buffer.from('{}');

function bytesOf(view: ArrayBufferView): Buffer {
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength);
}

function digestOf(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** Uploads a blob (POST then PUT with the digest: the spec's monolithic upload in two steps). */
export async function pushBlob(
  host: string,
  repository: string,
  bytes: Buffer,
): Promise<{ digest: string; size: number }> {
  const digest = digestOf(bytes);
  const start = await fetch(`http://${host}/v2/${repository}/blobs/uploads/`, { method: 'POST' });
  if (start.status !== 202) throw new Error(`blob upload refused: ${start.status}`);
  const location = new URL(start.headers.get('location') ?? '', `http://${host}`);
  location.searchParams.set('digest', digest);
  const put = await fetch(location, {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream' },
    body: bytes,
  });
  if (put.status !== 201) throw new Error(`blob PUT refused: ${put.status} ${await put.text()}`);
  return { digest, size: bytes.length };
}

/** PUTs a manifest or index under `reference` (a tag or its digest); returns its digest. */
export async function pushManifest(host: string, repository: string, reference: string, body: object): Promise<string> {
  const bytes = Buffer.from(JSON.stringify(body));
  const mediaType = (body as { mediaType?: string }).mediaType ?? OCI_MANIFEST;
  const put = await fetch(`http://${host}/v2/${repository}/manifests/${reference}`, {
    method: 'PUT',
    headers: { 'content-type': mediaType },
    body: bytes,
  });
  if (put.status !== 201) throw new Error(`manifest PUT refused: ${put.status} ${await put.text()}`);
  return digestOf(bytes);
}

export function generateKey(): { privateKey: KeyObject; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

/** The simple-signing payload cosign writes for `host/repository@digest`. */
export function simpleSigningPayload(reference: string, digest: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      critical: {
        identity: { 'docker-reference': reference },
        image: { 'docker-manifest-digest': digest },
        type: 'cosign container image signature',
      },
      optional: null,
    }),
  );
}

/**
 * Signs `digest` as `cosign sign --key` does and pushes the signature to its `.sig` tag.
 * `names` is the digest the payload names (another image's, for the attack); `tamper` changes the
 * payload after signing.
 */
export async function cosignSign(
  host: string,
  repository: string,
  digest: string,
  privateKey: KeyObject | string,
  options: { names?: string; tamper?: boolean } = {},
): Promise<void> {
  const key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey;
  const payload = simpleSigningPayload(`${host}/${repository}`, options.names ?? digest);
  const signature = sign('sha256', payload, key).toString('base64');
  const stored = options.tamper
    ? Buffer.from(
        payload.toString('utf8').replace('cosign container image signature', 'cosign container image signaturE'),
      )
    : payload;
  const layer = await pushBlob(host, repository, stored);
  const config = await pushBlob(host, repository, EMPTY);
  await pushManifest(host, repository, `${digest.replace(':', '-')}.sig`, {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
    layers: [
      {
        mediaType: 'application/vnd.dev.cosign.simplesigning.v1+json',
        ...layer,
        annotations: { 'dev.cosignproject.cosign/signature': signature },
      },
    ],
  });
}

/** Claims of a GitHub Actions OIDC token, as Fulcio maps them into certificate extensions. */
/** GitHub Actions' OIDC issuer, as Fulcio writes it in a keyless certificate. */
export const ACTIONS_ISSUER = 'https://token.actions.githubusercontent.com';
/** The identity (Fulcio's SAN) of acme/hello's release workflow on main. */
export const RELEASE_WORKFLOW = 'https://github.com/acme/hello/.github/workflows/release.yml@refs/heads/main';

/**
 * SLSA v1 provenance as GitHub's workflow build type writes it (https://slsa.dev/spec/v1.0/provenance,
 * https://actions.github.io/buildtypes/workflow/v1), for acme/hello's release workflow building
 * `commit`; with `run`, the run's log as its invocation id.
 */
export function releaseProvenance(commit: string, run?: string): Record<string, unknown> {
  const builder = { id: 'https://github.com/actions/runner/github-hosted' };
  return {
    buildDefinition: {
      buildType: 'https://actions.github.io/buildtypes/workflow/v1',
      externalParameters: {
        workflow: {
          ref: 'refs/heads/main',
          repository: 'https://github.com/acme/hello',
          path: '.github/workflows/release.yml',
        },
      },
      resolvedDependencies: [
        { uri: 'git+https://github.com/acme/hello@refs/heads/main', digest: { gitCommit: commit } },
      ],
    },
    runDetails: run
      ? { builder, metadata: { invocationId: `https://github.com/acme/hello/actions/runs/${run}/attempts/1` } }
      : { builder },
  };
}

export interface WorkflowClaims {
  /** The SAN Fulcio writes: the job's workflow ref URL. */
  sub: string;
  iss?: string;
  repository?: string;
  sha?: string;
  ref?: string;
  workflow_ref?: string;
  run_id?: string;
  run_attempt?: string;
}

/** A test Fulcio and Rekor on 127.0.0.1, the trusted root that names them, and `attest` through them. */
export class SigstoreMock {
  #server?: Server;
  #url = '';
  #root: object = {};

  async start(): Promise<void> {
    const pair = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const ctlog = await initializeCTLog(pair());
    const ca = await initializeCA(pair(), ctlog);
    const tlog = await initializeTLog('http://127.0.0.1', pair());
    const handlers = [fulcioHandler(ca), rekorHandler(tlog)];
    this.#server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const handler = handlers.find((candidate) => request.url?.startsWith(candidate.path));
        if (!handler) {
          response.writeHead(404).end();
          return;
        }
        void handler.fn(Buffer.concat(chunks).toString()).then((result) => {
          response.writeHead(result.statusCode, { 'content-type': result.contentType ?? 'application/json' });
          response.end(result.response);
        });
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.#url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const key = (raw: Buffer) => ({
      rawBytes: raw.toString('base64'),
      keyDetails: 'PKIX_ECDSA_P256_SHA_256',
      validFor: { start: since },
    });
    // The trusted root's JSON form (sigstore/protobuf-specs, dev.sigstore.trustroot.v1.TrustedRoot).
    this.#root = {
      mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
      tlogs: [
        {
          baseUrl: this.#url,
          hashAlgorithm: 'SHA2_256',
          publicKey: key(tlog.publicKey),
          logId: { keyId: createHash('sha256').update(tlog.publicKey).digest('base64') },
        },
      ],
      certificateAuthorities: [
        {
          subject: { organization: 'sigstore.mock', commonName: 'sigstore' },
          uri: this.#url,
          certChain: { certificates: [{ rawBytes: bytesOf(ca.rootCertificate).toString('base64') }] },
          validFor: { start: since },
        },
      ],
      ctlogs: [
        {
          baseUrl: this.#url,
          hashAlgorithm: 'SHA2_256',
          publicKey: key(ctlog.publicKey),
          logId: { keyId: bytesOf(ctlog.logID).toString('base64') },
        },
      ],
      timestampAuthorities: [],
    };
  }

  /** The trusted root an operator would mount for this Fulcio and Rekor. */
  trustedRoot(): object {
    return this.#root;
  }

  /** An in-toto statement about `digests`, signed keyless as the workflow `claims` describe. */
  async attest(digests: string[], predicateType: string, predicate: object, claims: WorkflowClaims): Promise<object> {
    const statement = {
      _type: 'https://in-toto.io/Statement/v1',
      subject: digests.map((digest) => ({ name: 'image', digest: { sha256: digest.replace(/^sha256:/, '') } })),
      predicateType,
      predicate,
    };
    const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    // The test Fulcio reads the token's claims without checking its signature (@sigstore/mock's README).
    const token = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ iss: 'https://token.actions.githubusercontent.com', ...claims })}.unsigned`;
    return (await attest(Buffer.from(JSON.stringify(statement)), 'application/vnd.in-toto+json', {
      fulcioURL: this.#url,
      rekorURL: this.#url,
      identityProvider: { getToken: () => Promise.resolve(token) },
      // Rekor v1 "intoto" entries: the kind @sigstore/mock's Rekor fills in as the real one does.
      legacyCompatibility: true,
    })) as object;
  }

  close(): void {
    this.#server?.close();
  }
}

/** Attaches `bundle` to `digest` as a referrer and lists it in the referrers tag `sha256-<hex>`. */
export async function pushBundle(host: string, repository: string, digest: string, bundle: object): Promise<void> {
  const layer = await pushBlob(host, repository, Buffer.from(JSON.stringify(bundle)));
  const config = await pushBlob(host, repository, EMPTY);
  const manifest = {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    artifactType: BUNDLE_TYPE,
    config: { mediaType: 'application/vnd.oci.empty.v1+json', ...config },
    layers: [{ mediaType: BUNDLE_TYPE, ...layer }],
    subject: { mediaType: OCI_MANIFEST, digest, size: 0 },
  };
  const referrer = await pushManifest(host, repository, digestOf(Buffer.from(JSON.stringify(manifest))), manifest);
  const tag = digest.replace(':', '-');
  const current = await fetch(`http://${host}/v2/${repository}/manifests/${tag}`, { headers: { accept: OCI_INDEX } });
  const manifests = current.ok ? ((await current.json()) as { manifests: object[] }).manifests : [];
  await pushManifest(host, repository, tag, {
    schemaVersion: 2,
    mediaType: OCI_INDEX,
    manifests: [
      ...manifests,
      {
        mediaType: OCI_MANIFEST,
        artifactType: BUNDLE_TYPE,
        digest: referrer,
        size: Buffer.byteLength(JSON.stringify(manifest)),
      },
    ],
  });
}
