import { loadCommitChanges, type CommitChanges } from '../../adapters/github/repo.js';
import type { RepoIndex } from '../../adapters/store/subscriptions.js';
import { WaitError } from '../../observability/errors.js';
import type { ConfigChange, SourcePull } from '../../planners/config-carry.js';
import { changedFolders, planConfigRoutes } from '../../planners/config-routes.js';
import { enqueuePromote } from '../../queue/enqueue.js';
import type { ProcessorContext } from '../../queue/worker.js';
import type { JobDeps } from '../shared/deps.js';
import { loadIndexOrRequest } from '../shared/repo-lease.js';
import { refreshDashboard } from '../shared/dashboard-refresh.js';
import type { LandingJob } from './job.js';

export interface LandingOutcome {
  /** Waiting changes recorded, as `<target>/<app>`. */
  recorded: string[];
  /** Escalator's promotion: the changes it carried, now done in its environment. */
  done: number;
}

/**
 * A pull request merged into the default branch (docs/configuration.md, "Promote configuration"):
 * 1. one of Escalator's promotions that carried configuration changes into Y: those changes are
 *    done for Y, and what the merge changed in Y's folders goes on (its chain kept as provenance);
 *    any other Escalator pull request carried none, and ends here
 * 2. what the merge changed against its first parent: from the index once it has recorded the
 *    merge (the landing waits for the push's index job; one GitHub call when it cannot)
 * 3. map the changed paths onto (environment, app) folders and each onto the environments that
 *    promote configuration from it, narrowed by their include and exclude
 * 4. record one waiting change per (target, app) and plan the promotion into each target
 */
export async function processLandingJob(
  deps: JobDeps,
  data: LandingJob,
  { log, job }: ProcessorContext,
): Promise<LandingOutcome> {
  const index = await loadIndexOrRequest(deps, data, 'configuration promotion');
  const environments = index.config?.environments ?? [];
  let origins: SourcePull[] = [];
  let done = 0;
  let only: string | undefined;
  if (data.escalator?.config.length === 0) {
    log.info({ pr: data.number }, 'Escalator pull request merged; it carried no configuration change');
    return { recorded: [], done };
  }
  const targets = environments.filter((env) => env.promote?.config === true);
  // What the merge changed, before anything is recorded (this may wait for the index).
  const commit = targets.length > 0 ? await mergeChanges(deps, index, data, job.timestamp) : undefined;
  if (data.escalator) {
    const { environment, app, config: ids } = data.escalator;
    const carried = (await deps.store.configChanges.list(index, environment, app)).filter((entry) =>
      ids.includes(entry.change.id),
    );
    // The chain of each change carried, oldest first, each pull request once.
    const seen = new Set<number>();
    origins = carried
      .flatMap((entry) => [...entry.change.origins, entry.change.pull])
      .filter((pull) => !seen.has(pull.number) && seen.add(pull.number));
    for (const entry of carried) await deps.store.configChanges.done(index, environment, entry.app, [entry.change.id]);
    done = carried.length;
    only = environment;
  }
  if (!commit) {
    log.info({ pr: data.number }, 'Pull request merged; no environment promotes configuration');
    return { recorded: [], done };
  }
  const parent = commit.parents[0];
  if (!parent) {
    log.warn({ pr: data.number, merge: data.mergeSha }, 'Merge commit has no parent; no configuration change recorded');
    return { recorded: [], done };
  }
  if (commit.truncated)
    log.warn(
      { pr: data.number, files: commit.files.length },
      'GitHub listed only the first 3,000 files of the merge; configuration changes beyond them are not promoted',
    );
  const folders = changedFolders(environments, commit.files).filter(
    (folder) => only === undefined || folder.environment === only,
  );
  const routes = planConfigRoutes(environments, folders);
  const recorded: string[] = [];
  const landedAt = deps.now().toISOString();
  for (const route of routes) {
    const change: ConfigChange = {
      id: `${route.environment}:${data.mergeSha}`,
      source: route.environment,
      pull: { number: data.number, title: data.title, author: data.author },
      origins,
      mergeSha: data.mergeSha,
      parentSha: parent,
      landedAt,
      folder: route.folder,
      pathIndex: route.pathIndex,
      files: route.files,
      ...blobsOf(commit, route),
    };
    await deps.store.configChanges.record(index, route.target, route.app, change);
    recorded.push(`${route.target}/${route.app}`);
    const target = environments.find((env) => env.name === route.target);
    await enqueuePromote(
      deps.producer,
      {
        installationId: data.installationId,
        owner: data.owner,
        repo: data.repo,
        environment: route.target,
        app: target?.group ? '' : route.app,
        reason: 'push',
      },
      `config-${data.mergeSha}`,
    );
  }
  if (recorded.length > 0 || done > 0) await refreshDashboard(deps, data);
  log.info(
    { pr: data.number, folders: folders.length, recorded },
    recorded.length > 0
      ? 'Configuration changes recorded; promotions planned'
      : 'Pull request merged; it changed no folder of an environment that another promotes configuration from',
  );
  return { recorded, done };
}

