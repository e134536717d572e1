import type { Octokit } from '../../adapters/github/client.js';
import { createComment, ensureCheckRun, type RepoId } from '../../adapters/github/repo.js';
import { loadTrustedRoot, readVerifyEvidence } from '../../adapters/registry/signatures.js';
import type { EnvironmentConfig } from '../../config/repo-config.schema.js';
import type { Logger } from '../../observability/logger.js';
import { normalizeName } from '../../planners/image-ref.js';
import { escapeText } from '../../planners/markdown.js';
import {
  planVerification,
  renderSignedSection,
  renderVerifyCheck,
  type VerifyDecision,
} from '../../planners/verify-plan.js';
import { readVersions } from '../../planners/promotion-plan.js';
import type { JobDeps } from './deps.js';
import type { FileSource } from './indexed-files.js';
import { loadEnvFiles } from './promotion-inputs.js';

/**
 * The verification gate of a bump or a promotion (docs/security.md, "Verify before you promote"):
 * 1. per image, the digest to be written (the tag's, read from the registry when the plan has none;
 *    the index digest of a multi-arch image) is read for signatures and attestations
 * 2. the pure planner decides against the TARGET environment's `verify` policy
 * 3. images that fail are left out of the plan (nothing of them is written)
 * 4. `escalator/verify` on the pull request head (or on the default branch when nothing is opened)
 *    says what was looked for, what was found and what to do
 * An environment without `verify` passes everything, reads nothing and reports nothing. Results are
 * kept per digest for the job, so a re-plan after a conflict reads the registry once.
 */
export interface VerifyGate {
  /** Bump: the candidates whose digest satisfies the policy, each with the digest verified. */
  images<T extends { image: { repository: string; tag: string; digest?: string } }>(chosen: T[]): Promise<T[]>;
  /**
   * Bump: candidates refused only because nothing was found yet, pushed less than
   * SIGNATURE_WAIT_MS ago. CI signs after it pushes, and the push's event often comes first: these
   * stay waiting (not reported, not forgotten) and the caller asks for another bump later.
   */
  waiting<C extends { repository: string; tag: string; digest?: string; receivedAt: string }>(candidates: C[]): C[];
  /**
   * Promotion: verifies every row and drops, in place, the apps with a row that fails from each
   * list of entries given. Returns the rows that remain.
   */
  rows<R extends { app: string; image: string; to: string; digest?: string | undefined }>(
    rows: readonly R[],
    ...entries: Array<Array<{ app: string }>>
  ): Promise<R[]>;
  /**
   * Promotion, before anything is planned: the apps whose versions in `source` (at the default
   * branch's head `sha`) that differ from the target's all satisfy the policy. An app left out is
   * not planned, so an open promotion pull request for it stays exactly as it was (its versions,
   * its gates).
   */
  sourceApps(files: FileSource, source: string, apps: string[], sha: string): Promise<string[]>;
  /**
   * Nothing left to promote after `sourceApps`: the refusal on the default branch head `sha`, and
   * the person who asked hears it. The job's outcome.
   */
  stopped(
    octokit: Octokit,
    id: RepoId,
    at: { sha: string; branch: string; replyTo?: number | undefined; requestedBy?: string | undefined },
  ): Promise<{ rows: number; gates: never[]; missing: string[] }>;
  /** Whether the last check left an image out (a promotion it emptied is not "already there"). */
  refused(): boolean;
  /** "What changed" with who signed the verified images appended (unchanged without a policy). */
  withSigned(notes: string): string;
  /** Posts `escalator/verify`: on `pullHead` when there is a pull request, else on `baseSha` under `escalator/verify <branch>`. */
  report(
    octokit: Octokit,
    id: RepoId,
    at: { pullHead?: string | undefined; baseSha: string; branch: string },
  ): Promise<void>;
}

interface Result {
  image: string;
  tag: string;
  digest: string;
  decision: VerifyDecision;
  /** Nothing at all was found (no signature tag, no bundle, nothing unreadable): it may still be on its way. */
  absent?: boolean;
}

/** How long a pushed image may wait for its signature before a bump refuses it for good. */
export const SIGNATURE_WAIT_MS = 10 * 60_000;

