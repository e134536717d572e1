import { RE2JS } from 're2js';
import { code, escapeText } from './markdown.js';

/**
 * The verification gate, pure: given an environment's policy (`environments[].verify`) and what
 * was read from the registry and checked cryptographically (by src/adapters/registry/signatures.ts),
 * decide whether a digest may be written into the environment, and say what was looked for,
 * what was found and what to do. Also the lines "What changed" shows about who signed.
 */

/** The policy, as `environments[].verify` holds it (src/config/repo-config.schema.ts). */
export interface VerifyPolicy {
  keys: string[];
  signers: Array<{
    issuer: string;
    subject?: string | undefined;
    subjectPattern?: string | undefined;
    repository?: string | undefined;
  }>;
  trustedRoot?: string | undefined;
  provenance: boolean;
}

/** Who a Sigstore certificate names (Fulcio's extensions, https://github.com/sigstore/fulcio/blob/main/docs/oid-info.md). */
export interface SignerIdentity {
  subject: string;
  issuer?: string;
  /** `owner/name`, from the source repository URI (1.3.6.1.4.1.57264.1.12). */
  repository?: string;
  /** Source repository digest (1.3.6.1.4.1.57264.1.13): the commit. */
  commit?: string;
  /** Source repository ref (1.3.6.1.4.1.57264.1.14). */
  ref?: string;
  /** Build config URI (1.3.6.1.4.1.57264.1.18): the workflow file at its ref. */
  workflow?: string;
  /** Run invocation URI (1.3.6.1.4.1.57264.1.21). */
  run?: string;
}

/** What a SLSA provenance predicate says of the build (https://slsa.dev/spec/v1.0/provenance). */
export interface ProvenanceFacts {
  builder?: string;
  repository?: string;
  commit?: string;
  workflow?: string;
  run?: string;
}

/** One signature found in the image's cosign signature tag, after checking it against every key. */
export type CosignFinding =
  | { kind: 'signed'; key: number }
  | { kind: 'no-key' }
  | { kind: 'other-digest'; digest: string; key?: number }
  | { kind: 'unreadable'; reason: string };

/** One Sigstore bundle found among the image's referrers, after checking it against the trusted root. */
export type BundleFinding =
  | {
      kind: 'verified';
      identity: SignerIdentity;
      predicateType: string;
      /** The `sha256` digests the in-toto statement names as its subjects. */
      subjects: string[];
      provenance?: ProvenanceFacts;
    }
  | { kind: 'failed'; reason: string };

/** What was read for one digest. `problems`: what could not be read (a trusted root missing, a referrers index too large). */
export interface VerifyEvidence {
  repository: string;
  digest: string;
  /** Null when the image has no signature tag. */
  cosign: CosignFinding[] | null;
  bundles: BundleFinding[];
  /** What could not be read or checked at all: the gate fails on any. */
  problems: string[];
  /** What was left unread on purpose (past the bounds): shown, never a pass by itself. */
  notes?: string[];
}

export interface VerifyDecision {
  passed: boolean;
  lookedFor: string[];
  found: string[];
  todo: string[];
  /** Who signed, for "What changed": the matching keys and identities, and the provenance. */
  signed: Array<{ by: string; identity?: SignerIdentity; provenance?: ProvenanceFacts }>;
}

export const SLSA_PROVENANCE = /^https:\/\/slsa\.dev\/provenance\/v1$/;
const MAX_SHOWN = 200;
/** The most "Signed" adds to a pull request body. */
export const SIGNED_BUDGET = 6_000;

function clip(text: string, max = MAX_SHOWN): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Whether a verified identity is one the policy names. */
export function matchesSigner(signer: VerifyPolicy['signers'][number], identity: SignerIdentity): boolean {
  if (identity.issuer !== signer.issuer) return false;
  if (signer.subject !== undefined && identity.subject !== signer.subject) return false;
  if (signer.subjectPattern !== undefined && !RE2JS.compile(signer.subjectPattern).matches(identity.subject))
    return false;
  if (signer.repository !== undefined && identity.repository?.toLowerCase() !== signer.repository.toLowerCase())
    return false;
  return true;
}

function describeSigner(signer: VerifyPolicy['signers'][number]): string {
  const who =
    signer.subject !== undefined ? code(signer.subject) : `a subject matching ${code(signer.subjectPattern ?? '')}`;
  return `${who} from ${code(signer.issuer)}${signer.repository ? ` in ${code(signer.repository)}` : ''}`;
}

function describeIdentity(identity: SignerIdentity): string {
  return `${code(clip(identity.subject))}${identity.issuer ? ` (issuer ${code(clip(identity.issuer))})` : ''}${identity.repository ? ` in ${code(clip(identity.repository))}` : ''}`;
}

