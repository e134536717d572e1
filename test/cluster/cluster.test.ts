import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type LocalCluster } from '../support/redis-cluster.js';
import { eventually, postImage, readFile, startStack, type Stack } from '../support/stack.js';

/**
 * The core flows on a real Redis Cluster (three masters, three replicas, started here): an image
 * event becomes a bump pull request, its merge a promotion pull request, and after the master
 * serving Escalator's slot is killed and its replica takes over, the next event still becomes a
 * pull request. Escalator's keys share one hash tag (`{prefix}`), so BullMQ's multi-key scripts
 * and the stores' transactions stay in one slot.
 */
const config = `environments:
  - name: dev
    paths: ["apps/*/overlays/dev"]
    from: registry
  - name: staging
    paths: ["apps/*/overlays/staging"]
    from: dev
`;
const overlay = (tag: string) =>
  `resources: [../../base]\nimages:\n  - name: ghcr.io/example/hello\n    newTag: ${tag}\n`;
const deployment =
  'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: hello}\nspec:\n  template:\n    spec:\n      containers:\n        - name: hello\n          image: ghcr.io/example/hello:1.0.0\n';

describe('Escalator on a Redis Cluster', () => {
  let cluster: LocalCluster;
  let stack: Stack;
  let owner: string;
  const repo = 'gitops';

  beforeAll(async () => {
    cluster = await startCluster();
    stack = await startStack({}, { redisUrl: cluster.url, name: 'cluster' });
    const created = await stack.client.createRepo({
      name: repo,
      files: {
        '.github/escalator.yml': config,
        'apps/hello/base/deployment.yaml': deployment,
        'apps/hello/overlays/dev/kustomization.yaml': overlay('1.0.0'),
        'apps/hello/overlays/staging/kustomization.yaml': overlay('1.0.0'),
      },
    });
    owner = created.full_name.split('/')[0] as string;
  });
  afterAll(async () => {
    await stack?.close();
    await cluster?.stop();
  });

  const openPull = (title: string) =>
    eventually(
      async () =>
        (await stack.user.rest.pulls.list({ owner, repo, state: 'open' })).data.find(
          (pull) => pull.title === title && pull.labels.length >= 2,
        ),
      { what: `the pull request "${title}"`, timeoutMs: 60_000 },
    );

  /** Intake answers 503 while Redis is unreachable (the sender retries); retry as a registry would. */
  const post = (image: string) =>
    eventually(
      async () => {
        const res = await postImage(stack, image);
        return res.status === 202 ? res : undefined;
      },
      { what: `intake to accept ${image}`, timeoutMs: 60_000 },
    );

  it('turns an image event into a bump pull request', async () => {
    await post('ghcr.io/example/hello:1.2.3');
    const pull = await openPull('Bump hello to 1.2.3 in dev');
    expect(await readFile(stack, owner, repo, 'apps/hello/overlays/dev/kustomization.yaml', pull.head.sha)).toBe(
      overlay('1.2.3'),
    );
  });

  it('opens the promotion pull request when the bump is merged', async () => {
    const bump = await openPull('Bump hello to 1.2.3 in dev');
    await stack.client.mergePull(`${owner}/${repo}`, bump.number);
    const promotion = await openPull('Promote hello 1.2.3 to staging');
    expect(
      await readFile(stack, owner, repo, 'apps/hello/overlays/staging/kustomization.yaml', promotion.head.sha),
    ).toBe(overlay('1.2.3'));
  });

  // Its own waits allow a minute for intake and a minute for the pull request: the test allows both.
  it('goes on after the master serving its slot fails over to its replica', { timeout: 150_000 }, async () => {
    const { killed, promoted } = await cluster.failMasterOf(`{${stack.prefix}}`);
    expect(promoted).not.toBe(killed);
    await post('ghcr.io/example/hello:1.2.4');
    const pull = await openPull('Bump hello to 1.2.4 in dev');
    expect(await readFile(stack, owner, repo, 'apps/hello/overlays/dev/kustomization.yaml', pull.head.sha)).toBe(
      overlay('1.2.4'),
    );
  });
});
