import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainConfig, overlays, seedRepo } from '../support/environments.js';
import { eventually, readFile, startStack, waitIndexed, type Stack } from '../support/stack.js';

const owner = 'developer';
const overlay = (tag: string) => `images:\n  - name: ghcr.io/example/hello\n    newTag: ${tag}\n`;
const worldOverlay = (tag: string) => `images:\n  - name: ghcr.io/example/world\n    newTag: ${tag}\n`;
const configOf = (extra = '', stagingExtra = '') =>
  chainConfig({ extra: { staging: stagingExtra, prod: `    group: true\n${extra}` } });

describe('promotion behaviours (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  async function seed(repo: string, config = configOf()) {
    await seedRepo(stack, repo, config, {
      ...overlays('hello', overlay('1.0.0')),
      ...overlays('world', worldOverlay('1.0.0')),
    });
  }
  const commit = (repo: string, files: Record<string, string>) =>
    stack.client.commit(`${owner}/${repo}`, { branch: 'main', files });
  const open = async (repo: string) => (await stack.user.rest.pulls.list({ owner, repo, state: 'open' })).data;
  const pullOn = (repo: string, branch: string, predicate: (title: string) => boolean = () => true) =>
    eventually(
      async () => (await open(repo)).find((p) => p.head.ref === branch && p.labels.length > 0 && predicate(p.title)),
      { what: `a PR on ${branch}`, timeoutMs: 60_000 },
    );
  const check = (repo: string, sha: string, name: string, conclusion: string) =>
    eventually(
      async () => {
        const run = (await stack.user.rest.checks.listForRef({ owner, repo, ref: sha, check_name: name })).data
          .check_runs[0];
        return run?.conclusion === conclusion ? run : undefined;
      },
      { what: `${name} to be ${conclusion}`, timeoutMs: 60_000 },
    );
  const replyContaining = (repo: string, number: number, text: string) =>
    eventually(
      async () =>
        (await stack.user.rest.issues.listComments({ owner, repo, issue_number: number })).data.find((c) =>
          c.body?.includes(text),
        ),
      { what: `a reply containing "${text}"` },
    );

  it(
    'supersedes an open promotion with a newer version, and closes it once the target runs it',
    { timeout: 120_000 },
    async () => {
      await seed('supersede');
      await commit('supersede', { 'apps/hello/overlays/dev/kustomization.yaml': overlay('1.1.0') });
      const first = await pullOn('supersede', 'escalator/promote/staging/hello', (t) => t.includes('1.1.0'));
      await commit('supersede', { 'apps/hello/overlays/dev/kustomization.yaml': overlay('1.2.0') });
      const second = await pullOn('supersede', 'escalator/promote/staging/hello', (t) => t.includes('1.2.0'));
      expect(second.number).toBe(first.number);
      expect(
        await readFile(stack, owner, 'supersede', 'apps/hello/overlays/staging/kustomization.yaml', second.head.sha),
      ).toBe(overlay('1.2.0'));
      // Someone sets staging to 1.2.0 by hand: the promotion is no longer needed.
      await commit('supersede', { 'apps/hello/overlays/staging/kustomization.yaml': overlay('1.2.0') });
      await eventually(
        async () =>
          (await stack.user.rest.pulls.get({ owner, repo: 'supersede', pull_number: first.number })).data.state ===
          'closed'
            ? true
            : undefined,
        { what: 'the PR to close', timeoutMs: 60_000 },
      );
      await replyContaining('supersede', first.number, 'already runs the versions');
    },
  );

  it('holds promotions into an environment and releases them on command', { timeout: 120_000 }, async () => {
    await seed('hold');
    const note = await stack.client
      .openPull(`${owner}/hold`, { title: 'notes', head: 'main', base: 'main' })
      .catch(async () => {
        await stack.client.commit(`${owner}/hold`, { branch: 'notes', from: 'main', files: { 'NOTES.md': 'notes\n' } });
        return stack.client.openPull(`${owner}/hold`, { title: 'notes', head: 'notes' });
      });
    await stack.client.comment(`${owner}/hold`, note.number, '/escalator hold staging');
    await replyContaining('hold', note.number, 'is on hold');
    await commit('hold', { 'apps/hello/overlays/dev/kustomization.yaml': overlay('1.1.0') });
    const pull = await pullOn('hold', 'escalator/promote/staging/hello');
    await check('hold', pull.head.sha, 'escalator/hold', 'failure');
    await stack.client.comment(`${owner}/hold`, note.number, '/escalator release staging');
    await replyContaining('hold', note.number, 'released');
    await check('hold', pull.head.sha, 'escalator/hold', 'success');
  });

  it('rolls an environment back to the version it ran before', { timeout: 120_000 }, async () => {
    await seed('rollback');
    await commit('rollback', { 'apps/hello/overlays/dev/kustomization.yaml': overlay('1.1.0') });
    const promotion = await pullOn('rollback', 'escalator/promote/staging/hello');
    const merged = await stack.client.mergePull(`${owner}/rollback`, promotion.number);
    // The index must have seen staging at 1.1.0 before a rollback has something to return to.
    await waitIndexed(stack, owner, 'rollback', merged.sha);
    await stack.client.comment(`${owner}/rollback`, promotion.number, '/escalator rollback staging hello');
    const rollback = await pullOn('rollback', 'escalator/promote/staging/hello', (t) => t.includes('1.0.0'));
    expect(
      await readFile(stack, owner, 'rollback', 'apps/hello/overlays/staging/kustomization.yaml', rollback.head.sha),
    ).toBe(overlay('1.0.0'));
  });

  it('promotes two apps at once into two PRs, and a grouped environment into one', { timeout: 120_000 }, async () => {
    await seed('apps');
    await commit('apps', {
      'apps/hello/overlays/dev/kustomization.yaml': overlay('2.0.0'),
      'apps/world/overlays/dev/kustomization.yaml': worldOverlay('3.0.0'),
    });
    const hello = await pullOn('apps', 'escalator/promote/staging/hello');
    const world = await pullOn('apps', 'escalator/promote/staging/world');
    expect(hello.title).toBe('Promote hello 2.0.0 to staging');
    expect(world.title).toBe('Promote world 3.0.0 to staging');
    await stack.client.mergePull(`${owner}/apps`, hello.number);
    await stack.client.mergePull(`${owner}/apps`, world.number);
    // prod says group: true — one PR for every app.
    const prod = await pullOn('apps', 'escalator/promote/prod', (t) => t === 'Promote 2 apps to prod');
    const files = (await stack.user.rest.pulls.listFiles({ owner, repo: 'apps', pull_number: prod.number })).data
      .map((f) => f.filename)
      .sort();
    expect(files).toEqual([
      'apps/hello/overlays/prod/kustomization.yaml',
      'apps/world/overlays/prod/kustomization.yaml',
    ]);
  });

  it('reports drift on a PR that sets a version the source environment never ran', { timeout: 120_000 }, async () => {
    await seed('drift');
    await stack.client.commit(`${owner}/drift`, {
      branch: 'hotfix',
      from: 'main',
      files: { 'apps/hello/overlays/staging/kustomization.yaml': overlay('9.9.9-hotfix') },
    });
    const pull = await stack.client.openPull(`${owner}/drift`, { title: 'Hotfix staging', head: 'hotfix' });
    const run = await check('drift', pull.head.sha, 'escalator/drift', 'neutral');
    expect(run.output.summary).toContain('9.9.9-hotfix');
  });

  it('posts the plan instead of opening PRs in dry-run mode', { timeout: 120_000 }, async () => {
    await seed('dry', configOf('dryRun: true\n'));
    const pushed = await commit('dry', { 'apps/hello/overlays/dev/kustomization.yaml': overlay('1.5.0') });
    const run = await check('dry', pushed.sha, 'escalator/plan escalator/promote/staging/hello', 'neutral');
    expect(run.output.title).toBe('Dry run: Promote hello 1.5.0 to staging');
    expect(await open('dry')).toEqual([]);
  });
});
