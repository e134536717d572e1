import { loadRequiredChecks, type RequiredChecks } from '../../adapters/github/gates.js';
import { ensureCheckRun } from '../../adapters/github/repo.js';
import type { Logger } from '../../observability/logger.js';
import { gateNames } from '../../planners/promotion-gates.js';

type Octokit = Parameters<typeof ensureCheckRun>[0];

/** The checks of Escalator's gates; a promotion pull request gets them from the promotion job. */
const GATE_CHECKS = gateNames.map((name) => `escalator/${name}`);

/**
 * A branch that requires Escalator's gates holds every pull request into it until they report,
 * not only promotions. On a pull request that promotes nothing (a bump, a person's change) the
 * gates the base branch requires pass at once, as "not a promotion"; where none is required,
 * nothing is posted. A promotion branch in the same repository is left to the promotion job.
 * What a person changes by hand in an environment is reported by `escalator/drift`.
 */
export async function passGatesOfOtherPull(
  octokit: Octokit,
  id: { owner: string; repo: string },
  pull: { number: number; baseRef: string; headRef: string; headSha: string; sameRepository: boolean },
  log: Logger,
  required?: RequiredChecks,
): Promise<string[]> {
  if (pull.sameRepository && pull.headRef.startsWith('escalator/promote/')) return [];
  required ??= await loadRequiredChecks(octokit, id, pull.baseRef);
  const gates = GATE_CHECKS.filter((name) => required.contexts.includes(name));
  for (const name of gates)
    await ensureCheckRun(octokit, id, pull.headSha, name, {
      status: 'completed',
      conclusion: 'success',
      title: 'not a promotion',
      summary: `This pull request promotes nothing, so ${name} has nothing to hold back: it passes at once because ${pull.baseRef} requires it of every pull request. Versions it sets that never ran in the source environment are reported by escalator/drift.`,
    });
  if (gates.length > 0)
    log.info({ pr: pull.number, gates }, 'Required gates passed on a pull request that promotes nothing');
  return gates;
}
