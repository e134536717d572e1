import type { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGitHubShaped, startHarness, type Harness } from '../testing/harness.js';

/**
 * Commit statuses, deployments and deployment statuses, with their webhooks. Every exchange is
 * checked against GitHub's OpenAPI description and every delivery against
 * @octokit/webhooks-schemas (`expectGitHubShaped`); the commit-status exchange follows the recorded
 * one in octokit/fixtures (scenarios/api.github.com/create-status).
 */
let h: Harness;
let octokit: Octokit;
let main: string;
const repo = { owner: 'example', repo: 'deploys' };

beforeAll(async () => {
  // `deployment` is not among Escalator's events; this App subscribes to it to see GitHub send it.
  h = await startHarness({
    app: {
      events: ['check_run', 'deployment', 'deployment_status', 'issue_comment', 'pull_request', 'push', 'status'],
    },
  });
  const seeded = await h.seedRepo('deploys', { 'a.yaml': 'a: 1\n' });
  octokit = await h.installationOctokit(seeded.installationId);
  main = (await h.client.commit('example/deploys', { branch: 'main', files: { 'a.yaml': 'a: 2\n' } })).sha;
});

afterAll(async () => {
  expectGitHubShaped(h);
  await h.close();
});

const delivered = async (event: string) => {
  await h.sim.context.webhooks.idle();
  return h.received.filter((hook) => hook.headers['x-github-event'] === event).map((hook) => hook.payload);
};

describe('commit statuses', () => {
  it('creates statuses, lists them newest first, combines the latest per context oldest first, and sends `status`', async () => {
    const failure = await h.userOctokit().rest.repos.createCommitStatus({
      ...repo,
      sha: main,
      state: 'failure',
      target_url: 'https://example.com',
      description: 'create-status failure test',
      context: 'example/1',
    });
    expect(failure.status).toBe(201);
    expect(failure.data).toMatchObject({
      state: 'failure',
      context: 'example/1',
      creator: { login: h.sim.user.login },
    });
    await h.userOctokit().rest.repos.createCommitStatus({
      ...repo,
      sha: main,
      state: 'success',
      target_url: 'https://example.com',
      description: 'create-status success test',
      context: 'example/2',
    });
    const list = await octokit.rest.repos.listCommitStatusesForRef({ ...repo, ref: main });
    expect(list.data.map((status) => status.context)).toEqual(['example/2', 'example/1']);
    const combined = await octokit.rest.repos.getCombinedStatusForRef({ ...repo, ref: 'main' });
    expect(combined.data.state).toBe('failure');
    expect(combined.data.statuses.map((status) => status.context)).toEqual(['example/1', 'example/2']);
    const events = await delivered('status');
    expect(events.map((event) => [event.context, event.state, event.sha])).toEqual([
      ['example/1', 'failure', main],
      ['example/2', 'success', main],
    ]);
    expect(events[0]?.branches).toEqual([
      expect.objectContaining({ name: 'main', commit: expect.objectContaining({ sha: main }), protected: false }),
    ]);
  });

  it('refuses a status from an installation without statuses: write, as the App asks for read only', async () => {
    await expect(
      octokit.rest.repos.createCommitStatus({ ...repo, sha: main, state: 'success', context: 'x' }),
    ).rejects.toMatchObject({ status: 403 });
  });
});

