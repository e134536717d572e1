import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, postImage, startStack, waitIndexed, type Stack } from '../support/stack.js';

/**
 * GitHub holds a merge only to the checks a branch requires: a promotion says when its gates are
 * not required, and auto-merge never goes around a required check (GitHub's native auto-merge
 * where the repository allows it; otherwise Escalator merges only once every required check passed).
 */
const owner = 'developer';
const overlay = (image: string, tag: string) => `images:\n  - name: ${image}\n    newTag: ${tag}\n`;
const config = (image: string) => `environments:
  - name: dev
    paths: ["apps/*/overlays/dev"]
    from: registry
    autoMerge: true
  - name: staging
    paths: ["apps/*/overlays/staging"]
    from: dev
    soak: 10m
images:
  - name: ${image}
    policy: semver
`;

describe('merge gates (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ name: 'gates' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  async function seed(repo: string, image: string) {
    await stack.client.createRepo({
      name: repo,
      files: {
        '.github/escalator.yml': config(image),
        'apps/app/overlays/dev/kustomization.yaml': overlay(image, '1.0.0'),
        'apps/app/overlays/staging/kustomization.yaml': overlay(image, '1.0.0'),
      },
    });
    await waitIndexed(stack, owner, repo);
  }
  const requireChecks = (repo: string, contexts: Array<{ context: string; integration_id?: number }>) =>
    stack.user.request('POST /repos/{owner}/{repo}/rulesets', {
      owner,
      repo,
      name: 'gates',
      target: 'branch',
      enforcement: 'active',
      conditions: { ref_name: { include: ['~DEFAULT_BRANCH'], exclude: [] } },
      rules: [
        {
          type: 'required_status_checks',
          parameters: { strict_required_status_checks_policy: false, required_status_checks: contexts },
        },
      ],
    } as never);
  const pullOn = (repo: string, branch: string, state: 'open' | 'all' = 'open') =>
    eventually(
      async () =>
        (await stack.user.rest.pulls.list({ owner, repo, state })).data.find((pull) => pull.head.ref === branch),
      { what: `a pull request on ${branch}`, timeoutMs: 60_000 },
    );

  it(
    'says on a promotion when its gates are not required checks, and stops saying it once they are',
    { timeout: 180_000 },
    async () => {
      const image = 'ghcr.io/example/gated';
      await seed('warned', image);
      await stack.client.commit(`${owner}/warned`, {
        branch: 'main',
        files: { 'apps/app/overlays/dev/kustomization.yaml': overlay(image, '1.1.0') },
      });
      const first = await pullOn('warned', 'escalator/promote/staging/app');
      expect(first.body).toContain(
        '`escalator/soak` and `escalator/hold` are not required checks on `main`: GitHub lets anyone with write access merge this pull request before they pass.',
      );
      // The sticky diff comment says it too, for the reviewer reading the rendered change.
      await eventually(
        async () =>
          (await stack.user.rest.issues.listComments({ owner, repo: 'warned', issue_number: first.number })).data.find(
            (comment) => comment.body?.includes('are not required checks on `main`'),
          ),
        { what: 'the diff comment to warn about the gates', timeoutMs: 60_000 },
      );
      await requireChecks('warned', [
        { context: 'escalator/soak', integration_id: stack.sim.app.id },
        { context: 'escalator/hold', integration_id: stack.sim.app.id },
      ]);
      await stack.client.commit(`${owner}/warned`, {
        branch: 'main',
        files: { 'apps/app/overlays/dev/kustomization.yaml': overlay(image, '1.2.0') },
      });
      const updated = await eventually(
        async () => {
          const pull = (await stack.user.rest.pulls.get({ owner, repo: 'warned', pull_number: first.number })).data;
          return pull.title.includes('1.2.0') ? pull : undefined;
        },
        { what: 'the promotion at 1.2.0', timeoutMs: 60_000 },
      );
      expect(updated.body).not.toContain('required check');
      // GitHub itself now refuses the merge while the soak is pending.
      await expect(
        stack.user.rest.pulls.merge({ owner, repo: 'warned', pull_number: first.number }),
      ).rejects.toMatchObject({ status: 405 });
      // A person's pull request promotes nothing: the required gates pass at once, and it can merge.
      await stack.client.commit(`${owner}/warned`, { branch: 'notes', from: 'main', files: { 'NOTES.md': 'n\n' } });
      const notes = await stack.client.openPull(`${owner}/warned`, { title: 'notes', head: 'notes' });
      const head = (await stack.user.rest.pulls.get({ owner, repo: 'warned', pull_number: notes.number })).data.head
        .sha;
      const gates = await eventually(
        async () => {
          const runs = (await stack.user.rest.checks.listForRef({ owner, repo: 'warned', ref: head })).data.check_runs;
          const passed = runs.filter((run) => run.output.title === 'not a promotion' && run.conclusion === 'success');
          return passed.length === 2 ? passed : undefined;
        },
        { what: 'the gates to pass on a pull request that promotes nothing', timeoutMs: 60_000 },
      );
      expect(gates.map((run) => run.name).sort()).toEqual(['escalator/hold', 'escalator/soak']);
      expect((await stack.user.rest.pulls.merge({ owner, repo: 'warned', pull_number: notes.number })).status).toBe(
        200,
      );
    },
  );

  it("turns on GitHub's auto-merge where the repository allows it, and GitHub merges once CI passes", async () => {
    const image = 'ghcr.io/example/native';
    await seed('native', image);
    await stack.user.rest.repos.update({ owner, repo: 'native', allow_auto_merge: true });
    await requireChecks('native', [{ context: 'ci/test' }]);
    expect((await postImage(stack, `${image}:1.1.0`)).status).toBe(202);
    const bump = await eventually(
      async () => {
        const pull = await pullOn('native', 'escalator/dev/app');
        return pull.auto_merge ? pull : undefined;
      },
      { what: 'auto-merge on the bump', timeoutMs: 60_000 },
    );
    expect(bump.auto_merge).toMatchObject({ merge_method: 'squash' });
    expect(bump.merged_at).toBeNull();
    await stack.user.rest.repos.createCommitStatus({
      owner,
      repo: 'native',
      sha: bump.head.sha,
      state: 'success',
      context: 'ci/test',
    });
    await eventually(
      async () =>
        (await stack.user.rest.pulls.get({ owner, repo: 'native', pull_number: bump.number })).data.merged
          ? true
          : undefined,
      { what: 'GitHub to merge the bump' },
    );
  });

  it('merges itself only once every required check passed where auto-merge is not allowed', async () => {
    const image = 'ghcr.io/example/fallback';
    await seed('fallback', image);
    await requireChecks('fallback', [{ context: 'ci/test' }]);
    expect((await postImage(stack, `${image}:1.1.0`)).status).toBe(202);
    const bump = await pullOn('fallback', 'escalator/dev/app');
    // Escalator has tried to merge (and waits): the job ran past its first attempt.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect((await stack.user.rest.pulls.get({ owner, repo: 'fallback', pull_number: bump.number })).data.merged).toBe(
      false,
    );
    await stack.user.rest.repos.createCommitStatus({
      owner,
      repo: 'fallback',
      sha: bump.head.sha,
      state: 'success',
      context: 'ci/test',
    });
    const merged = await eventually(
      async () => {
        const pull = (await stack.user.rest.pulls.get({ owner, repo: 'fallback', pull_number: bump.number })).data;
        return pull.merged ? pull : undefined;
      },
      { what: 'Escalator to merge the bump', timeoutMs: 60_000 },
    );
    expect(merged.merged_by?.login).toMatch(/\[bot\]$/);
    expect(merged.auto_merge).toBeNull();
  });
});
