import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, postImage, readFile, startStack, type Stack } from '../support/stack.js';

const config = `environments:
  - name: dev
    paths: ["apps/*/overlays/dev"]
    from: registry
  - name: staging
    paths: ["apps/*/overlays/staging"]
    from: dev
    soak: 3s
  - name: prod
    paths: ["apps/*/overlays/prod"]
    from: staging
    reviewers: ["release-manager"]
`;
const overlay = (tag: string, extra = '') =>
  `resources: [../../base]\n${extra}images:\n  - name: ghcr.io/example/hello\n    newTag: ${tag}\n`;
const prodOverlay = `resources: [../../base]\nreplicas:\n  - name: hello\n    count: 5\nimages:\n  - name: ghcr.io/example/hello\n    newTag: 1.0.0\n    digest: sha256:${'0'.repeat(64)}\n`;
const digest = `sha256:${'cd'.repeat(32)}`;

describe('promotion dev → staging → prod (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  let owner: string;
  const repo = 'gitops';
  const full = () => `${owner}/${repo}`;

  beforeAll(async () => {
    stack = await startStack();
    const created = await stack.client.createRepo({
      name: repo,
      collaborators: { 'release-manager': 'write' },
      files: {
        '.github/escalator.yml': config,
        'apps/hello/base/deployment.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: hello}\n',
        'apps/hello/overlays/dev/kustomization.yaml': `${overlay('1.0.0')}    digest: sha256:${'0'.repeat(64)}\n`,
        'apps/hello/overlays/staging/kustomization.yaml': overlay('1.0.0', 'namePrefix: staging-\n'),
        'apps/hello/overlays/prod/kustomization.yaml': prodOverlay,
      },
    });
    owner = created.full_name.split('/')[0] as string;
  });
  afterAll(async () => {
    await stack?.close();
  });

  const openPulls = async () => (await stack.user.rest.pulls.list({ owner, repo, state: 'open' })).data;
  const pullOn = (
    branch: string,
    predicate: (p: Awaited<ReturnType<typeof openPulls>>[number]) => boolean = () => true,
  ) =>
    eventually(async () => (await openPulls()).find((p) => p.head.ref === branch && predicate(p)), {
      what: `an open PR on ${branch}`,
      // The first index plans the promotions the seeded repository holds (staging does not pin
      // the digest dev runs 1.0.0 with) under the repository's lease, before the bump takes it.
      timeoutMs: 60_000,
    });
  const checkRun = async (sha: string, name: string) =>
    (await stack.user.rest.checks.listForRef({ owner, repo, ref: sha, check_name: name })).data.check_runs[0];

  it('carries one version from the registry to prod, gated by soak and reviews', { timeout: 120_000 }, async () => {
    await stack.client.createUser('release-manager').catch(() => undefined);
    expect((await postImage(stack, `ghcr.io/example/hello:1.1.0@${digest}`)).status).toBe(202);
    const dev = await pullOn('escalator/dev/hello', (p) => p.labels.length > 0);
    await stack.client.mergePull(full(), dev.number);

    // staging: a promotion PR whose soak check waits, then turns green by itself.
    // (The first index opened it already, to pin the digest dev runs 1.0.0 with: it now carries 1.1.0.)
    const staging = await pullOn(
      'escalator/promote/staging/hello',
      (p) => p.labels.length > 0 && p.title.includes('1.1.0'),
    );
    expect(staging.title).toBe('Promote hello 1.1.0 to staging');
    expect(staging.labels.map((l) => l.name).sort()).toEqual(['env:staging', 'promotion']);
    expect(staging.body).toContain(`#${dev.number}`);
    const stagingFile = await readFile(
      stack,
      owner,
      repo,
      'apps/hello/overlays/staging/kustomization.yaml',
      staging.head.sha,
    );
    // The digest travels with the tag; the staging-only namePrefix stays.
    expect(stagingFile).toBe(
      `resources: [../../base]\nnamePrefix: staging-\nimages:\n  - name: ghcr.io/example/hello\n    newTag: 1.1.0\n    digest: ${digest}\n`,
    );
    const pending = await eventually(async () => checkRun(staging.head.sha, 'escalator/soak'), {
      what: 'the soak check',
    });
    expect(pending.status).toBe('in_progress');
    const green = await eventually(
      async () => {
        const run = await checkRun(staging.head.sha, 'escalator/soak');
        return run?.conclusion === 'success' ? run : undefined;
      },
      { what: 'the soak check to pass', timeoutMs: 20_000 },
    );
    expect(green.status).toBe('completed');
    await stack.client.mergePull(full(), staging.number);

    // prod: reviewers requested, prod's own replicas untouched, provenance chain dev → staging.
    const prod = await pullOn('escalator/promote/prod/hello', (p) => p.labels.length > 0);
    expect(prod.title).toBe('Promote hello 1.1.0 to prod');
    const reviewers = await eventually(
      async () => {
        const { data } = await stack.user.rest.pulls.listRequestedReviewers({ owner, repo, pull_number: prod.number });
        return data.users.length > 0 ? data.users.map((u) => u.login) : undefined;
      },
      { what: 'requested reviewers' },
    );
    expect(reviewers).toEqual(['release-manager']);
    expect(prod.body).toContain(`#${dev.number} → #${staging.number} → this pull request`);
    const prodFile = await readFile(stack, owner, repo, 'apps/hello/overlays/prod/kustomization.yaml', prod.head.sha);
    expect(prodFile).toBe(prodOverlay.replace('1.0.0', '1.1.0').replace(`sha256:${'0'.repeat(64)}`, digest));
    await stack.client.mergePull(full(), prod.number);
    const main = await readFile(stack, owner, repo, 'apps/hello/overlays/prod/kustomization.yaml', 'main');
    expect(main).toBe(prodFile);
  });

  it('refuses a command from someone without write access, and says why', async () => {
    await stack.client.createUser('visitor').catch(() => undefined);
    const visitor = await stack.client.createUser('visitor2');
    const issue = await stack.client.openPull(full(), { title: 'note', head: 'main', base: 'main' }).catch(() => null);
    const number = issue?.number ?? 1;
    await stack.client.as(visitor.token as string).comment(full(), number, '/escalator hold prod');
    const reply = await eventually(
      async () => {
        const { data } = await stack.user.rest.issues.listComments({ owner, repo, issue_number: number });
        return data.find((c) => c.body?.includes('@visitor2'));
      },
      { what: 'the refusal reply' },
    );
    expect(reply.body).toContain('Escalator commands need write access');
  });
});