/**
 * How long a merge's landing waits for the push's index job to record the merge (it is woken when
 * it does) before it asks GitHub what the merge changed.
 */
export const LANDING_INDEX_WAIT_MS = 30_000;

/** What the merge changed, and the blob SHAs the index knew of its files before and after it. */
type MergeChanges = CommitChanges & { before: Record<string, string>; after: Record<string, string> };

/**
 * What the merge changed against its first parent: from the index when it was built from the
 * merge (its read of the head listed the files, no GitHub call); while the index is still older
 * than the merge's push, the landing waits for it (delayed, without using an attempt, woken by the
 * index job, for at most {@link LANDING_INDEX_WAIT_MS} after it was queued); otherwise one call.
 */
async function mergeChanges(
  deps: JobDeps,
  index: RepoIndex,
  data: LandingJob,
  queuedAt: number,
): Promise<MergeChanges> {
  if (index.sha === data.mergeSha && index.changes) {
    const { parents, files, before } = index.changes;
    return { parents, files, truncated: false, before, after: index.blobs?.shas ?? {} };
  }
  if (
    index.sha !== data.mergeSha &&
    Date.now() - queuedAt < LANDING_INDEX_WAIT_MS &&
    (await indexOlderThan(deps, index, data.mergeSha))
  )
    throw new WaitError(
      `the index of ${data.owner}/${data.repo} has not recorded merge ${data.mergeSha.slice(0, 7)} yet; the landing runs once it has, or reads the merge from GitHub after ${LANDING_INDEX_WAIT_MS / 1000} s`,
    );
  const octokit = deps.github.forInstallation(data.installationId);
  const commit = await loadCommitChanges(octokit, { owner: data.owner, repo: data.repo }, data.mergeSha);
  return { ...commit, before: {}, after: {} };
}

/**
 * Whether the index was built from a head older than `sha`, whose push was seen (recorded in the
 * heads, src/adapters/store/heads.ts): that push's index job will record it. A push not seen yet,
 * or an index already past the merge, is not waited for.
 */
async function indexOlderThan(deps: JobDeps, index: RepoIndex, sha: string): Promise<boolean> {
  const pushed = await deps.store.heads.recordedAt(index.owner, index.repo, sha);
  if (pushed === null) return false;
  const indexed = await deps.store.heads.recordedAt(index.owner, index.repo, index.sha);
  return indexed === null || indexed <= pushed;
}

/** The blob SHAs of a route's files before and after the merge, where the index knew them. */
function blobsOf(commit: MergeChanges, route: { folder: string; files: string[] }): Pick<ConfigChange, 'blobs'> {
  const before: Record<string, string> = {};
  const after: Record<string, string> = {};
  for (const file of route.files) {
    const path = `${route.folder}/${file}`;
    if (Object.hasOwn(commit.before, path)) before[path] = commit.before[path] as string;
    if (Object.hasOwn(commit.after, path)) after[path] = commit.after[path] as string;
  }
  return Object.keys(before).length + Object.keys(after).length > 0 ? { blobs: { before, after } } : {};
}
