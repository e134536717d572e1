import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { bundleFromJSON } from '@sigstore/bundle';
import { TrustedRoot } from '@sigstore/protobuf-specs';
import { toSignedEntity, toTrustMaterial, Verifier, type TrustMaterial } from '@sigstore/verify';
import type {
  BundleFinding,
  CosignFinding,
  ProvenanceFacts,
  SignerIdentity,
  VerifyEvidence,
  VerifyPolicy,
} from '../../planners/verify-plan.js';
import { RegistryError, type RegistryClient } from './client.js';

/**
 * What an image carries, read through the registry client (its budgets, credentials and refusal
 * of internal addresses) and checked cryptographically; the decision is the pure planner's
 * (src/planners/verify-plan.ts).
 *
 * - Cosign signatures (https://github.com/sigstore/cosign/blob/main/specs/SIGNATURE_SPEC.md):
 *   the tag `sha256-<hex>.sig` holds an OCI manifest whose layers are simple-signing payloads
 *   (`application/vnd.dev.cosign.simplesigning.v1+json`, the payload of containers-signature(5)
 *   naming the image in `critical.image.docker-manifest-digest`), each with its base64 signature
 *   in the annotation `dev.cosignproject.cosign/signature`. The signature is checked over the
 *   payload bytes with each configured key (node:crypto: ECDSA P-256 and RSA with SHA-256, Ed25519).
 * - Sigstore bundles: the image's referrers (OCI Distribution 1.1 referrers API, or the referrers
 *   tag schema `sha256-<hex>` where the registry has no such API) whose artifact type is a
 *   Sigstore bundle (`application/vnd.dev.sigstore.bundle…`), as `actions/attest-build-provenance`
 *   with `push-to-registry` and `cosign attest --new-bundle-format` store them. Each bundle is
 *   verified by @sigstore/verify against the operator's trusted root: certificate chain, SCTs,
 *   the transparency log's signed inclusion promise and the signature (offline: nothing is fetched).
 */

export const COSIGN_SIMPLE_SIGNING = 'application/vnd.dev.cosign.simplesigning.v1+json';
export const COSIGN_SIGNATURE_ANNOTATION = 'dev.cosignproject.cosign/signature';
export const SIGSTORE_BUNDLE_PREFIX = 'application/vnd.dev.sigstore.bundle';
const IN_TOTO = 'application/vnd.in-toto+json';

/** At most this many signature layers and bundles are read per digest: a bounded number of requests. */
export const MAX_SIGNATURES = 8;
export const MAX_BUNDLES = 8;
const MAX_TEXT = 512;

/** The signature tag of a digest (cosign's tag-based discovery). */
export function signatureTag(digest: string): string {
  return `${digest.replace(':', '-')}.sig`;
}

/** The fallback referrers tag of a digest (OCI Distribution 1.1, "Referrers Tag Schema"). */
export function referrersTag(digest: string): string {
  return digest.replace(':', '-');
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value.slice(0, MAX_TEXT) : undefined;
}

function field(value: unknown, key: string): unknown {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

/** A JSON key read case-insensitively, as Go's encoding/json (which cosign uses) reads it. */
function fieldInsensitive(value: unknown, key: string): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const entry = Object.entries(value).find(([name]) => name.toLowerCase() === key);
  return entry?.[1];
}

/** Checks one signature with one key: ECDSA and RSA over SHA-256, Ed25519 over the bytes. */
function verifiesWith(key: KeyObject, payload: Buffer, signature: Buffer): boolean {
  try {
    return key.asymmetricKeyType === 'ed25519'
      ? verify(null, payload, key, signature)
      : verify('sha256', payload, key, signature);
  } catch {
    return false;
  }
}

