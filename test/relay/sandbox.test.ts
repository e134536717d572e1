import { startHarness, type Harness, type ReceivedWebhook } from '@escalator/github-sandbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitHubClients } from '../../src/adapters/github/client.js';
import type { RelayInput } from '../../src/queue/relay-schedule.js';
import { createLogger } from '../../src/observability/logger.js';
import { startArgoCd, startFluxReceiver, type TestAgent } from './support/agents.js';
import { eventually, sleep, startRelay, target, type RelayRig } from './support/relay.js';

/**
 * The relay against the sandbox GitHub: real pushes (merging a pull request, a plain commit), the
 * push webhook's raw body as GitHub sent it, and the compare API when the file list is unknown.
 */
describe('relay with the sandbox GitHub', { timeout: 60_000 }, () => {
  const log = createLogger({ level: 'silent' });
  let harness: Harness;
  let repo: { owner: string; repo: string; installationId: number };
  let github: GitHubClients;
  const agents: TestAgent[] = [];

  beforeAll(async () => {
    harness = await startHarness();
    repo = await harness.seedRepo('gitops', {
      'apps/web/overlays/prod/kustomization.yaml': 'images:\n  - name: web\n    newTag: "1.0.0"\n',
      'apps/web/overlays/dev/kustomization.yaml': 'images:\n  - name: web\n    newTag: "1.1.0"\n',
      'infra/cert-manager.yaml': 'kind: Namespace\n',
    });
    github = new GitHubClients({
      appId: harness.sim.app.id,
      privateKey: harness.sim.app.privateKey,
      baseUrl: harness.sim.apiUrl,
      log,
    });
  });
  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.close()));
    await harness.close();
  });

  async function agent(starting: Promise<TestAgent>): Promise<TestAgent> {
    const started = await starting;
    agents.push(started);
    return started;
  }

  /** The last push webhook GitHub sent for `after`. */
  async function pushWebhook(after: string): Promise<ReceivedWebhook> {
    return eventually(
      () => harness.received.filter((w) => w.headers['x-github-event'] === 'push' && w.payload.after === after).at(-1),
      10_000,
      `push webhook for ${after}`,
    );
  }

  /** What the GitHub webhook handler passes: raw body, installation, file list unless truncated. */
  function relayInput(webhook: ReceivedWebhook, truncated: boolean): RelayInput {
    const payload = webhook.payload as {
      before: string;
      after: string;
      commits: Array<{ added: string[]; modified: string[]; removed: string[] }>;
      installation?: { id: number };
      repository: { full_name: string };
    };
    return {
      deliveryId: String(webhook.headers['x-github-delivery']),
      event: 'push',
      body: webhook.body,
      repository: payload.repository.full_name,
      changedPaths: truncated ? null : payload.commits.flatMap((c) => [...c.added, ...c.modified, ...c.removed]),
      before: payload.before,
      after: payload.after,
      ...(payload.installation ? { installationId: payload.installation.id } : {}),
    };
  }

  async function relay(targets: Parameters<typeof startRelay>[0]): Promise<RelayRig> {
    return startRelay(targets, { github, log });
  }

  it('relays the push of a merged promotion pull request to each matching target, signed, and not to a target whose paths it does not touch', async () => {
    const argocd = await agent(startArgoCd({ secret: 'argo' }));
    const flux = await agent(startFluxReceiver({ type: 'github', token: 'flux', events: ['push'] }));
    const infra = await agent(startFluxReceiver({ type: 'generic-hmac', token: 'infra' }));
    const rig = await relay([
      target({
        name: 'argocd',
        type: 'argocd',
        url: argocd.url,
        secret: 'argo',
        repos: ['example/gitops'],
        paths: ['apps/*/overlays/prod'],
      }),
      target({ name: 'flux', type: 'flux-github', url: flux.url, secret: 'flux', repos: ['example/*'] }),
      target({
        name: 'infra',
        type: 'flux-generic-hmac',
        url: infra.url,
        secret: 'infra',
        repos: ['example/gitops'],
        paths: ['infra/**'],
      }),
    ]);
    try {
      const full = `${repo.owner}/${repo.repo}`;
      await harness.client.commit(full, {
        branch: 'escalator/prod/web',
        from: 'main',
        files: { 'apps/web/overlays/prod/kustomization.yaml': 'images:\n  - name: web\n    newTag: "1.1.0"\n' },
      });
      const pull = await harness.client.openPull(full, {
        title: 'Promote web 1.1.0 to prod',
        head: 'escalator/prod/web',
      });
      const merged = await harness.client.mergePull(full, pull.number);
      const webhook = await pushWebhook(merged.sha);

      expect(await rig.enqueue(relayInput(webhook, false))).toBe(2);
      await eventually(() => argocd.requests.length === 1 && flux.requests.length === 1, 5_000, 'two deliveries');
      await sleep(300);
      expect(argocd.requests.map((r) => [r.verdict, r.refreshes])).toEqual([['accepted', true]]);
      expect(flux.requests.map((r) => r.verdict)).toEqual(['accepted']);
      expect(argocd.requests[0]!.body.toString('utf8')).toBe(webhook.body);
      expect(argocd.requests[0]!.headers['x-github-delivery']).toBe(webhook.headers['x-github-delivery']);
      expect(infra.requests).toEqual([]);
    } finally {
      await rig.close();
    }
  });

  it('narrows a truncated push with the compare API: relays where a changed path matches, skips where none does', async () => {
    const apps = await agent(startArgoCd({ secret: 'argo' }));
    const infra = await agent(startArgoCd({ secret: 'argo' }));
    const rig = await relay([
      target({
        name: 'apps',
        type: 'argocd',
        url: apps.url,
        secret: 'argo',
        repos: ['example/gitops'],
        paths: ['apps/**'],
      }),
      target({
        name: 'infra',
        type: 'argocd',
        url: infra.url,
        secret: 'argo',
        repos: ['example/gitops'],
        paths: ['infra/**'],
      }),
    ]);
    const compares: Array<{ path: string; status: number }> = [];
    const stop = harness.sim.onExchange((exchange) => {
      if (exchange.surface === 'api' && exchange.path.includes('/compare/'))
        compares.push({ path: exchange.path, status: exchange.status });
    });
    try {
      const { sha } = await harness.client.commit(`${repo.owner}/${repo.repo}`, {
        branch: 'main',
        files: { 'apps/web/overlays/dev/kustomization.yaml': 'images:\n  - name: web\n    newTag: "1.2.0"\n' },
      });
      const input = relayInput(await pushWebhook(sha), true);
      expect(input.changedPaths).toBeNull();

      // Paths unknown: both targets match on the repository; the jobs narrow with the compare API.
      expect(await rig.enqueue(input)).toBe(2);
      await eventually(() => apps.accepted().length === 1, 5_000, 'delivery to apps');
      const [skipped] = await eventually(
        async () => {
          const entries = await rig.store.deliveries('infra');
          return entries.length > 0 ? entries : undefined;
        },
        5_000,
        'infra decision',
      );
      expect(skipped).toMatchObject({
        outcome: 'skipped',
        status: null,
        changedPaths: ['apps/web/overlays/dev/kustomization.yaml'],
      });
      const [delivered] = await eventually(
        async () => {
          const entries = await rig.store.deliveries('apps');
          return entries.length > 0 ? entries : undefined;
        },
        5_000,
        'apps log',
      );
      expect(delivered).toMatchObject({
        outcome: 'delivered',
        changedPaths: ['apps/web/overlays/dev/kustomization.yaml'],
      });
      await sleep(300);
      expect(infra.requests).toEqual([]);
      // One compare per target's job, through the App's installation token.
      expect(compares.filter((c) => c.status === 200)).toHaveLength(2);
      expect(compares[0]!.path).toMatch(/^\/repos\/example\/gitops\/compare\/[0-9a-f]{40}\.\.\.[0-9a-f]{40}$/);
    } finally {
      stop();
      await rig.close();
    }
  });

  it('relays a truncated push it cannot narrow (the before commit is gone) rather than miss a refresh', async () => {
    const infra = await agent(startArgoCd({ secret: 'argo' }));
    const rig = await relay([
      target({
        name: 'infra',
        type: 'argocd',
        url: infra.url,
        secret: 'argo',
        repos: ['example/gitops'],
        paths: ['infra/**'],
      }),
    ]);
    try {
      const { sha } = await harness.client.commit(`${repo.owner}/${repo.repo}`, {
        branch: 'main',
        files: { 'README.md': 'hello\n' },
      });
      const input = { ...relayInput(await pushWebhook(sha), true), before: 'f'.repeat(40) };
      await rig.enqueue(input);
      await eventually(() => infra.accepted().length === 1, 5_000, 'delivery without narrowing');
      const [entry] = await eventually(
        async () => {
          const entries = await rig.store.deliveries('infra');
          return entries.length > 0 ? entries : undefined;
        },
        5_000,
        'log entry',
      );
      expect(entry).toMatchObject({ outcome: 'delivered', changedPaths: null });
    } finally {
      await rig.close();
    }
  });
});
