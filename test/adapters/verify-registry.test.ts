import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RegistryClient } from '../../src/adapters/registry/client.js';
import { loadTrustedRoot, readVerifyEvidence } from '../../src/adapters/registry/signatures.js';
import {
  planVerification,
  renderSignedSection,
  renderVerifyCheck,
  type VerifyPolicy,
} from '../../src/planners/verify-plan.js';
import { startRegistry, type LocalRegistry } from '../support/oci-images.js';
import {
  ACTIONS_ISSUER as ISSUER,
  cosignSign,
  generateKey,
  pushBundle,
  releaseProvenance,
  RELEASE_WORKFLOW as RELEASE,
  SigstoreMock,
  type WorkflowClaims,
} from '../support/signing.js';

const COMMIT = 'c0ffee'.padEnd(40, '0');
const RELEASE_CLAIMS: WorkflowClaims = {
  sub: RELEASE,
  repository: 'acme/hello',
  sha: COMMIT,
  ref: 'refs/heads/main',
  workflow_ref: 'acme/hello/.github/workflows/release.yml@refs/heads/main',
  run_id: '42',
  run_attempt: '1',
};
const SLSA = 'https://slsa.dev/provenance/v1';
const PREDICATE = releaseProvenance(COMMIT, '42');

/**
 * The verification gate against Debian's `docker-registry` (CNCF Distribution 2.8, no referrers
 * API): images pushed with skopeo, signatures made in the test (test/support/signing.ts). Each
 * case asserts the decision and the `escalator/verify` check run it produces.
 */