async function readCosign(
  client: RegistryClient,
  repository: string,
  digest: string,
  keys: readonly string[],
  notes: string[],
): Promise<CosignFinding[] | null> {
  const manifest = await client.manifest(repository, signatureTag(digest));
  if (!manifest) return null;
  if ((manifest.body.layers?.length ?? 0) > MAX_SIGNATURES)
    notes.push(
      `${manifest.body.layers?.length} signatures in the signature tag; the first ${MAX_SIGNATURES} were read`,
    );
  const parsed = keys.map((pem) => createPublicKey(pem));
  const findings: CosignFinding[] = [];
  for (const layer of (manifest.body.layers ?? []).slice(0, MAX_SIGNATURES)) {
    if (layer.mediaType !== COSIGN_SIMPLE_SIGNING) {
      findings.push({
        kind: 'unreadable',
        reason: `a layer of type ${text(layer.mediaType) ?? 'none'}, not a simple-signing payload`,
      });
      continue;
    }
    const signature = layer.annotations?.[COSIGN_SIGNATURE_ANNOTATION];
    if (!signature) {
      findings.push({ kind: 'unreadable', reason: `a payload without the ${COSIGN_SIGNATURE_ANNOTATION} annotation` });
      continue;
    }
    const payload = await client.blob(repository, layer.digest);
    let named: string | undefined;
    try {
      const json = JSON.parse(payload.toString('utf8')) as unknown;
      named = text(
        fieldInsensitive(fieldInsensitive(fieldInsensitive(json, 'critical'), 'image'), 'docker-manifest-digest'),
      );
    } catch {
      findings.push({ kind: 'unreadable', reason: 'a payload that is not JSON' });
      continue;
    }
    const key = parsed.findIndex((candidate) => verifiesWith(candidate, payload, Buffer.from(signature, 'base64')));
    if (key < 0) findings.push({ kind: 'no-key' });
    else if (named !== digest) findings.push({ kind: 'other-digest', digest: named ?? 'no digest', key });
    else findings.push({ kind: 'signed', key });
  }
  return findings;
}

/** The DER value of a Fulcio extension: a UTF8String (tag 12), or, for the legacy ones, raw bytes. */
function extensionText(value: Buffer): string | undefined {
  if (value.length >= 2 && value[0] === 0x0c) {
    let length = value[1]!;
    let offset = 2;
    if (length & 0x80) {
      const bytes = length & 0x7f;
      if (bytes < 1 || bytes > 2 || value.length < 2 + bytes) return undefined;
      length = bytes === 1 ? value[2]! : (value[2]! << 8) | value[3]!;
      offset = 2 + bytes;
    }
    return text(value.subarray(offset, offset + length).toString('utf8'));
  }
  return text(value.toString('utf8'));
}

const OID = {
  sourceRepositoryUri: '1.3.6.1.4.1.57264.1.12',
  sourceRepositoryDigest: '1.3.6.1.4.1.57264.1.13',
  sourceRepositoryRef: '1.3.6.1.4.1.57264.1.14',
  buildConfigUri: '1.3.6.1.4.1.57264.1.18',
  runInvocationUri: '1.3.6.1.4.1.57264.1.21',
} as const;

function ownerRepo(url: string | undefined): string | undefined {
  const match = url ? /^(?:git\+)?https:\/\/github\.com\/([^/@\s]+\/[^/@\s]+?)(?:\.git)?(?:@.*)?$/.exec(url) : null;
  return match?.[1];
}

function identityOf(signer: ReturnType<Verifier['verify']>): SignerIdentity {
  const extensions = new Map<string, string>();
  for (const pair of signer.identity?.oids ?? []) {
    const value = extensionText(Buffer.from(pair.value));
    if (pair.oid && value !== undefined) extensions.set(pair.oid.id.join('.'), value);
  }
  const repository = ownerRepo(extensions.get(OID.sourceRepositoryUri));
  const issuer = text(signer.identity?.extensions?.issuer);
  const commit = extensions.get(OID.sourceRepositoryDigest);
  const ref = extensions.get(OID.sourceRepositoryRef);
  const workflow = extensions.get(OID.buildConfigUri);
  const run = extensions.get(OID.runInvocationUri);
  return {
    subject: text(signer.identity?.subjectAlternativeName) ?? 'no subject',
    ...(issuer ? { issuer } : {}),
    ...(repository ? { repository } : {}),
    ...(commit ? { commit } : {}),
    ...(ref ? { ref } : {}),
    ...(workflow ? { workflow } : {}),
    ...(run ? { run } : {}),
  };
}

