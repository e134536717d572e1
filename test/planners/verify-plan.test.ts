import { describe, expect, it } from 'vitest';
import {
  matchesSigner,
  planVerification,
  renderSignedSection,
  renderVerifyCheck,
  SIGNED_BUDGET,
  type BundleFinding,
  type VerifyEvidence,
  type VerifyPolicy,
} from '../../src/planners/verify-plan.js';

const DIGEST = `sha256:${'ab'.repeat(32)}`;
const OTHER = 'cd'.repeat(32);
const ISSUER = 'https://token.actions.githubusercontent.com';
const RELEASE = 'https://github.com/acme/hello/.github/workflows/release.yml@refs/heads/main';
const keyless: VerifyPolicy = {
  keys: [],
  signers: [{ issuer: ISSUER, subject: RELEASE, repository: 'acme/hello' }],
  trustedRoot: 'public-good',
  provenance: false,
};
const evidence = (bundles: BundleFinding[], extra: Partial<VerifyEvidence> = {}): VerifyEvidence => ({
  repository: 'ghcr.io/acme/hello',
  digest: DIGEST,
  cosign: null,
  bundles,
  problems: [],
  ...extra,
});
const verified = (
  identity: Partial<{ subject: string; issuer: string; repository: string }>,
  subjects = ['ab'.repeat(32)],
) =>
  ({
    kind: 'verified',
    identity: { subject: RELEASE, issuer: ISSUER, repository: 'acme/hello', ...identity },
    predicateType: 'https://slsa.dev/provenance/v1',
    subjects,
    provenance: { repository: 'acme/hello', commit: 'a'.repeat(40), workflow: '.github/workflows/release.yml' },
  }) as const;

describe('matchesSigner', () => {
  const identity = { subject: RELEASE, issuer: ISSUER, repository: 'acme/hello' };
  it.each([
    ['the exact subject, issuer and repository', { issuer: ISSUER, subject: RELEASE, repository: 'acme/hello' }, true],
    ['the repository in another case', { issuer: ISSUER, subject: RELEASE, repository: 'ACME/Hello' }, true],
    ['another issuer', { issuer: 'https://accounts.google.com', subject: RELEASE }, false],
    ['another repository', { issuer: ISSUER, subject: RELEASE, repository: 'acme/other' }, false],
    [
      'a pattern over the whole subject',
      { issuer: ISSUER, subjectPattern: '^https://github\\.com/acme/.*@refs/heads/main$' },
      true,
    ],
    ['a pattern the subject only contains', { issuer: ISSUER, subjectPattern: '^release\\.yml$' }, false],
  ])('%s: %s', (_name, signer, expected) => {
    expect(matchesSigner(signer, identity)).toBe(expected);
  });
});

describe('planVerification', () => {
  it('passes a bundle of this digest by a named signer, and records who signed', () => {
    const decision = planVerification(keyless, evidence([verified({})]), 'prod');
    expect(decision.passed).toBe(true);
    expect(decision.todo).toEqual([]);
    expect(decision.signed[0]?.identity?.subject).toBe(RELEASE);
  });

  it('fails when anything could not be read, even with a good bundle', () => {
    const decision = planVerification(
      keyless,
      evidence([verified({})], { problems: ['9 Sigstore bundles refer to this digest'] }),
      'prod',
    );
    expect(decision.passed).toBe(false);
    expect(decision.todo[0]).toBe(
      'fix what could not be read (above), then push the image again or run `/escalator promote`',
    );
  });

  it('says what it left unread past its bounds, and still passes on what it read', () => {
    const notes = ['12 Sigstore bundles refer to this digest; the last 8 listed were read'];
    const decision = planVerification(keyless, evidence([verified({})], { notes }), 'prod');
    expect(decision.passed).toBe(true);
    expect(decision.found.at(-1)).toBe('12 Sigstore bundles refer to this digest; the last 8 listed were read');
  });

  it('fails a bundle about another digest, naming it', () => {
    const decision = planVerification(keyless, evidence([verified({}, [OTHER])]), 'prod');
    expect(decision.passed).toBe(false);
    expect(decision.found).toEqual([
      `SLSA provenance signed by \`${RELEASE}\` (issuer \`${ISSUER}\`) in \`acme/hello\` whose subject is another image (\`sha256:${OTHER}\`)`,
    ]);
  });

  it('says what it looked for with keys and signers together', () => {
    const decision = planVerification({ ...keyless, keys: ['k1', 'k2'], provenance: true }, evidence([]), 'prod');
    expect(decision.lookedFor).toEqual([
      `a cosign signature of \`ghcr.io/acme/hello\`@\`${DIGEST}\` by one of the 2 keys of \`prod\` in the tag \`sha256-${'ab'.repeat(32)}.sig\``,
      `a Sigstore bundle of \`ghcr.io/acme/hello\`@\`${DIGEST}\`, checked against the trusted root \`public-good\`, signed by \`${RELEASE}\` from \`${ISSUER}\` in \`acme/hello\``,
      `SLSA provenance (\`https://slsa.dev/provenance/v1\`) whose subject is \`${DIGEST}\`, by the same signers`,
    ]);
    expect(decision.found).toEqual([
      `no signature tag \`sha256-${'ab'.repeat(32)}.sig\``,
      'no Sigstore bundle among the referrers of this digest',
    ]);
  });
});

