import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, postImage, readFile, startStack, waitIndexed, type Stack } from '../support/stack.js';

// dev opts in to entries added as `kustomize edit set image` adds them; prod does not.
const config = `environments:
  - name: dev
    paths: ["apps/*/overlays/dev"]
    from: registry
    addImages: true
  - name: prod
    paths: ["apps/*/overlays/prod"]
    from: dev
`;
const deployment =
  'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: hello}\nspec:\n  template:\n    spec:\n      containers:\n        - name: hello\n          image: ghcr.io/example/hello:1.0.0\n';
const overlay = 'resources:\n  - ../../base\nnamePrefix: dev-\n';
const worldValues = `image:\n  repository: ghcr.io/example/world\n  tag: 1.0.0\nworker:\n  image:\n    repository: ghcr.io/example/world\n    tag: 1.0.0\n    digest: sha256:${'cd'.repeat(32)}\n`;

/**
 * environments[].addImages end to end: the index subscribes the dev overlay to the image its base
 * renders, and the bump adds the images: entry in the overlay's own style; the base stays as it is.
 */
describe('addImages (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  let owner: string;
  const repo = 'add-images';

  beforeAll(async () => {
    stack = await startStack();
    const created = await stack.client.createRepo({
      name: repo,
      files: {
        '.github/escalator.yml': config,
        'apps/hello/base/kustomization.yaml': 'resources:\n  - deployment.yaml\n',
        'apps/hello/base/deployment.yaml': deployment,
        'apps/hello/overlays/dev/kustomization.yaml': overlay,
        'apps/hello/overlays/prod/kustomization.yaml': 'resources:\n  - ../../base\n',
        'apps/world/overlays/dev/values.yaml': worldValues,
      },
    });
    owner = created.full_name.split('/')[0] as string;
    await waitIndexed(stack, owner, repo);
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('adds an images: entry to the dev overlay that renders the image through its base, and nowhere else', async () => {
    expect((await postImage(stack, 'ghcr.io/example/hello:1.2.3')).status).toBe(202);
    const pull = await eventually(
      async () =>
        (await stack.user.rest.pulls.list({ owner, repo, state: 'open' })).data.find((p) => p.labels.length === 2),
      { what: 'the bump pull request' },
    );
    expect(pull.title).toBe('Bump hello to 1.2.3 in dev');
    const dev = await readFile(stack, owner, repo, 'apps/hello/overlays/dev/kustomization.yaml', pull.head.sha);
    expect(dev).toBe(`${overlay}images:\n  - name: ghcr.io/example/hello\n    newTag: 1.2.3\n`);
    const files = await stack.user.rest.pulls.listFiles({ owner, repo, pull_number: pull.number });
    expect(files.data.map((file) => file.filename)).toEqual(['apps/hello/overlays/dev/kustomization.yaml']);
  });

  it('writes the good entries of a file beside a bad one and says in the pull request which entry was left', async () => {
    expect((await postImage(stack, 'ghcr.io/example/world:2.0.0')).status).toBe(202);
    const pull = await eventually(
      async () =>
        (await stack.user.rest.pulls.list({ owner, repo, state: 'open' })).data.find(
          (p) => p.head.ref === 'escalator/dev/world' && p.labels.length === 2,
        ),
      { what: 'the world bump pull request' },
    );
    const values = await readFile(stack, owner, repo, 'apps/world/overlays/dev/values.yaml', pull.head.sha);
    expect(values).toBe(worldValues.replace('tag: 1.0.0', 'tag: 2.0.0'));
    expect(pull.body).toContain(
      '> Some entries could not be updated safely and were left as they were; the rest of their files was updated:\n> - `apps/world/overlays/dev/values.yaml:7`: left as it was (the rest of the file was updated): worker\\.image pins a digest but the event carries none',
    );
  });
});