/** What a SLSA v1 provenance predicate says, as GitHub's workflow build type writes it. */
function provenanceOf(predicate: unknown): ProvenanceFacts {
  const definition = field(predicate, 'buildDefinition');
  const workflow = field(field(definition, 'externalParameters'), 'workflow');
  const dependencies = field(definition, 'resolvedDependencies');
  const first = Array.isArray(dependencies) ? (dependencies[0] as unknown) : undefined;
  const run = field(predicate, 'runDetails');
  const repository = ownerRepo(text(field(workflow, 'repository'))) ?? ownerRepo(text(field(first, 'uri')));
  const commit = text(field(field(first, 'digest'), 'gitCommit'));
  const path = text(field(workflow, 'path'));
  const builder = text(field(field(run, 'builder'), 'id'));
  const invocation = text(field(field(run, 'metadata'), 'invocationId'));
  return {
    ...(builder ? { builder } : {}),
    ...(repository ? { repository } : {}),
    ...(commit ? { commit } : {}),
    ...(path ? { workflow: path } : {}),
    ...(invocation ? { run: invocation } : {}),
  };
}

function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = error && typeof error === 'object' && 'code' in error ? String(error.code) : undefined;
  return (code && !message.includes(code) ? `${code}: ${message}` : message).slice(0, MAX_TEXT);
}

/** Verifies one bundle: the library checks everything cryptographic; the statement is read here. */
export function checkBundle(json: unknown, trust: TrustMaterial): BundleFinding {
  try {
    const bundle = bundleFromJSON(json);
    const signer = new Verifier(trust).verify(toSignedEntity(bundle));
    if (bundle.content.$case !== 'dsseEnvelope')
      return { kind: 'failed', reason: 'a message signature, not an in-toto attestation: it names no image' };
    const envelope = bundle.content.dsseEnvelope;
    if (envelope.payloadType !== IN_TOTO)
      return { kind: 'failed', reason: `a DSSE payload of type ${text(envelope.payloadType) ?? 'none'}, not in-toto` };
    const statement = JSON.parse(envelope.payload.toString('utf8')) as unknown;
    const subjects = field(statement, 'subject');
    const digests = Array.isArray(subjects)
      ? subjects
          .slice(0, 64)
          .map((subject) => text(field(field(subject, 'digest'), 'sha256')))
          .filter((hex): hex is string => hex !== undefined)
      : [];
    const predicateType = text(field(statement, 'predicateType')) ?? 'none';
    return {
      kind: 'verified',
      identity: identityOf(signer),
      predicateType,
      subjects: digests,
      ...(/^https:\/\/slsa\.dev\/provenance\/v1$/.test(predicateType)
        ? { provenance: provenanceOf(field(statement, 'predicate')) }
        : {}),
    };
  } catch (error) {
    return { kind: 'failed', reason: reasonOf(error) };
  }
}

