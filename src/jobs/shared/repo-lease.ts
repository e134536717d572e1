import type { RepoIndex, RepoKey } from '../../adapters/store/subscriptions.js';
import { withLease } from '../../queue/lease.js';
import type { JobDeps } from './deps.js';
import { IndexMissingError } from '../../observability/errors.js';
import { enqueueIndex } from '../../queue/enqueue.js';

/**
 * How long a job waits in its worker for a repository another job is writing. Past it the job is
 * delayed a moment without spending an attempt (`LeaseBusyError`, src/queue/worker.ts) and its
 * worker slot goes to other work: a backlog on one repository never holds the workers another
 * installation's job is waiting for.
 */
export const REPO_LEASE_WAIT_MS = 500;

/** Run `work` holding the repository's write lease: one writer per repository across all workers. */
export function withRepoLease<T>(
  deps: Pick<JobDeps, 'redis' | 'leaseMs'> & { store: { prefix: string } },
  key: Pick<RepoKey, 'owner' | 'repo'>,
  work: () => Promise<T>,
): Promise<T> {
  return withLease(
    deps.redis,
    `${deps.store.prefix}:lease:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}`,
    work,
    { ttlMs: deps.leaseMs, waitMs: REPO_LEASE_WAIT_MS },
  );
}

/** The repository's index, or — when Redis lost it — a request to rebuild it and a retry of `what`. */
export async function loadIndexOrRequest(deps: JobDeps, key: RepoKey, what: string): Promise<RepoIndex> {
  const index = await deps.store.subscriptions.loadRepo(key.owner, key.repo);
  if (index) return index;
  await enqueueIndex(
    deps.producer,
    { installationId: key.installationId, owner: key.owner, repo: key.repo, reason: 'missing' },
    'missing',
  );
  throw new IndexMissingError(`${key.owner}/${key.repo} is being indexed; the ${what} retries after it`);
}