/**
 * Whether `evidence` satisfies `policy` for `environment`:
 * 1. a signature: a cosign signature of this digest by one of `keys`, or a verified bundle whose
 *    statement names this digest, signed by one of `signers`
 * 2. with `provenance`, a verified SLSA provenance bundle whose subject is this digest, by one of `signers`
 * Anything that cannot be read fails: a gate never passes on what it did not see.
 */
export function planVerification(policy: VerifyPolicy, evidence: VerifyEvidence, environment: string): VerifyDecision {
  const digest = evidence.digest;
  const hex = digest.replace(/^sha256:/, '');
  const lookedFor: string[] = [];
  const found: string[] = [];
  const todo: string[] = [];
  const signed: VerifyDecision['signed'] = [];
  const image = `${code(evidence.repository)}@${code(digest)}`;

  if (policy.keys.length > 0)
    lookedFor.push(
      `a cosign signature of ${image} by ${policy.keys.length === 1 ? 'the key' : `one of the ${policy.keys.length} keys`} of ${code(environment)} in the tag ${code(`sha256-${hex}.sig`)}`,
    );
  if (policy.signers.length > 0)
    lookedFor.push(
      `a Sigstore bundle of ${image}, checked against the trusted root ${code(policy.trustedRoot ?? '')}, signed by ${policy.signers.map(describeSigner).join(' or ')}`,
    );
  if (policy.provenance)
    lookedFor.push(
      `SLSA provenance (${code('https://slsa.dev/provenance/v1')}) whose subject is ${code(digest)}, by the same signers`,
    );

  let signature = false;
  if (policy.keys.length > 0) {
    if (evidence.cosign === null) found.push(`no signature tag ${code(`sha256-${hex}.sig`)}`);
    else
      for (const finding of evidence.cosign) {
        if (finding.kind === 'signed') {
          signature = true;
          const by = `cosign key ${finding.key + 1} of ${policy.keys.length}`;
          found.push(`a signature of this digest by ${by}`);
          signed.push({ by });
        } else if (finding.kind === 'no-key') found.push('a signature that none of the keys verifies');
        else if (finding.kind === 'other-digest')
          found.push(`a signature whose payload names another image, ${code(clip(finding.digest))}`);
        else found.push(`a signature that cannot be read: ${escapeText(clip(finding.reason))}`);
      }
  }

  let provenance = false;
  if (policy.signers.length > 0) {
    for (const bundle of evidence.bundles) {
      if (bundle.kind === 'failed') {
        found.push(`a Sigstore bundle that does not verify: ${escapeText(clip(bundle.reason))}`);
        continue;
      }
      const ofThis = bundle.subjects.includes(hex);
      const signer = policy.signers.find((candidate) => matchesSigner(candidate, bundle.identity));
      const isProvenance = SLSA_PROVENANCE.test(bundle.predicateType);
      const what = `${isProvenance ? 'SLSA provenance' : `an attestation (${code(clip(bundle.predicateType))})`} signed by ${describeIdentity(bundle.identity)}`;
      if (!ofThis)
        found.push(
          `${what} whose subject is another image (${
            bundle.subjects
              .map((s) => code(`sha256:${clip(s, 64)}`))
              .slice(0, 3)
              .join(', ') || 'none'
          })`,
        );
      else if (!signer) found.push(`${what}, an identity the policy does not name`);
      else {
        found.push(`${what}, for this digest`);
        signature = true;
        if (isProvenance) provenance = true;
        if (
          !signed.some(
            (entry) => entry.identity?.subject === bundle.identity.subject && !!entry.provenance === isProvenance,
          )
        )
          signed.push({
            by: bundle.identity.subject,
            identity: bundle.identity,
            ...(isProvenance && bundle.provenance ? { provenance: bundle.provenance } : {}),
          });
      }
    }
    if (evidence.bundles.length === 0) found.push('no Sigstore bundle among the referrers of this digest');
  }
  for (const problem of [...evidence.problems, ...(evidence.notes ?? [])]) found.push(escapeText(clip(problem)));

  const passed = signature && (!policy.provenance || provenance) && evidence.problems.length === 0;
  if (!passed) {
    if (evidence.problems.length > 0)
      todo.push('fix what could not be read (above), then push the image again or run `/escalator promote`');
    if (!signature) {
      if (policy.keys.length > 0)
        todo.push(
          `sign ${code(`${evidence.repository}@${digest}`)} with the key ${code(environment)} trusts (\`cosign sign --key cosign.key ${evidence.repository}@${digest}\`), or add its public key to \`environments[].verify.keys\``,
        );
      if (policy.signers.length > 0)
        todo.push(
          `sign it in the workflow ${code(environment)} names, or fix the identity in \`environments[].verify.signers\` if the image was signed by another one`,
        );
    }
    if (policy.provenance && !provenance)
      todo.push(
        `attest the build's provenance for this digest (for example \`actions/attest-build-provenance\` with \`push-to-registry: true\`)`,
      );
  }
  return { passed, lookedFor, found, todo, signed };
}

