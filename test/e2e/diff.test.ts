import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startStack, type Stack } from '../support/stack.js';

const base = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: hello
spec:
  selector:
    matchLabels: {app: hello}
  template:
    metadata:
      labels: {app: hello}
    spec:
      containers:
        - name: hello
          image: ghcr.io/example/hello:1.0.0
`;
const overlay = (tag: string) =>
  `resources:\n  - ../../base\nimages:\n  - name: ghcr.io/example/hello\n    newTag: ${tag}\n`;

describe('rendered diff on pull requests (sandbox GitHub, real kustomize)', () => {
  let stack: Stack;
  const owner = 'developer';
  const repo = 'gitops';

  beforeAll(async () => {
    stack = await startStack();
    await stack.client.createRepo({
      name: repo,
      files: {
        '.github/escalator.yml':
          'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n',
        'apps/hello/base/deployment.yaml': base,
        'apps/hello/base/kustomization.yaml': 'resources: [deployment.yaml]\n',
        'apps/hello/overlays/dev/kustomization.yaml': overlay('1.0.0'),
        'apps/hello/overlays/prod/kustomization.yaml': overlay('1.0.0'),
        'apps/world/base/kustomization.yaml': 'resources: [deployment.yaml]\n',
        'apps/world/base/deployment.yaml': base.replaceAll('hello', 'world'),
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const ourComments = async (number: number) =>
    (await stack.user.rest.issues.listComments({ owner, repo, issue_number: number })).data.filter((c) =>
      c.body?.startsWith('<!-- escalator:diff v1 -->'),
    );

  it(
    'posts one sticky comment with the per-object diff, and edits it on the next push',
    { timeout: 120_000 },
    async () => {
      await stack.client.commit(`${owner}/${repo}`, {
        branch: 'bump',
        from: 'main',
        files: { 'apps/hello/overlays/dev/kustomization.yaml': overlay('1.1.0') },
      });
      const pull = await stack.client.openPull(`${owner}/${repo}`, { title: 'Bump hello', head: 'bump' });
      const first = await eventually(async () => (await ourComments(pull.number))[0], {
        what: 'the diff comment',
        timeoutMs: 90_000,
      });
      expect(first.body).toContain('ghcr.io/example/hello:1.0.0');
      expect(first.body).toContain('ghcr.io/example/hello:1.1.0');
      expect(first.body).toContain('Deployment');
      // Only the targets the pull request's files reach, as `escalator diff` renders (issue 21).
      expect(first.body).toContain('**1 target checked**: 1 changed, 0 unchanged');
      expect(first.body).not.toContain('overlays/prod');
      expect(first.body).not.toContain('apps/world');
      // The command names commits a clone has: base and the branch head, never GitHub's merge commit.
      const fresh = (await stack.user.rest.pulls.get({ owner, repo, pull_number: pull.number })).data;
      const command = /Reproduce locally: `([^`]+)`/.exec(first.body ?? '')?.[1];
      const merged = fresh.merge_commit_sha ? ' --merged' : '';
      expect(command).toBe(
        `git fetch origin && git fetch origin pull/${pull.number}/head && escalator diff --base ${fresh.base.sha.slice(0, 7)} --head ${fresh.head.sha.slice(0, 7)}${merged}`,
      );
      const check = await eventually(
        async () =>
          (await stack.user.rest.checks.listForRef({ owner, repo, ref: pull.head.sha, check_name: 'escalator/diff' }))
            .data.check_runs[0],
        { what: 'the diff check' },
      );
      expect(check.conclusion).toBe('success');

      const second = await stack.client.commit(`${owner}/${repo}`, {
        branch: 'bump',
        files: { 'apps/hello/overlays/dev/kustomization.yaml': overlay('1.2.0') },
      });
      const updated = await eventually(
        async () => {
          const comments = await ourComments(pull.number);
          return comments[0]?.body?.includes('ghcr.io/example/hello:1.2.0') ? comments : undefined;
        },
        { what: 'the comment to follow the new head', timeoutMs: 90_000 },
      );
      expect(updated).toHaveLength(1);
      expect(updated[0]!.id).toBe(first.id);
      const secondCheck = await eventually(
        async () =>
          (await stack.user.rest.checks.listForRef({ owner, repo, ref: second.sha, check_name: 'escalator/diff' })).data
            .check_runs[0],
        { what: 'the check on the new head' },
      );
      expect(secondCheck.conclusion).toBe('success');
    },
  );

  it('fails the check when the PR breaks the render at head', { timeout: 120_000 }, async () => {
    await stack.client.commit(`${owner}/${repo}`, {
      branch: 'broken',
      from: 'main',
      files: { 'apps/hello/overlays/dev/kustomization.yaml': 'resources:\n  - ../../missing\n' },
    });
    const pull = await stack.client.openPull(`${owner}/${repo}`, { title: 'Break it', head: 'broken' });
    const check = await eventually(
      async () =>
        (await stack.user.rest.checks.listForRef({ owner, repo, ref: pull.head.sha, check_name: 'escalator/diff' }))
          .data.check_runs[0],
      { what: 'the failing check', timeoutMs: 90_000 },
    );
    expect(check.conclusion).toBe('failure');
    const [comment] = await ourComments(pull.number);
    expect(comment?.body).toMatch(/fail/i);
  });

  describe('a change to a base several environments render (issue 33.5)', () => {
    const shared = 'shared';
    const config = [
      'environments:',
      '  - name: dev',
      '    paths: ["apps/*/overlays/dev"]',
      '    from: registry',
      '  - name: staging',
      '    paths: ["apps/*/overlays/staging"]',
      '    from: dev',
      '    soak: 1h',
      '  - name: prod',
      '    paths: ["apps/*/overlays/prod"]',
      '    from: staging',
      '    reviewers: ["@example/release-managers"]',
      '',
    ].join('\n');
    const plainOverlay = 'resources:\n  - ../../base\n';
    const header = '### Rendered manifest diff\n\nBase ';

    beforeAll(async () => {
      await stack.client.createRepo({
        name: shared,
        files: {
          '.github/escalator.yml': config,
          'apps/hello/base/deployment.yaml': base,
          'apps/hello/base/kustomization.yaml': 'resources: [deployment.yaml]\n',
          'apps/hello/overlays/dev/kustomization.yaml': plainOverlay,
          'apps/hello/overlays/staging/kustomization.yaml': plainOverlay,
          'apps/hello/overlays/prod/kustomization.yaml': plainOverlay,
        },
      });
    });

    const stickyOf = (number: number) =>
      eventually(
        async () =>
          (await stack.user.rest.issues.listComments({ owner, repo: shared, issue_number: number })).data.find((c) =>
            c.body?.startsWith('<!-- escalator:diff v1 -->'),
          ),
        { what: 'the diff comment', timeoutMs: 90_000 },
      );

    it(
      'starts the sticky comment with the environments it reaches at once and the gates it skips',
      { timeout: 120_000 },
      async () => {
        await stack.client.commit(`${owner}/${shared}`, {
          branch: 'base-change',
          from: 'main',
          files: { 'apps/hello/base/deployment.yaml': base.replace('hello:1.0.0', 'hello:1.1.0') },
        });
        const pull = await stack.client.openPull(`${owner}/${shared}`, { title: 'Base change', head: 'base-change' });
        const comment = await stickyOf(pull.number);
        expect(comment.body?.slice(0, comment.body.indexOf(header) + header.length)).toBe(
          [
            '<!-- escalator:diff v1 -->',
            '',
            '> [!WARNING]',
            "> **This change reaches dev, staging and prod at once** through `apps/hello/base`: it skips staging's promotion from dev and soak (1h), and prod's promotion from staging and reviewer (`@example/release-managers`).",
            '',
            header,
          ].join('\n'),
        );
        expect(comment.body).toContain('**3 targets checked**: 3 changed, 0 unchanged');
      },
    );

    it("says nothing of it on a change to dev's overlay only", { timeout: 120_000 }, async () => {
      await stack.client.commit(`${owner}/${shared}`, {
        branch: 'dev-change',
        from: 'main',
        files: { 'apps/hello/overlays/dev/kustomization.yaml': overlay('1.2.0') },
      });
      const pull = await stack.client.openPull(`${owner}/${shared}`, { title: 'Dev change', head: 'dev-change' });
      const comment = await stickyOf(pull.number);
      expect(comment.body?.startsWith(`<!-- escalator:diff v1 -->\n\n${header}`)).toBe(true);
      expect(comment.body).toContain('**1 target checked**: 1 changed, 0 unchanged');
      expect(comment.body).not.toContain('at once');
    });
  });

  it(
    'fails escalator/config on a PR that breaks .github/escalator.yml, with file:line:col',
    { timeout: 120_000 },
    async () => {
      await stack.client.commit(`${owner}/${repo}`, {
        branch: 'config',
        from: 'main',
        files: {
          '.github/escalator.yml':
            'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    form: registry\n',
        },
      });
      const pull = await stack.client.openPull(`${owner}/${repo}`, { title: 'Config', head: 'config' });
      const check = await eventually(
        async () =>
          (await stack.user.rest.checks.listForRef({ owner, repo, ref: pull.head.sha, check_name: 'escalator/config' }))
            .data.check_runs[0],
        { what: 'the config check', timeoutMs: 90_000 },
      );
      expect(check.conclusion).toBe('failure');
      expect(check.output.summary).toContain('.github/escalator.yml:4:5:');
    },
  );
});
