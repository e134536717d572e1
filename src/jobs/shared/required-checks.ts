import { loadRequiredChecks, type RequiredChecks } from '../../adapters/github/gates.js';
import type { Octokit } from '../../adapters/github/client.js';
import type { JobDeps } from './deps.js';

/**
 * The checks GitHub requires before anything merges into `branch` (`loadRequiredChecks`), read at
 * most once per `REQUIRED_CHECKS_TTL_SECONDS` per branch by all workers: two GitHub calls fewer for
 * each promotion, diff and merge that follows another on the same branch.
 */
export async function requiredChecksOf(
  deps: Pick<JobDeps, 'store'>,
  octokit: Octokit,
  key: { installationId: number; owner: string; repo: string },
  branch: string,
): Promise<RequiredChecks> {
  const cached = await deps.store.requiredChecks.get(key, branch);
  if (cached) return cached;
  const read = await loadRequiredChecks(octokit, { owner: key.owner, repo: key.repo }, branch);
  await deps.store.requiredChecks.set(key, branch, read);
  return read;
}