describe('what the pull request and the check show', () => {
  // A certificate's fields are chosen by whoever got it issued: they are hostile text.
  const hostile = verified({
    subject: 'https://evil.example/x) [click](javascript:alert(1)) @octocat <img src=x>`',
    repository: 'acme/hello',
  });

  it('escapes and links only https URLs without spaces or brackets', () => {
    const policy: VerifyPolicy = { ...keyless, signers: [{ issuer: ISSUER, subjectPattern: '^.*$' }] };
    const decision = planVerification(policy, evidence([hostile]), 'prod');
    const section = renderSignedSection([{ image: 'ghcr.io/acme/hello', digest: DIGEST, decision }]);
    expect(section.split('\n')[2]).toBe(
      '  - provenance by `` https://evil.example/x) [click](javascript:alert(1)) @octocat <img src=x>` `` · issuer `https://token.actions.githubusercontent.com` · source [`acme/hello`](https://github.com/acme/hello) · commit [`aaaaaaaaaaaa`](https://github.com/acme/hello/commit/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa) · workflow `.github/workflows/release.yml`',
    );
  });

  it('stays within its budget however many images and signers', () => {
    const many = Array.from({ length: 30 }, (_, i) => ({
      image: `ghcr.io/acme/app-${i}-${'x'.repeat(150)}`,
      digest: DIGEST,
      decision: planVerification(keyless, evidence([verified({}), verified({ subject: RELEASE })]), 'prod'),
    }));
    const section = renderSignedSection(many);
    expect(section.length).toBeLessThanOrEqual(SIGNED_BUDGET + 60);
    expect(section.endsWith(`- …cut at ${SIGNED_BUDGET} characters`)).toBe(true);
  });

  it('titles the check with what was not written', () => {
    const refused = planVerification(keyless, evidence([]), 'prod');
    const check = renderVerifyCheck('prod', [{ image: 'ghcr.io/acme/hello', tag: '1.2.0', decision: refused }]);
    expect(check).toEqual({
      conclusion: 'failure',
      title: 'verify: 1 image not written into prod',
      summary: [
        '### ❌ `ghcr.io/acme/hello`:`1.2.0`',
        '',
        '**Looked for**',
        `- a Sigstore bundle of \`ghcr.io/acme/hello\`@\`${DIGEST}\`, checked against the trusted root \`public-good\`, signed by \`${RELEASE}\` from \`${ISSUER}\` in \`acme/hello\``,
        '',
        '**Found**',
        '- no Sigstore bundle among the referrers of this digest',
        '',
        '**What to do**',
        '- sign it in the workflow `prod` names, or fix the identity in `environments[].verify.signers` if the image was signed by another one',
        '',
      ].join('\n'),
    });
  });
});