/** The `escalator/verify` check run of one decision set: title and summary (bounded, escaped). */
export function renderVerifyCheck(
  environment: string,
  results: Array<{ image: string; tag: string; decision: VerifyDecision }>,
): { conclusion: 'success' | 'failure'; title: string; summary: string } {
  const failed = results.filter((result) => !result.decision.passed);
  const title =
    failed.length === 0
      ? `verify: ${results.length} image${results.length === 1 ? '' : 's'} satisfy the policy of ${environment}`
      : `verify: ${failed.length} image${failed.length === 1 ? '' : 's'} not written into ${environment}`;
  const lines: string[] = [];
  for (const { image, tag, decision } of results.slice(0, 20)) {
    lines.push(
      `### ${decision.passed ? '✅' : '❌'} ${code(clip(image))}:${code(clip(tag, 128))}`,
      '',
      '**Looked for**',
    );
    lines.push(...decision.lookedFor.map((line) => `- ${line}`), '', '**Found**');
    lines.push(...(decision.found.length ? decision.found.slice(0, 20).map((line) => `- ${line}`) : ['- nothing']));
    if (decision.todo.length) lines.push('', '**What to do**', ...decision.todo.map((line) => `- ${line}`));
    lines.push('');
  }
  if (results.length > 20) lines.push(`…and ${results.length - 20} more images.`);
  return {
    conclusion: failed.length === 0 ? 'success' : 'failure',
    title: clip(title),
    summary: clip(lines.join('\n'), 60_000),
  };
}

function link(text: string, url: string | undefined): string {
  const shown = code(clip(text));
  return url && /^https:\/\/[^\s()<>]+$/.test(url) && url.length <= 512 ? `[${shown}](${url})` : shown;
}

function githubRepository(repository: string | undefined): string | undefined {
  return repository && /^[A-Za-z0-9-]{1,39}\/[A-Za-z0-9._-]{1,100}$/.test(repository)
    ? `https://github.com/${repository}`
    : undefined;
}

/**
 * "Who signed" for the "What changed" section: per image, the keys or identities that signed the
 * digest and, with provenance, its source repository, commit and workflow, linked when they are
 * GitHub URLs. Escaped and bounded (at most 10 images, 3 signers each).
 */
export function renderSignedSection(
  results: Array<{ image: string; digest: string; decision: VerifyDecision }>,
): string {
  const shown = results.filter((result) => result.decision.passed && result.decision.signed.length > 0);
  if (shown.length === 0) return '';
  const lines = ['#### Signed'];
  for (const { image, digest, decision } of shown.slice(0, 10)) {
    lines.push(`- ${code(clip(image))}@${code(clip(digest, 80))}`);
    for (const entry of decision.signed.slice(0, 3)) {
      if (!entry.identity) {
        lines.push(`  - signed with ${escapeText(entry.by)}`);
        continue;
      }
      const id = entry.identity;
      const repo = id.repository ?? entry.provenance?.repository;
      const repoUrl = githubRepository(repo);
      const commit = entry.provenance?.commit ?? id.commit;
      const parts = [
        `${entry.provenance ? 'provenance' : 'signed'} by ${link(id.subject, id.subject.startsWith('https://') ? id.subject : undefined)}`,
        ...(id.issuer ? [`issuer ${code(clip(id.issuer))}`] : []),
        ...(repo ? [`source ${link(repo, repoUrl)}`] : []),
        ...(commit && /^[0-9a-f]{7,64}$/.test(commit)
          ? [`commit ${link(commit.slice(0, 12), repoUrl ? `${repoUrl}/commit/${commit}` : undefined)}`]
          : []),
        ...((entry.provenance?.workflow ?? id.workflow)
          ? [
              `workflow ${link(entry.provenance?.workflow ?? id.workflow ?? '', (id.workflow ?? '').startsWith('https://') ? id.workflow : undefined)}`,
            ]
          : []),
        ...((entry.provenance?.run ?? id.run) ? [`run ${link('log', entry.provenance?.run ?? id.run)}`] : []),
      ];
      lines.push(`  - ${parts.join(' · ')}`);
    }
  }
  if (shown.length > 10) lines.push(`- …and ${shown.length - 10} more images`);
  // At most SIGNED_BUDGET characters, cut at a line so no link or code span is left open.
  let text = '';
  for (const line of lines) {
    if (text.length + line.length + 1 > SIGNED_BUDGET) return `${text}- …cut at ${SIGNED_BUDGET} characters`;
    text += `${line}\n`;
  }
  return text.trimEnd();
}