describe('verification against a real registry', () => {
  let registry: LocalRegistry;
  let sigstore: SigstoreMock;
  let roots: string;
  const requests: string[] = [];
  const client = new RegistryClient({ plainHttp: () => true, onRequest: (info) => requests.push(info.kind) });
  const good = generateKey();
  const other = generateKey();
  const keyed: VerifyPolicy = { keys: [good.publicPem], signers: [], provenance: false };
  const keyless: VerifyPolicy = {
    keys: [],
    signers: [{ issuer: ISSUER, subject: RELEASE, repository: 'acme/hello' }],
    trustedRoot: 'test-root',
    provenance: true,
  };

  beforeAll(async () => {
    registry = await startRegistry();
    sigstore = new SigstoreMock();
    await sigstore.start();
    roots = mkdtempSync(join(tmpdir(), 'escalator-roots-'));
    writeFileSync(join(roots, 'test-root.json'), JSON.stringify(sigstore.trustedRoot()));
  }, 60_000);
  afterAll(() => {
    registry?.close();
    sigstore?.close();
    if (roots) rmSync(roots, { recursive: true, force: true });
  });

  async function decide(repository: string, digest: string, policy: VerifyPolicy) {
    const trust = policy.trustedRoot ? await loadTrustedRoot(roots, policy.trustedRoot) : undefined;
    const evidence = await readVerifyEvidence(client, `${registry.host}/${repository}`, digest, policy, trust);
    const decision = planVerification(policy, evidence, 'prod');
    const check = renderVerifyCheck('prod', [{ image: `${registry.host}/${repository}`, tag: '1.0.0', decision }]);
    return { decision, check };
  }

  describe('cosign signatures with a public key', () => {
    it('passes a signature of the digest by the key', { timeout: 60_000 }, async () => {
      const digest = await registry.push('team/signed', '1.0.0', { seed: 1 });
      await cosignSign(registry.host, 'team/signed', digest, good.privateKey);
      const { decision, check } = await decide('team/signed', digest, keyed);
      expect(decision.passed).toBe(true);
      expect(decision.found).toEqual(['a signature of this digest by cosign key 1 of 1']);
      expect(check.conclusion).toBe('success');
      expect(check.title).toBe('verify: 1 image satisfy the policy of prod');
    });

    it('refuses a signature by another key, and says to add the key or sign', { timeout: 60_000 }, async () => {
      const digest = await registry.push('team/wrong-key', '1.0.0', { seed: 2 });
      await cosignSign(registry.host, 'team/wrong-key', digest, other.privateKey);
      const { decision, check } = await decide('team/wrong-key', digest, keyed);
      expect(decision.passed).toBe(false);
      expect(decision.found).toEqual(['a signature that none of the keys verifies']);
      expect(check).toMatchObject({ conclusion: 'failure', title: 'verify: 1 image not written into prod' });
      expect(check.summary).toContain(
        `- sign \`${registry.host}/team/wrong-key@${digest}\` with the key \`prod\` trusts (\`cosign sign --key cosign.key ${registry.host}/team/wrong-key@${digest}\`), or add its public key to \`environments[].verify.keys\``,
      );
    });

    it('refuses a good signature of another digest copied under this one', { timeout: 60_000 }, async () => {
      const digest = await registry.push('team/copied', '1.0.0', { seed: 3 });
      const elsewhere = await registry.push('team/copied', '0.9.0', { seed: 4 });
      await cosignSign(registry.host, 'team/copied', digest, good.privateKey, { names: elsewhere });
      const { decision, check } = await decide('team/copied', digest, keyed);
      expect(decision.passed).toBe(false);
      expect(decision.found).toEqual([`a signature whose payload names another image, \`${elsewhere}\``]);
      expect(check.conclusion).toBe('failure');
    });

    it('refuses an image without a signature tag', { timeout: 60_000 }, async () => {
      const digest = await registry.push('team/unsigned', '1.0.0', { seed: 5 });
      const { decision, check } = await decide('team/unsigned', digest, keyed);
      expect(decision.passed).toBe(false);
      expect(decision.found).toEqual([`no signature tag \`sha256-${digest.slice(7)}.sig\``]);
      expect(check.summary).toContain('**Looked for**');
      expect(check.summary).toContain(`in the tag \`sha256-${digest.slice(7)}.sig\``);
    });

    it('refuses a payload changed after it was signed', { timeout: 60_000 }, async () => {
      const digest = await registry.push('team/tampered', '1.0.0', { seed: 6 });
      await cosignSign(registry.host, 'team/tampered', digest, good.privateKey, { tamper: true });
      const { decision } = await decide('team/tampered', digest, keyed);
      expect(decision.passed).toBe(false);
      expect(decision.found).toEqual(['a signature that none of the keys verifies']);
    });

    it('verifies the index digest of a multi-arch image', { timeout: 60_000 }, async () => {
      const digest = await registry.push('team/multi', '1.0.0', { seed: 7, platforms: ['linux/amd64', 'linux/arm64'] });
      await cosignSign(registry.host, 'team/multi', digest, good.privateKey);
      expect((await client.resolve(`${registry.host}/team/multi`, '1.0.0'))?.mediaType).toBe(
        'application/vnd.oci.image.index.v1+json',
      );
      expect((await decide('team/multi', digest, keyed)).decision.passed).toBe(true);
    });
  });

  describe('Sigstore bundles (keyless) and SLSA provenance', () => {
    it(
      'passes provenance of the digest by the release workflow, and shows who signed',
      { timeout: 60_000 },
      async () => {
        const digest = await registry.push('team/attested', '1.0.0', { seed: 8 });
        await pushBundle(
          registry.host,
          'team/attested',
          digest,
          await sigstore.attest([digest], SLSA, PREDICATE, RELEASE_CLAIMS),
        );
        const { decision, check } = await decide('team/attested', digest, keyless);
        expect(decision.passed).toBe(true);
        expect(check.conclusion).toBe('success');
        expect(decision.signed[0]?.identity).toMatchObject({
          subject: RELEASE,
          issuer: ISSUER,
          repository: 'acme/hello',
          commit: COMMIT,
        });
        expect(renderSignedSection([{ image: `${registry.host}/team/attested`, digest, decision }])).toBe(
          [
            '#### Signed',
            `- \`${registry.host}/team/attested\`@\`${digest}\``,
            `  - provenance by [\`${RELEASE}\`](${RELEASE}) · issuer \`${ISSUER}\` · source [\`acme/hello\`](https://github.com/acme/hello) · commit [\`${COMMIT.slice(0, 12)}\`](https://github.com/acme/hello/commit/${COMMIT}) · workflow [\`.github/workflows/release.yml\`](https://github.com/acme/hello/.github/workflows/release.yml@refs/heads/main) · run [\`log\`](https://github.com/acme/hello/actions/runs/42/attempts/1)`,
          ].join('\n'),
        );
      },
    );

    it('refuses a bundle signed by another workflow', { timeout: 60_000 }, async () => {
      const digest = await registry.push('team/other-workflow', '1.0.0', { seed: 9 });
      const claims = {
        ...RELEASE_CLAIMS,
        sub: 'https://github.com/acme/hello/.github/workflows/pr.yml@refs/pull/7/merge',
      };
      await pushBundle(
        registry.host,
        'team/other-workflow',
        digest,
        await sigstore.attest([digest], SLSA, PREDICATE, claims),
      );
      const { decision, check } = await decide('team/other-workflow', digest, keyless);
      expect(decision.passed).toBe(false);
      expect(decision.found).toEqual([
        `SLSA provenance signed by \`${claims.sub}\` (issuer \`${ISSUER}\`) in \`acme/hello\`, an identity the policy does not name`,
      ]);
      expect(check.summary).toContain('fix the identity in `environments[].verify.signers`');
    });

    it('refuses an attestation whose subject is another image', { timeout: 60_000 }, async () => {
      const digest = await registry.push('team/other-subject', '1.0.0', { seed: 10 });
      const elsewhere = await registry.push('team/other-subject', '0.9.0', { seed: 11 });
      await pushBundle(
        registry.host,
        'team/other-subject',
        digest,
        await sigstore.attest([elsewhere], SLSA, PREDICATE, RELEASE_CLAIMS),
      );
      const { decision } = await decide('team/other-subject', digest, keyless);
      expect(decision.passed).toBe(false);
      expect(decision.found).toEqual([
        `SLSA provenance signed by \`${RELEASE}\` (issuer \`${ISSUER}\`) in \`acme/hello\` whose subject is another image (\`${elsewhere}\`)`,
      ]);
    });

    it('refuses a bundle whose certificate does not chain to the trusted root', { timeout: 60_000 }, async () => {
      const digest = await registry.push('team/foreign-root', '1.0.0', { seed: 12 });
      const foreign = new SigstoreMock();
      await foreign.start();
      try {
        await pushBundle(
          registry.host,
          'team/foreign-root',
          digest,
          await foreign.attest([digest], SLSA, PREDICATE, RELEASE_CLAIMS),
        );
      } finally {
        foreign.close();
      }
      const { decision } = await decide('team/foreign-root', digest, keyless);
      expect(decision.passed).toBe(false);
      expect(decision.found).toHaveLength(1);
      expect(decision.found[0]).toMatch(/^a Sigstore bundle that does not verify: /);
    });

    it('requires provenance when asked, not just any attestation', { timeout: 60_000 }, async () => {
      const digest = await registry.push('team/sbom-only', '1.0.0', { seed: 13 });
      await pushBundle(
        registry.host,
        'team/sbom-only',
        digest,
        await sigstore.attest([digest], 'https://spdx.dev/Document', {}, RELEASE_CLAIMS),
      );
      const { decision } = await decide('team/sbom-only', digest, keyless);
      expect(decision.passed).toBe(false);
      expect(decision.todo).toContain(
        "attest the build's provenance for this digest (for example `actions/attest-build-provenance` with `push-to-registry: true`)",
      );
      expect((await decide('team/sbom-only', digest, { ...keyless, provenance: false })).decision.passed).toBe(true);
    });

    it('reads bundles through the OCI 1.1 referrers API where the registry has it', { timeout: 60_000 }, async () => {
      const digest = await registry.push('team/referrers-api', '1.0.0', { seed: 15 });
      await pushBundle(
        registry.host,
        'team/referrers-api',
        digest,
        await sigstore.attest([digest], SLSA, PREDICATE, RELEASE_CLAIMS),
      );
      // In front of docker-registry 2.8 (no referrers API): a registry that answers
      // GET /v2/<name>/referrers/<digest> with the image index of referrers (distribution-spec
      // v1.1, "Listing Referrers") and has no referrers tag, so only the API can find the bundle.
      const tag = digest.replace(':', '-');
      const asked: string[] = [];
      const front = createServer((request, response) => {
        const url = request.url ?? '';
        asked.push(url);
        const upstream = url.replace(`/referrers/${digest}`, `/manifests/${tag}`);
        if (url.endsWith(`/manifests/${tag}`)) {
          response.writeHead(404).end();
          return;
        }
        void fetch(`http://${registry.host}${upstream}`, { headers: { accept: request.headers.accept ?? '*/*' } }).then(
          async (answer) => {
            response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? '' });
            response.end(Buffer.from(await answer.arrayBuffer()));
          },
        );
      });
      await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
      try {
        const host = `127.0.0.1:${(front.address() as AddressInfo).port}`;
        const trust = await loadTrustedRoot(roots, 'test-root');
        const evidence = await readVerifyEvidence(client, `${host}/team/referrers-api`, digest, keyless, trust);
        expect(planVerification(keyless, evidence, 'prod').passed).toBe(true);
        expect(asked[0]).toBe(`/v2/team/referrers-api/referrers/${digest}`);
        expect(asked.some((url) => url.endsWith(`/manifests/${tag}`))).toBe(false);
      } finally {
        front.close();
      }
    });

    it('fails closed when the trusted root is not mounted', { timeout: 60_000 }, async () => {
      const digest = await registry.push('team/no-root', '1.0.0', { seed: 14 });
      await pushBundle(
        registry.host,
        'team/no-root',
        digest,
        await sigstore.attest([digest], SLSA, PREDICATE, RELEASE_CLAIMS),
      );
      const { decision } = await decide('team/no-root', digest, { ...keyless, trustedRoot: 'absent' });
      expect(decision.passed).toBe(false);
      expect(decision.found).toContain(
        'the trusted root absent cannot be read from ESCALATOR\\_SIGSTORE\\_TRUSTED\\_ROOTS \\(ENOENT\\); ask the operator to mount absent\\.json there',
      );
    });
  });

  it('never reads signatures from an internal address a repository names', async () => {
    // The image name comes from a repository file; only the operator's credentials file may name such a host.
    const strict = new RegistryClient({ onRequest: (info) => requests.push(`refused ${info.host}`) });
    await expect(
      readVerifyEvidence(strict, '169.254.169.254/latest/app', `sha256:${'e'.repeat(64)}`, keyed, undefined),
    ).rejects.toThrow(
      'Escalator reads a registry on this machine or its private network (169.254.169.254) only when ESCALATOR_REGISTRY_AUTH_FILE names it',
    );
    expect(requests.filter((kind) => kind.startsWith('refused'))).toEqual([]);
  });

  it('reads a bounded number of registry requests per verification', () => {
    // Every read went through the one registry client (its budget, credentials and host rules).
    expect(requests.length).toBeGreaterThan(0);
    expect(new Set(requests)).toEqual(new Set(['manifest', 'blob']));
  });
});
