import type { Octokit } from './client.js';

type RepoId = { owner: string; repo: string };

/** What Escalator sets on a deployment as the agent reports (GitHub's deployment status states it uses). */
export type DeploymentState = 'in_progress' | 'success' | 'failure' | 'inactive';

/**
 * Create the Deployment of one merge into an environment: `ref` is the merge commit itself (no
 * branch to merge into, so `auto_merge: false`), and `required_contexts: []` because the commit
 * already landed — GitHub's default would refuse it while any status on it is not green.
 */
export async function createDeployment(
  octokit: Octokit,
  id: RepoId,
  input: {
    sha: string;
    environment: string;
    app: string;
    images: string[];
    production: boolean;
    description: string;
  },
): Promise<number> {
  const { data } = await octokit.rest.repos.createDeployment({
    ...id,
    ref: input.sha,
    environment: input.environment,
    task: 'deploy',
    payload: { app: input.app, images: input.images },
    auto_merge: false,
    required_contexts: [],
    description: input.description.slice(0, 140),
    transient_environment: false,
    production_environment: input.production,
  });
  if (!('id' in data))
    throw new Error(
      `GitHub did not create the deployment of ${input.sha.slice(0, 7)} to ${input.environment} (${data.message ?? 'no reason given'}); it is retried`,
    );
  return data.id;
}

/**
 * Add a status to a deployment. `auto_inactive` stays off: GitHub would mark every earlier
 * deployment of the environment inactive, other apps' included; Escalator marks the earlier ones
 * of the same app itself.
 */
export async function createDeploymentStatus(
  octokit: Octokit,
  id: RepoId,
  deploymentId: number,
  input: { state: DeploymentState; description: string; logUrl?: string | undefined },
): Promise<void> {
  await octokit.rest.repos.createDeploymentStatus({
    ...id,
    deployment_id: deploymentId,
    state: input.state,
    description: input.description.slice(0, 140),
    ...(input.logUrl ? { log_url: input.logUrl } : {}),
    auto_inactive: false,
  });
}
