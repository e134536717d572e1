import { RequestError } from '@octokit/request-error';
import { createDeployment, createDeploymentStatus } from '../../adapters/github/deployments.js';
import type { RepoIndex } from '../../adapters/store/subscriptions.js';
import { parseDuration } from '../../config/repo-config.js';
import type { AppHealth } from '../../planners/health.js';
import { deploymentState } from '../../planners/health-gate.js';
import { versionId } from '../../planners/versions.js';
import { enqueueHealth } from '../../queue/enqueue.js';
import type { JobDeps } from './deps.js';
import { runningText, revisionContains } from './health-inputs.js';

type Environment = NonNullable<RepoIndex['config']>['environments'][number];

/** Whether Escalator keeps GitHub Deployments for an environment: its agent reports health and `health.deployments` is on. */
export function keepsDeployments(environment: Environment | undefined): environment is Environment {
  return !!environment?.health && environment.health.deployments;
}

/**
 * New versions landed in an environment (`sha`, the merge commit): its Deployment, in progress
 * until the agent reports them. Production when no other environment takes versions from it.
 */
export async function startDeployment(
  deps: JobDeps,
  index: RepoIndex,
  environment: Environment,
  app: string,
  sha: string,
  versions: Array<{ name: string; tag: string; digest?: string }>,
): Promise<number | undefined> {
  const octokit = deps.github.forInstallation(index.installationId);
  const id = { owner: index.owner, repo: index.repo };
  const production = !index.config?.environments.some((env) => env.from === environment.name);
  let deploymentId: number;
  try {
    deploymentId = await createDeployment(octokit, id, {
      sha,
      environment: environment.name,
      app,
      images: versions.map((version) => versionId(version)),
      production,
      description: runningText(app, versions),
    });
  } catch (error) {
    // An installation from before Escalator asked for `deployments: write` cannot create them
    // until its owner accepts the new permission; the merge itself is indexed all the same.
    if (error instanceof RequestError && error.status === 403) {
      deps.log.warn(
        { repo: `${index.owner}/${index.repo}`, environment: environment.name, app, status: error.status },
        'Deployment not created: the installation lacks the Deployments permission; accept the permission request in the organization settings, or set health.deployments: false',
      );
      return undefined;
    }
    throw error;
  }
  await createDeploymentStatus(octokit, id, deploymentId, {
    state: 'in_progress',
    description: `merged; waiting for the agent to report ${sha.slice(0, 7)}`,
  });
  await deps.store.healthGate.saveDeployment(index, environment.name, app, {
    id: deploymentId,
    sha,
    state: 'in_progress',
  });
  deps.log.info(
    { repo: `${index.owner}/${index.repo}`, environment: environment.name, app, deployment: deploymentId, sha },
    'Deployment created for the merge',
  );
  // The agent may have reported the merge already, before the Deployment existed (the report's
  // job found nothing to follow): the new Deployment follows what is recorded now.
  const current = await deps.store.health.load(index, environment.name, app);
  if (current) await followDeployment(deps, index, environment, app, current);
  return deploymentId;
}

/**
 * A merge landed in an environment whose agent reports health (`sha`): a report the agent sent
 * about it before this landing was recorded was counted as the landing before it (the health job
 * maps a revision to the newest landing it contains). Such a report is looked at again, as a job of
 * its own, now that this landing is known; the health job looks again after recording too, so one
 * of the two always sees the other.
 */
export async function relookEarlyReport(
  deps: JobDeps,
  index: RepoIndex,
  environment: string,
  app: string,
  sha: string,
): Promise<void> {
  const current = await deps.store.health.load(index, environment, app);
  if (current?.reported === undefined || current.revision === sha) return;
  const { reported, reportedAt, sync, health, source, message } = current;
  const now = deps.now().getTime();
  await enqueueHealth(
    deps.producer,
    {
      installationId: index.installationId,
      owner: index.owner,
      repo: index.repo,
      report: {
        owner: index.owner,
        repo: index.repo,
        environment,
        app,
        revision: reported,
        sync,
        health,
        at: reportedAt,
        source,
        ...(message !== undefined ? { message } : {}),
      },
    },
    { at: now, now },
  );
}

/**
 * A report changed an app's health: the newest Deployment of (environment, app) whose commit the
 * reported revision contains follows it (success, failure, in progress; the agent's URL as log);
 * on success the earlier Deployments of the app go inactive. A state already set is not posted again.
 * Returns the number of statuses posted.
 */
export async function followDeployment(
  deps: JobDeps,
  index: RepoIndex,
  environment: Environment,
  app: string,
  health: AppHealth,
): Promise<number> {
  const records = await deps.store.healthGate.loadDeployments(index, environment.name, app);
  if (records.length === 0) return 0;
  const octokit = deps.github.forInstallation(index.installationId);
  const id = { owner: index.owner, repo: index.repo };
  let posted = 0;
  for (const [position, record] of records.entries()) {
    if (!(await revisionContains(deps, octokit, index, record.sha, health.revision))) continue;
    const next = deploymentState(health, parseDuration(environment.health?.tolerate ?? '60s'), deps.now().getTime());
    if (next.state !== record.state) {
      await createDeploymentStatus(octokit, id, record.id, { ...next, logUrl: health.source.url });
      await deps.store.healthGate.saveDeployment(index, environment.name, app, { ...record, state: next.state });
      posted++;
    }
    if (next.state === 'success')
      for (const older of records.slice(position + 1).filter((item) => item.state !== 'inactive')) {
        await createDeploymentStatus(octokit, id, older.id, {
          state: 'inactive',
          description: `superseded by ${record.sha.slice(0, 7)}`,
        });
        await deps.store.healthGate.saveDeployment(index, environment.name, app, { ...older, state: 'inactive' });
        posted++;
      }
    break;
  }
  return posted;
}