export function verifyGate(deps: JobDeps, owner: string, environment: EnvironmentConfig, log: Logger): VerifyGate {
  const policy = environment.verify;
  const results = new Map<string, Result>();
  // What this job checked, once per digest: what the check run and "Signed" show.
  const seen = new Map<string, Result>();
  const note = (result: Result): void => {
    seen.set(`${result.image}\n${result.tag}\n${result.digest}`, result);
  };

  async function check(repository: string, tag: string, digest: string | undefined): Promise<Result> {
    const image = normalizeName(repository) ?? repository;
    const key = `${image}\n${tag}\n${digest ?? ''}`;
    const known = results.get(key);
    if (known) return known;
    const refuse = (reason: string): Result => ({
      image,
      tag,
      digest: digest ?? 'unknown',
      decision: { passed: false, lookedFor: [], found: [reason], todo: [], signed: [] },
    });
    let result: Result;
    if (!policy) throw new Error('verifyGate: check without a policy');
    if (!deps.notes)
      result = refuse(
        'this worker reads no registry (it runs without registry access), so nothing can be verified; ask the operator to run workers with registry access',
      );
    else {
      const client = deps.notes.registry.forOwner(owner);
      const resolved = digest ?? (await client.resolve(image, tag))?.digest;
      if (!resolved) result = refuse(`the registry has no tag ${tag} of ${image}`);
      else {
        const trust = policy.trustedRoot
          ? await loadTrustedRoot(deps.notes.trustedRoots, policy.trustedRoot)
          : undefined;
        const evidence = await readVerifyEvidence(client, image, resolved, policy, trust);
        const absent =
          (evidence.cosign === null || evidence.cosign.length === 0) &&
          evidence.bundles.length === 0 &&
          evidence.problems.length === 0;
        result = {
          image,
          tag,
          digest: resolved,
          decision: planVerification(policy, evidence, environment.name),
          ...(absent ? { absent } : {}),
        };
      }
    }
    log.info(
      { environment: environment.name, image, tag, digest: result.digest, passed: result.decision.passed },
      'Image verified against the environment policy',
    );
    results.set(key, result);
    return result;
  }

  return {
    async images(chosen) {
      if (!policy) return chosen;
      const kept: typeof chosen = [];
      for (const entry of chosen) {
        const result = await check(entry.image.repository, entry.image.tag, entry.image.digest);
        note(result);
        // The digest verified is the digest written: a tag that moves later is not re-read.
        if (result.decision.passed) kept.push({ ...entry, image: { ...entry.image, digest: result.digest } });
      }
      return kept;
    },
    waiting(candidates) {
      if (!policy) return [];
      const now = deps.now().getTime();
      return candidates.filter((candidate) => {
        const image = normalizeName(candidate.repository) ?? candidate.repository;
        const result = results.get(`${image}\n${candidate.tag}\n${candidate.digest ?? ''}`);
        const wait = !!result?.absent && now - Date.parse(candidate.receivedAt) < SIGNATURE_WAIT_MS;
        if (wait && result) {
          seen.delete(`${result.image}\n${result.tag}\n${result.digest}`);
          log.info(
            { environment: environment.name, image, tag: candidate.tag },
            'No signature yet; the bump checks again',
          );
        }
        return wait;
      });
    },
    async rows(rows, ...lists) {
      if (!policy) return [...rows];
      const refusedApps = new Set<string>();
      for (const row of rows) {
        const result = await check(row.image, row.to, row.digest);
        note(result);
        if (!result.decision.passed) refusedApps.add(row.app);
      }
      for (const list of lists)
        for (let i = list.length - 1; i >= 0; i--) if (refusedApps.has(list[i]!.app)) list.splice(i, 1);
      return rows.filter((row) => !refusedApps.has(row.app));
    },
    async sourceApps(files, source, apps, sha) {
      if (!policy) return apps;
      const kept: string[] = [];
      for (const app of apps) {
        const running = readVersions(await loadEnvFiles(files, environment.name, app, sha));
        let passed = true;
        for (const [name, version] of readVersions(await loadEnvFiles(files, source, app, sha))) {
          const now = running.get(name);
          // Only what the promotion would change: images the target runs, at another version.
          if (!now || (now.tag === version.tag && (now.digest ?? '') === (version.digest ?? ''))) continue;
          const result = await check(version.repository, version.tag, version.digest);
          note(result);
          if (!result.decision.passed) passed = false;
        }
        if (passed) kept.push(app);
      }
      return kept;
    },
    async stopped(octokit, id, at) {
      await this.report(octokit, id, { baseSha: at.sha, branch: at.branch });
      if (at.replyTo !== undefined)
        await createComment(
          octokit,
          id,
          at.replyTo,
          `${at.requestedBy ? `@${at.requestedBy} ` : ''}Promotion into **${escapeText(environment.name)}**: no pull request, because the versions to promote do not satisfy its \`verify\` policy. The \`escalator/verify ${escapeText(at.branch)}\` check on the default branch says what was looked for, what was found and what to do.`,
        );
      return { rows: 0, gates: [], missing: [] };
    },
    refused() {
      return [...seen.values()].some((result) => !result.decision.passed);
    },
    withSigned(notes) {
      if (!policy) return notes;
      const section = renderSignedSection([...seen.values()]);
      return section ? (notes ? `${notes}\n\n${section}` : section) : notes;
    },
    async report(octokit, id, at) {
      const last = [...seen.values()];
      if (!policy || last.length === 0) return;
      const refused = last.filter((result) => !result.decision.passed);
      const written = last.filter((result) => result.decision.passed);
      // What was refused is never in the pull request: it fails on the default branch, under the branch it would have used.
      if (refused.length > 0) {
        const check = renderVerifyCheck(environment.name, last);
        await ensureCheckRun(octokit, id, at.baseSha, `escalator/verify ${at.branch}`, {
          status: 'completed',
          conclusion: 'failure',
          title: check.title,
          summary: check.summary,
        });
      }
      // The pull request carries only verified digests: its check says who signed them.
      if (at.pullHead !== undefined && written.length > 0) {
        const check = renderVerifyCheck(environment.name, written);
        await ensureCheckRun(octokit, id, at.pullHead, 'escalator/verify', {
          status: 'completed',
          conclusion: 'success',
          title: check.title,
          summary: check.summary,
        });
      }
    },
  };
}
