/**
 * `npx tsx bench/verify.ts`: what the verification gate adds to one promoted image, against Debian's
 * `docker-registry` (no referrers API, so the referrers tag schema is read) and a test Fulcio and
 * Rekor on 127.0.0.1.
 *
 * 1. push VERIFY_IMAGES images (default 20), each with a cosign signature (its `.sig` tag) and a
 *    Sigstore bundle of SLSA provenance (a referrer listed in its `sha256-<hex>` tag)
 * 2. per image and policy, a fresh registry client (no token or manifest cache carried over, as a
 *    new job starts), time the gate's reads and checks (src/adapters/registry/signatures.ts) and
 *    decision (src/planners/verify-plan.ts), and count its registry requests by kind
 * 3. print p50/p90/max per policy: none (the default: nothing read), `keys` (a cosign key),
 *    `signers` + `provenance` (keyless, checked against the trusted root), and both
 * A promotion of k images costs k times these figures; a re-plan after a conflict reads nothing
 * again (the gate keeps its results per digest for the job). Figures only; it stops by itself.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RegistryClient } from '../src/adapters/registry/client.js';
import { loadTrustedRoot, readVerifyEvidence } from '../src/adapters/registry/signatures.js';
import { planVerification, type VerifyPolicy } from '../src/planners/verify-plan.js';
import { startRegistry } from '../test/support/oci-images.js';
import { cosignSign, generateKey, pushBundle, SigstoreMock } from '../test/support/signing.js';
import { banner, ms, summarize } from './support/stats.js';

const IMAGES = Number(process.env.VERIFY_IMAGES ?? 20);
const RELEASE = 'https://github.com/acme/hello/.github/workflows/release.yml@refs/heads/main';
const ISSUER = 'https://token.actions.githubusercontent.com';

async function main(): Promise<void> {
  banner(`verification gate: ${IMAGES} images, docker-registry on 127.0.0.1`);
  const registry = await startRegistry();
  const sigstore = new SigstoreMock();
  await sigstore.start();
  const roots = mkdtempSync(join(tmpdir(), 'escalator-bench-roots-'));
  writeFileSync(join(roots, 'bench.json'), JSON.stringify(sigstore.trustedRoot()));
  const key = generateKey();
  try {
    const digests: string[] = [];
    for (let i = 0; i < IMAGES; i++) {
      const digest = await registry.push('bench/app', `1.0.${i}`, {
        seed: i,
        platforms: ['linux/amd64', 'linux/arm64'],
      });
      await cosignSign(registry.host, 'bench/app', digest, key.privateKey);
      const bundle = await sigstore.attest(
        [digest],
        'https://slsa.dev/provenance/v1',
        {},
        { sub: RELEASE, repository: 'acme/hello' },
      );
      await pushBundle(registry.host, 'bench/app', digest, bundle);
      digests.push(digest);
    }
    const signers = [{ issuer: ISSUER, subject: RELEASE, repository: 'acme/hello' }];
    const policies: Array<[string, VerifyPolicy | undefined]> = [
      ['no policy', undefined],
      ['keys (cosign public key)', { keys: [key.publicPem], signers: [], provenance: false }],
      ['signers + provenance (keyless)', { keys: [], signers, trustedRoot: 'bench', provenance: true }],
      ['keys + signers + provenance', { keys: [key.publicPem], signers, trustedRoot: 'bench', provenance: true }],
    ];
    console.log('');
    console.log(`${'policy'.padEnd(32)} ${'requests/image'.padEnd(34)} time per image`);
    for (const [name, policy] of policies) {
      const times: number[] = [];
      const counts: number[] = [];
      const kinds = new Map<string, number>();
      let failed = 0;
      for (const digest of digests) {
        let requests = 0;
        const client = new RegistryClient({
          plainHttp: () => true,
          onRequest: (info) => {
            requests++;
            kinds.set(info.kind, (kinds.get(info.kind) ?? 0) + 1);
          },
        });
        const started = performance.now();
        if (policy) {
          const trust = policy.trustedRoot ? await loadTrustedRoot(roots, policy.trustedRoot) : undefined;
          const evidence = await readVerifyEvidence(client, `${registry.host}/bench/app`, digest, policy, trust);
          if (!planVerification(policy, evidence, 'prod').passed) failed++;
        }
        times.push(performance.now() - started);
        counts.push(requests);
      }
      const t = summarize(times);
      const c = summarize(counts);
      const byKind = [...kinds].map(([kind, n]) => `${kind} ${(n / digests.length).toFixed(1)}`).join(', ') || 'none';
      console.log(
        `${name.padEnd(32)} ${`${c.mean.toFixed(1)} (${byKind})`.padEnd(34)} p50 ${ms(t.p50).padStart(8)}  p90 ${ms(t.p90).padStart(8)}  max ${ms(t.max).padStart(8)}${failed ? `  (${failed} refused!)` : ''}`,
      );
      if (failed) process.exitCode = 1;
    }
  } finally {
    registry.close();
    sigstore.close();
    rmSync(roots, { recursive: true, force: true });
  }
}

await main();
