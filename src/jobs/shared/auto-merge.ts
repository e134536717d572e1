import {
  enableAutoMerge,
  loadRequiredChecks,
  requiredChecksPassed,
  type RequiredChecks,
} from '../../adapters/github/gates.js';
import { mergePull, type PullSummary } from '../../adapters/github/repo.js';
import { MergeNotReadyError } from '../../observability/errors.js';
import type { Logger } from '../../observability/logger.js';

type Octokit = Parameters<typeof mergePull>[0];

export type AutoMergeResult = 'enabled' | 'merged' | 'head-moved' | 'closed' | 'conflict';

/**
 * Merge one of Escalator's pull requests (every gate of its own passed) the way the repository
 * asks for merges:
 * 1. GitHub's native auto-merge where the repository allows it: GitHub merges once every required
 *    check and review has passed, a merge queue included; Escalator merges nothing itself.
 * 2. Otherwise (auto-merge not allowed, or GitHub says nothing is left to wait for), Escalator
 *    merges through the API, but only once every status check the branch requires has passed on
 *    the head; until then the job is retried (`MergeNotReadyError`), never merged early.
 * The head SHA goes with both, so a push in between is never merged.
 */
export async function autoMerge(
  octokit: Octokit,
  id: { owner: string; repo: string },
  pull: PullSummary,
  options: { baseBranch: string; method: 'merge' | 'squash' | 'rebase'; log: Logger; required?: RequiredChecks },
): Promise<AutoMergeResult> {
  const { log } = options;
  const native = await enableAutoMerge(octokit, {
    pullNodeId: pull.nodeId,
    method: options.method,
    expectedHeadOid: pull.headSha,
  });
  switch (native.outcome) {
    case 'enabled':
      log.info({ pr: pull.number }, 'GitHub auto-merge enabled: GitHub merges once every required check has passed');
      return 'enabled';
    case 'head-moved':
    case 'closed':
    case 'conflict':
      log.info({ pr: pull.number, reason: native.message }, `Not merged: ${native.outcome}`);
      return native.outcome;
    default:
      break;
  }
  const required = options.required ?? (await loadRequiredChecks(octokit, id, options.baseBranch));
  if (required.contexts.length > 0) {
    const verdict = await requiredChecksPassed(octokit, id, pull.headSha, required.contexts);
    if (!verdict.passed) {
      const waiting = verdict.checks.filter((check) => check.state !== 'passed');
      throw new MergeNotReadyError(
        `pull request #${pull.number} waits for required checks (${waiting.map((check) => `${check.context}: ${check.state}`).join(', ')}); retrying`,
      );
    }
  }
  const merged = await mergePull(octokit, id, pull.number, pull.headSha, options.method);
  if (merged === 'not-mergeable')
    throw new MergeNotReadyError(`pull request #${pull.number} is not mergeable yet; retrying`);
  log.info(
    { pr: pull.number, outcome: merged, native: native.outcome, required: required.contexts },
    merged === 'merged' ? 'Merged: every required check had passed' : 'Not merged: the head moved',
  );
  return merged === 'merged' ? 'merged' : 'head-moved';
}
