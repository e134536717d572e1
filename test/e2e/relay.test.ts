import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startArgoCd, startFluxReceiver, type TestAgent } from '../relay/support/agents.js';
import { eventually, startStack, type Stack } from '../support/stack.js';

/**
 * The whole product: a merge in the sandbox GitHub → Escalator's webhook route → the relay queue
 * → agents that check what Argo CD and Flux check. One signed request per matching target.
 */
describe('relay of pushes to Argo CD and Flux (through the product)', () => {
  let stack: Stack;
  let argocd: TestAgent;
  let flux: TestAgent;
  let unrelated: TestAgent;

  beforeAll(async () => {
    argocd = await startArgoCd({ secret: 'argocd-webhook-secret' });
    flux = await startFluxReceiver({ type: 'generic-hmac', token: 'flux-receiver-token' });
    unrelated = await startArgoCd({ secret: 'other-secret' });
    const targets = [
      {
        name: 'argocd',
        type: 'argocd',
        url: argocd.url,
        secret: { env: 'E2E_ARGOCD_SECRET' },
        repos: ['developer/gitops'],
        paths: ['apps/*/overlays/prod'],
      },
      {
        name: 'flux',
        type: 'flux-generic-hmac',
        url: flux.url,
        secret: { env: 'E2E_FLUX_TOKEN' },
        repos: ['developer/*'],
      },
      {
        name: 'infra-only',
        type: 'argocd',
        url: unrelated.url,
        secret: { env: 'E2E_OTHER_SECRET' },
        repos: ['developer/gitops'],
        paths: ['infra/**'],
      },
    ];
    stack = await startStack({
      ESCALATOR_RELAY_TARGETS: JSON.stringify(targets),
      E2E_ARGOCD_SECRET: 'argocd-webhook-secret',
      E2E_FLUX_TOKEN: 'flux-receiver-token',
      E2E_OTHER_SECRET: 'other-secret',
    });
    await stack.client.createRepo({
      name: 'gitops',
      files: { 'apps/hello/overlays/prod/kustomization.yaml': 'images: []\n', 'infra/readme.yaml': 'a: 1\n' },
    });
  });
  afterAll(async () => {
    await stack?.close();
    await Promise.all([argocd?.close(), flux?.close(), unrelated?.close()]);
  });

  it(
    'sends the exact push body, re-signed per target, and nothing to a target whose paths it misses',
    { timeout: 90_000 },
    async () => {
      const pushed = await stack.client.commit('developer/gitops', {
        branch: 'main',
        files: {
          'apps/hello/overlays/prod/kustomization.yaml':
            'images:\n  - name: ghcr.io/example/hello\n    newTag: 2.0.0\n',
        },
        message: 'Promote hello 2.0.0 to prod',
      });
      const toArgo = await eventually(
        async () => argocd.accepted().find((r) => JSON.parse(r.body.toString()).after === pushed.sha),
        { what: 'Argo CD to receive the push' },
      );
      const toFlux = await eventually(
        async () => flux.accepted().find((r) => JSON.parse(r.body.toString()).after === pushed.sha),
        { what: 'Flux to receive the push' },
      );
      expect(toArgo.headers['x-github-event']).toBe('push');
      expect(toArgo.headers['x-hub-signature-256']).toBe(
        `sha256=${createHmac('sha256', 'argocd-webhook-secret').update(toArgo.body).digest('hex')}`,
      );
      expect(toFlux.headers['x-signature']).toBe(
        `sha256=${createHmac('sha256', 'flux-receiver-token').update(toFlux.body).digest('hex')}`,
      );
      // Byte for byte what GitHub (the sandbox) signed and sent to Escalator.
      const delivered = (await stack.client.deliveries({ event: 'push' })).find(
        (d) => (d.payload as { after?: string }).after === pushed.sha,
      );
      expect(JSON.parse(toArgo.body.toString())).toEqual(delivered?.payload);
      expect(toArgo.body.equals(toFlux.body)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(argocd.accepted().filter((r) => JSON.parse(r.body.toString()).after === pushed.sha)).toHaveLength(1);
      expect(unrelated.requests.filter((r) => JSON.parse(r.body.toString()).after === pushed.sha)).toHaveLength(0);
    },
  );
});