async function readBundles(
  client: RegistryClient,
  repository: string,
  digest: string,
  trust: TrustMaterial,
  notes: string[],
): Promise<BundleFinding[]> {
  const index =
    (await client.referrers(repository, digest)) ?? (await client.manifest(repository, referrersTag(digest)));
  if (!index) return [];
  const bundles = (index.body.manifests ?? []).filter((entry) =>
    (entry.artifactType ?? '').startsWith(SIGSTORE_BUNDLE_PREFIX),
  );
  // Reading fewer can only miss a proof, never invent one: what is left unread is said, not refused.
  if (bundles.length > MAX_BUNDLES)
    notes.push(`${bundles.length} Sigstore bundles refer to this digest; the last ${MAX_BUNDLES} listed were read`);
  const findings: BundleFinding[] = [];
  for (const entry of bundles.slice(-MAX_BUNDLES)) {
    const manifest = await client.manifest(repository, entry.digest);
    const layer = manifest?.body.layers?.[0];
    if (!layer) {
      findings.push({ kind: 'failed', reason: `the referrer ${entry.digest} holds no bundle layer` });
      continue;
    }
    const bytes = await client.blob(repository, layer.digest);
    let json: unknown;
    try {
      json = JSON.parse(bytes.toString('utf8'));
    } catch {
      findings.push({ kind: 'failed', reason: `the bundle ${layer.digest} is not JSON` });
      continue;
    }
    findings.push(checkBundle(json, trust));
  }
  return findings;
}

/**
 * Everything the policy asks about, read for one digest. A registry that does not answer throws
 * (the job retries); what was read but is wrong is a finding; what cannot be checked at all (no
 * trusted root) is a problem, so the gate fails closed.
 */
export async function readVerifyEvidence(
  client: RegistryClient,
  repository: string,
  digest: string,
  policy: VerifyPolicy,
  trust: TrustMaterial | string | undefined,
): Promise<VerifyEvidence> {
  if (!/^sha256:[0-9a-f]{64}$/.test(digest))
    throw new RegistryError(`${digest} is not a sha256 digest; Escalator verifies sha256 digests only`, 'invalid');
  const problems: string[] = [];
  const notes: string[] = [];
  const cosign = policy.keys.length > 0 ? await readCosign(client, repository, digest, policy.keys, notes) : null;
  let bundles: BundleFinding[] = [];
  if (policy.signers.length > 0) {
    if (typeof trust === 'string' || trust === undefined)
      problems.push(trust ?? `no trusted root ${policy.trustedRoot ?? ''} is loaded, so no bundle can be checked`);
    else bundles = await readBundles(client, repository, digest, trust, notes);
  }
  return { repository, digest, cosign, bundles, problems, ...(notes.length ? { notes } : {}) };
}

const roots = new Map<string, { mtimeMs: number; trust: TrustMaterial }>();

/**
 * The trusted root `<name>.json` the operator mounted in `dir` (ESCALATOR_SIGSTORE_TRUSTED_ROOTS),
 * parsed once and read again when the file changes. A string says why there is none (the gate
 * then fails with it); the name is checked by the configuration, and a name that is not a plain
 * file name is refused here again.
 */
export async function loadTrustedRoot(dir: string | undefined, name: string): Promise<TrustMaterial | string> {
  if (!dir)
    return `this Escalator has no ESCALATOR_SIGSTORE_TRUSTED_ROOTS, so the trusted root ${name} cannot be read; ask the operator to mount it`;
  if (basename(name) !== name || name.startsWith('.')) return `the trusted root name ${name} is not a file name`;
  const path = join(dir, `${name}.json`);
  try {
    const info = await stat(path);
    const cached = roots.get(path);
    if (cached && cached.mtimeMs === info.mtimeMs) return cached.trust;
    if (info.size > 1024 * 1024) return `the trusted root ${name} is larger than 1 MiB`;
    const trust = toTrustMaterial(TrustedRoot.fromJSON(JSON.parse(await readFile(path, 'utf8'))));
    if (roots.size >= 32) roots.delete(roots.keys().next().value as string);
    roots.set(path, { mtimeMs: info.mtimeMs, trust });
    return trust;
  } catch (error) {
    return `the trusted root ${name} cannot be read from ESCALATOR_SIGSTORE_TRUSTED_ROOTS (${(error as NodeJS.ErrnoException).code ?? 'not a Sigstore trusted root'}); ask the operator to mount ${name}.json there`;
  }
}
