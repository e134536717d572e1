import { loadCommitChanges } from '../../adapters/github/repo.js';
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
 * 2. read what the merge changed against its first parent (one GitHub call)
 * 3. map the changed paths onto (environment, app) folders and each onto the environments that
 *    promote configuration from it, narrowed by their include and exclude
 * 4. record one waiting change per (target, app) and plan the promotion into each target
 */
export async function processLandingJob(
  deps: JobDeps,
  data: LandingJob,
  { log }: ProcessorContext,
): Promise<LandingOutcome> {
  const index = await loadIndexOrRequest(deps, data, 'configuration promotion');
  const environments = index.config?.environments ?? [];
  let origins: SourcePull[] = [];
  let done = 0;
  let only: string | undefined;
  if (data.escalator) {
    const { environment, app, config: ids } = data.escalator;
    if (ids.length === 0) {
      log.info({ pr: data.number }, 'Escalator pull request merged; it carried no configuration change');
      return { recorded: [], done };
    }
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
  const targets = environments.filter((env) => env.promote?.config === true);
  if (targets.length === 0) {
    log.info({ pr: data.number }, 'Pull request merged; no environment promotes configuration');
    return { recorded: [], done };
  }
  const octokit = deps.github.forInstallation(data.installationId);
  const id = { owner: data.owner, repo: data.repo };
  const commit = await loadCommitChanges(octokit, id, data.mergeSha);
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