describe('deployments', () => {
  it('creates a deployment at a commit, with payload, environment flags and the `deployment` webhook', async () => {
    const created = await octokit.rest.repos.createDeployment({
      ...repo,
      ref: main,
      environment: 'staging',
      payload: { app: 'hello', images: ['ghcr.io/example/hello:1.4.2'] },
      auto_merge: false,
      required_contexts: [],
      description: 'hello 1.4.2',
    });
    expect(created.status).toBe(201);
    if (!('id' in created.data)) throw new Error('expected a deployment');
    expect(created.data).toMatchObject({
      sha: main,
      ref: main,
      task: 'deploy',
      environment: 'staging',
      original_environment: 'staging',
      payload: { app: 'hello' },
      transient_environment: false,
      production_environment: false,
      performed_via_github_app: { slug: 'escalator' },
    });
    const [event] = await delivered('deployment');
    expect(event).toMatchObject({ action: 'created', deployment: { id: created.data.id, environment: 'staging' } });
  });

  it('checks every context of the commit unless required_contexts says otherwise: 409 while one failed', async () => {
    await expect(
      octokit.rest.repos.createDeployment({ ...repo, ref: main, environment: 'staging', auto_merge: false }),
    ).rejects.toMatchObject({
      status: 409,
      message: expect.stringContaining('Commit status checks failed for'),
    });
  });

  it('refuses an unknown ref with 422, and a deployment without deployments permission', async () => {
    await expect(
      octokit.rest.repos.createDeployment({ ...repo, ref: 'nope', required_contexts: [] }),
    ).rejects.toMatchObject({ status: 422 });
    const limited = await startHarness({ app: { permissions: { contents: 'write', metadata: 'read' } } });
    try {
      const seeded = await limited.seedRepo('limited', { 'a.yaml': 'a: 1\n' });
      const client = await limited.installationOctokit(seeded.installationId);
      await expect(
        client.rest.repos.createDeployment({ owner: 'example', repo: 'limited', ref: 'main', required_contexts: [] }),
      ).rejects.toMatchObject({ status: 403 });
    } finally {
      await limited.close();
    }
  });

  it('lists deployments newest first, filtered by sha, ref and environment', async () => {
    const prod = await octokit.rest.repos.createDeployment({
      ...repo,
      ref: 'main',
      environment: 'prod',
      production_environment: true,
      auto_merge: false,
      required_contexts: [],
    });
    expect(prod.status).toBe(201);
    const staging = await octokit.rest.repos.listDeployments({ ...repo, environment: 'staging' });
    expect(staging.data.map((deployment) => deployment.environment)).toEqual(['staging']);
    const byRef = await octokit.rest.repos.listDeployments({ ...repo, ref: 'main' });
    expect(byRef.data.map((deployment) => deployment.environment)).toEqual(['prod']);
    const bySha = await octokit.rest.repos.listDeployments({ ...repo, sha: main });
    expect(bySha.data.map((deployment) => deployment.environment)).toEqual(['prod', 'staging']);
    expect(bySha.data[0]?.production_environment).toBe(true);
  });

  it('adds statuses (log_url sets target_url), lists them newest first, and success marks the earlier successful one of the environment inactive', async () => {
    const [first] = (await octokit.rest.repos.listDeployments({ ...repo, environment: 'staging' })).data;
    if (!first) throw new Error('no deployment');
    await octokit.rest.repos.createDeploymentStatus({
      ...repo,
      deployment_id: first.id,
      state: 'in_progress',
      description: 'merged',
    });
    const ok = await octokit.rest.repos.createDeploymentStatus({
      ...repo,
      deployment_id: first.id,
      state: 'success',
      log_url: 'https://argocd.example/applications/hello-staging',
      description: 'healthy',
    });
    expect(ok.data).toMatchObject({
      state: 'success',
      environment: 'staging',
      target_url: 'https://argocd.example/applications/hello-staging',
      log_url: 'https://argocd.example/applications/hello-staging',
    });
    const second = await octokit.rest.repos.createDeployment({
      ...repo,
      ref: main,
      environment: 'staging',
      auto_merge: false,
      required_contexts: [],
    });
    if (!('id' in second.data)) throw new Error('expected a deployment');
    await octokit.rest.repos.createDeploymentStatus({ ...repo, deployment_id: second.data.id, state: 'success' });
    const firstStatuses = await octokit.rest.repos.listDeploymentStatuses({ ...repo, deployment_id: first.id });
    expect(firstStatuses.data.map((status) => status.state)).toEqual(['inactive', 'success', 'in_progress']);
    const one = await octokit.rest.repos.getDeploymentStatus({
      ...repo,
      deployment_id: first.id,
      status_id: ok.data.id,
    });
    expect(one.data.id).toBe(ok.data.id);
    const events = await delivered('deployment_status');
    expect(events.map((event) => (event.deployment_status as { state: string }).state)).toEqual([
      'in_progress',
      'success',
      'success',
    ]);
  });

  it('keeps production deployments active (auto_inactive leaves production environments alone), and refuses a long description', async () => {
    const [prod] = (await octokit.rest.repos.listDeployments({ ...repo, environment: 'prod' })).data;
    if (!prod) throw new Error('no deployment');
    await octokit.rest.repos.createDeploymentStatus({ ...repo, deployment_id: prod.id, state: 'success' });
    const next = await octokit.rest.repos.createDeployment({
      ...repo,
      ref: main,
      environment: 'prod',
      production_environment: true,
      auto_merge: false,
      required_contexts: [],
    });
    if (!('id' in next.data)) throw new Error('expected a deployment');
    await octokit.rest.repos.createDeploymentStatus({ ...repo, deployment_id: next.data.id, state: 'success' });
    const statuses = await octokit.rest.repos.listDeploymentStatuses({ ...repo, deployment_id: prod.id });
    expect(statuses.data.map((status) => status.state)).toEqual(['success']);
    await expect(
      octokit.rest.repos.createDeploymentStatus({
        ...repo,
        deployment_id: prod.id,
        state: 'success',
        description: 'x'.repeat(141),
      }),
    ).rejects.toMatchObject({ status: 422 });
    await expect(
      octokit.rest.repos.createDeploymentStatus({ ...repo, deployment_id: prod.id, state: 'done' as 'success' }),
    ).rejects.toMatchObject({ status: 422 });
  });
});
