import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedAgent } from '@escalator/github-sandbox/agents';
import { agentKey } from '../../src/intake/agent-routes.js';
import { eventually, startStack, waitIndexed, type Stack } from '../support/stack.js';

/**
 * The whole loop with the agents' wire formats: the simulated Argo CD (or Flux) reports each push
 * to Escalator's /agents route; the promotion out of dev waits for it, and a Degraded object
 * halts it until it recovers.
 */
const owner = 'developer';
const token = 'agent-token-for-the-loop-0123456789';
const overlay = (tag: string) => `images:\n  - name: ghcr.io/example/hello\n    newTag: ${tag}\n`;

describe.each(['argocd', 'flux'] as const)('agent loop through %s (sandbox GitHub, real Redis)', (agent) => {
  let stack: Stack;
  let sim: SimulatedAgent;
  beforeAll(async () => {
    stack = await startStack({ ESCALATOR_AGENT_TOKEN: token }, { name: `loop-${agent}` });
  });
  afterAll(async () => {
    await sim?.close();
    await stack?.close();
  });
  /** The simulated agent of `repo` (the previous one stopped), reporting `object` for dev; returns its control URL. */
  const startAgent = async (repo: string, object: string, delayMs: number): Promise<string> => {
    await sim?.close();
    sim = new SimulatedAgent({
      agent,
      escalatorUrl: stack.app.url,
      key: agentKey(token, owner),
      owner,
      repo,
      branch: 'main',
      githubApiUrl: stack.sim.apiUrl,
      githubToken: stack.sim.user.token,
      repoURL: `${stack.sim.url}/${owner}/${repo}.git`,
      objects: [{ object, environment: 'dev' }],
      delayMs,
      pollMs: 200,
    });
    return sim.start();
  };

  it('waits for the agent to report the merge healthy, halts on Degraded, recovers', { timeout: 180_000 }, async () => {
    const repo = `loop-${agent}`;
    const health = agent === 'argocd' ? '{ argocd: "{app}-dev" }' : '{ flux: "flux-system/apps-dev" }';
    const object = agent === 'argocd' ? 'hello-dev' : 'flux-system/apps-dev';
    await stack.client.createRepo({
      name: repo,
      files: {
        '.github/escalator.yml': `environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n    health: ${health}\n  - name: staging\n    paths: ["apps/*/overlays/staging"]\n    from: dev\n`,
        'apps/hello/overlays/dev/kustomization.yaml': overlay('1.0.0'),
        'apps/hello/overlays/staging/kustomization.yaml': overlay('1.0.0'),
      },
    });
    await waitIndexed(stack, owner, repo);
    const control = await startAgent(repo, object, 500);
    await stack.client.commit(`${owner}/${repo}`, {
      branch: 'main',
      files: { 'apps/hello/overlays/dev/kustomization.yaml': overlay('1.1.0') },
    });
    const pull = await eventually(
      async () =>
        (await stack.user.rest.pulls.list({ owner, repo, state: 'open' })).data.find(
          (p) => p.head.ref === 'escalator/promote/staging/hello',
        ),
      { what: 'the staging promotion', timeoutMs: 60_000 },
    );
    const conclusion = (wanted: string) =>
      eventually(
        async () => {
          const run = (
            await stack.user.rest.checks.listForRef({ owner, repo, ref: pull.head.sha, check_name: 'escalator/health' })
          ).data.check_runs[0];
          return run?.conclusion === wanted ? run : undefined;
        },
        { what: `escalator/health ${wanted}`, timeoutMs: 60_000 },
      );
    await conclusion('success');
    expect(sim.sent.every((report) => report.status === 202)).toBe(true);
    await fetch(`${control}/degrade?object=${encodeURIComponent(object)}`, { method: 'POST' });
    // Degraded is tolerated for 60 s by default: the gate waits, then fails at the re-check.
    const run = await eventually(
      async () => {
        const r = (
          await stack.user.rest.checks.listForRef({ owner, repo, ref: pull.head.sha, check_name: 'escalator/health' })
        ).data.check_runs[0];
        return r?.status === 'in_progress' ? r : undefined;
      },
      { what: 'escalator/health waiting', timeoutMs: 60_000 },
    );
    expect(run.output.summary).toContain('within the 60s tolerated');
    await fetch(`${control}/recover?object=${encodeURIComponent(object)}`, { method: 'POST' });
    await conclusion('success');
  });

  it(
    'fails the Deployment once a degraded spell outlasts tolerate, though the agent reported it only once',
    { timeout: 120_000 },
    async () => {
      const repo = `spell-${agent}`;
      const health =
        agent === 'argocd' ? '{ argocd: "{app}-dev", tolerate: 2s }' : '{ flux: "flux-system/apps-dev", tolerate: 2s }';
      const object = agent === 'argocd' ? 'hello-dev' : 'flux-system/apps-dev';
      await stack.client.createRepo({
        name: repo,
        files: {
          '.github/escalator.yml': `environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n    health: ${health}\n`,
          'apps/hello/overlays/dev/kustomization.yaml': overlay('1.0.0'),
        },
      });
      await waitIndexed(stack, owner, repo);
      const control = await startAgent(repo, object, 200);
      await stack.client.commit(`${owner}/${repo}`, {
        branch: 'main',
        files: { 'apps/hello/overlays/dev/kustomization.yaml': overlay('1.1.0') },
      });
      const latest = async () => {
        const [deployment] = (await stack.user.rest.repos.listDeployments({ owner, repo, environment: 'dev' })).data;
        if (!deployment) return undefined;
        const [status] = (
          await stack.user.rest.repos.listDeploymentStatuses({ owner, repo, deployment_id: deployment.id })
        ).data;
        return status?.state;
      };
      await eventually(async () => ((await latest()) === 'success' ? true : undefined), {
        what: 'the Deployment to succeed',
        timeoutMs: 60_000,
      });
      const sentBefore = sim.sent.length;
      await fetch(`${control}/degrade?object=${encodeURIComponent(object)}`, { method: 'POST' });
      await eventually(async () => ((await latest()) === 'failure' ? true : undefined), {
        what: 'the Deployment to fail once the spell outlasts 2s',
        timeoutMs: 60_000,
      });
      // One report of the spell, and no recovery: the failure came from looking again, not from the agent.
      expect(sim.sent.slice(sentBefore).map((report) => report.health.toLowerCase())).toEqual(['degraded']);
    },
  );
});
