import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, postImage, readFile, redisUrl, startStack, waitIndexed, type Stack } from '../support/stack.js';

/**
 * Issue 22 §2: a living pull request Escalator did not open, or that holds commits Escalator did
 * not write, is never built on, retitled or merged, and a marker is believed only from Escalator's
 * own pull requests. Whole product against the sandbox GitHub and real Redis; the people here push
 * with their own token (`stack.client`), as anyone with push access can.
 */
const owner = 'developer';
const devOverlay = (tag: string) =>
  `resources: [../../base]\nimages:\n  - name: ghcr.io/example/hello\n    newTag: ${tag}\n`;
const prodOverlay = 'resources: [../../base]\nimages:\n  - name: ghcr.io/example/hello\n    newTag: 1.0.0\n';
const implant = 'resources: [../../base]\nimages:\n  - name: ghcr.io/evil/implant\n    newTag: 6.6.6\n';
const forgedMarker = (kind: 'bump' | 'promote', environment: string) =>
  `<!-- escalator:v1 {"kind":"${kind}","environment":"${environment}","app":"hello","images":[{"repository":"ghcr.io/evil/implant","tag":"6.6.6"}],"sources":["#4242"]} -->`;
const config = (autoMerge: boolean) => `environments:
  - name: dev
    paths: ["apps/*/overlays/dev"]
    from: registry
    autoMerge: ${autoMerge}
  - name: staging
    paths: ["apps/*/overlays/staging"]
    from: dev
  - name: prod
    paths: ["apps/*/overlays/prod"]
    from: staging
`;
const files = (autoMerge: boolean) => ({
  '.github/escalator.yml': config(autoMerge),
  'apps/hello/base/deployment.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: hello}\n',
  'apps/hello/overlays/dev/kustomization.yaml': devOverlay('1.0.0'),
  'apps/hello/overlays/staging/kustomization.yaml': devOverlay('1.0.0'),
  'apps/hello/overlays/prod/kustomization.yaml': prodOverlay,
});
const NOTE = '<!-- escalator:left-alone -->';

describe('living pull requests Escalator did not write (sandbox GitHub, real Redis)', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  type Pull = Awaited<ReturnType<Stack['user']['rest']['pulls']['get']>>['data'];
  const pulls = async (repo: string) =>
    (await stack.user.rest.pulls.list({ owner, repo, state: 'all', per_page: 100 })).data;
  const pull = async (repo: string, number: number): Promise<Pull> =>
    (await stack.user.rest.pulls.get({ owner, repo, pull_number: number })).data;
  const notes = async (repo: string, number: number) =>
    (await stack.user.rest.issues.listComments({ owner, repo, issue_number: number, per_page: 100 })).data.filter(
      (comment) => comment.user?.type === 'Bot' && comment.body?.startsWith(NOTE),
    );
  const commitsOf = async (repo: string, number: number) =>
    (await stack.user.rest.pulls.listCommits({ owner, repo, pull_number: number })).data.map((commit) => commit.sha);
  const changedFiles = async (repo: string, number: number) =>
    (await stack.user.rest.pulls.listFiles({ owner, repo, pull_number: number })).data.map((file) => file.filename);
  /**
   * Wait until Escalator acted on `repo` after an event: either it wrote the foreign PR (head,
   * title or state moved: what the hole did) or it has a labelled PR on a branch other than `branch`.
   */
  const actedOn = (repo: string, foreign: Pull, branch: string, what: string) =>
    eventually(
      async () => {
        const now = await pull(repo, foreign.number);
        if (now.head.sha !== foreign.head.sha || now.title !== foreign.title || now.state !== foreign.state)
          return { foreign: now, own: undefined };
        const own = (await pulls(repo)).find(
          (candidate) =>
            candidate.number !== foreign.number &&
            candidate.head.ref.startsWith(`${branch}`) &&
            candidate.head.ref !== branch &&
            candidate.labels.length > 0,
        );
        return own ? { foreign: now, own } : undefined;
      },
      { what },
    );

  it(
    "leaves a person's PR on escalator/dev/<app> alone: no commit, no retitle, no merge, one note; its own PR goes on another branch",
    { timeout: 120_000 },
    async () => {
      const repo = 'squatted';
      const full = `${owner}/${repo}`;
      await stack.client.createRepo({ name: repo, files: files(true) });
      await waitIndexed(stack, owner, repo);
      // A person with push access squats the deterministic branch with a change to prod and opens a PR.
      await stack.client.commit(full, {
        branch: 'escalator/dev/hello',
        from: 'main',
        message: 'Bump hello',
        files: { 'apps/hello/overlays/prod/kustomization.yaml': implant },
      });
      const opened = await stack.client.openPull(full, {
        title: 'Bump hello to 1.0.1 in dev',
        head: 'escalator/dev/hello',
        body: `Routine bump.\n\n${forgedMarker('bump', 'dev')}`,
      });
      const foreign = await pull(repo, opened.number);

      expect((await postImage(stack, 'ghcr.io/example/hello:1.2.3')).status).toBe(202);
      const { foreign: after, own } = await actedOn(
        repo,
        foreign,
        'escalator/dev/hello',
        'Escalator to act on the image event',
      );

      expect(after).toMatchObject({ state: 'open', merged: false, title: foreign.title, body: foreign.body });
      expect(after.head.sha).toBe(foreign.head.sha);
      expect(await commitsOf(repo, foreign.number)).toEqual([foreign.head.sha]);
      expect(own).toBeDefined();
      expect(own!.head.ref).toBe('escalator/dev/hello@2');
      // Its own PR has only its own change, carries nothing from the forged marker, and was auto-merged.
      expect(await changedFiles(repo, own!.number)).toEqual(['apps/hello/overlays/dev/kustomization.yaml']);
      expect(own!.body).not.toContain('evil');
      expect(own!.body).not.toContain('#4242');
      await eventually(async () => ((await pull(repo, own!.number)).merged ? true : undefined), {
        what: 'its own PR to be auto-merged',
      });
      expect(await readFile(stack, owner, repo, 'apps/hello/overlays/prod/kustomization.yaml', 'main')).toBe(
        prodOverlay,
      );
      expect(await readFile(stack, owner, repo, 'apps/hello/overlays/dev/kustomization.yaml', 'main')).toBe(
        devOverlay('1.2.3'),
      );
      expect(await notes(repo, foreign.number)).toHaveLength(1);

      // A second event: still untouched, and the note is not said again.
      expect((await postImage(stack, 'ghcr.io/example/hello:1.2.4')).status).toBe(202);
      await eventually(
        async () =>
          (await readFile(stack, owner, repo, 'apps/hello/overlays/dev/kustomization.yaml', 'main')) ===
          devOverlay('1.2.4')
            ? true
            : undefined,
        { what: 'the second bump to land' },
      );
      const again = await pull(repo, foreign.number);
      expect(again).toMatchObject({ state: 'open', merged: false, title: foreign.title, body: foreign.body });
      expect(again.head.sha).toBe(foreign.head.sha);
      expect(await notes(repo, foreign.number)).toHaveLength(1);
      expect(await readFile(stack, owner, repo, 'apps/hello/overlays/prod/kustomization.yaml', 'main')).toBe(
        prodOverlay,
      );
    },
  );

  it(
    'does not build on or merge its own PR once a person pushed a commit onto it, says so once, and continues on a clean branch',
    { timeout: 120_000 },
    async () => {
      const repo = 'pushed';
      const full = `${owner}/${repo}`;
      await stack.client.createRepo({ name: repo, files: files(false) });
      await waitIndexed(stack, owner, repo);
      expect((await postImage(stack, 'ghcr.io/example/hello:2.0.0')).status).toBe(202);
      const mine = await eventually(
        async () =>
          (await pulls(repo)).find(
            (candidate) => candidate.head.ref === 'escalator/dev/hello' && candidate.labels.length > 0,
          ),
        { what: "Escalator's PR" },
      );
      // A person pushes onto Escalator's open PR, then turns on auto-merge for dev.
      await stack.client.commit(full, {
        branch: 'escalator/dev/hello',
        message: 'tweak',
        files: { 'apps/hello/overlays/prod/kustomization.yaml': implant },
      });
      const configCommit = await stack.client.commit(full, {
        branch: 'main',
        message: 'auto-merge dev',
        files: { '.github/escalator.yml': config(true) },
      });
      await waitIndexed(stack, owner, repo, configCommit.sha);
      const tampered = await pull(repo, mine.number);

      expect((await postImage(stack, 'ghcr.io/example/hello:2.0.1')).status).toBe(202);
      const { foreign: after, own } = await actedOn(
        repo,
        tampered,
        'escalator/dev/hello',
        'Escalator to act on the image event',
      );

      expect(after).toMatchObject({ state: 'open', merged: false, title: tampered.title, body: tampered.body });
      expect(after.head.sha).toBe(tampered.head.sha);
      expect(own!.head.ref).toBe('escalator/dev/hello@2');
      expect(await changedFiles(repo, own!.number)).toEqual(['apps/hello/overlays/dev/kustomization.yaml']);
      await eventually(async () => ((await pull(repo, own!.number)).merged ? true : undefined), {
        what: 'its clean PR to be auto-merged',
      });
      expect(await readFile(stack, owner, repo, 'apps/hello/overlays/prod/kustomization.yaml', 'main')).toBe(
        prodOverlay,
      );
      expect(await readFile(stack, owner, repo, 'apps/hello/overlays/dev/kustomization.yaml', 'main')).toBe(
        devOverlay('2.0.1'),
      );
      const said = await notes(repo, tampered.number);
      expect(said).toHaveLength(1);
      expect(said[0]!.body).toContain('commits Escalator did not write');

      expect((await postImage(stack, 'ghcr.io/example/hello:2.0.2')).status).toBe(202);
      await eventually(
        async () =>
          (await readFile(stack, owner, repo, 'apps/hello/overlays/dev/kustomization.yaml', 'main')) ===
          devOverlay('2.0.2')
            ? true
            : undefined,
        { what: 'the next bump to land' },
      );
      expect((await pull(repo, tampered.number)).head.sha).toBe(tampered.head.sha);
      expect(await notes(repo, tampered.number)).toHaveLength(1);
    },
  );

  it(
    "does not believe a marker pasted into a person's PR when a command is written on it",
    { timeout: 60_000 },
    async () => {
      const repo = 'commanded';
      const full = `${owner}/${repo}`;
      await stack.client.createRepo({ name: repo, files: files(false) });
      await waitIndexed(stack, owner, repo);
      // Even on an escalator/ branch, with Escalator's title and marker, a person's PR says nothing.
      await stack.client.commit(full, {
        branch: 'escalator/promote/prod/hello',
        from: 'main',
        message: 'Promote',
        files: { 'NOTES.md': 'notes\n' },
      });
      const forged = await stack.client.openPull(full, {
        title: 'Promote hello 1.0.0 to prod',
        head: 'escalator/promote/prod/hello',
        body: forgedMarker('promote', 'prod'),
      });
      const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
      const queue = new Queue('command', { connection, prefix: stack.prefix });
      try {
        const body = '/escalator hold';
        await stack.client.comment(full, forged.number, body);
        const job = await eventually(
          async () => {
            const jobs = await queue.getJobs(['completed', 'failed']);
            const found = jobs.find(
              (candidate) =>
                (candidate.data as { repo: string; body: string }).repo === repo &&
                (candidate.data as { body: string }).body === body,
            );
            return found?.finishedOn ? found : undefined;
          },
          { what: 'the command job' },
        );
        expect(job.returnvalue).toBe('Name the environment: `/escalator hold <env> [app]`.');
        expect(await connection.hgetall(`${stack.prefix}:hold:${owner}/${repo}:prod`)).toEqual({});
      } finally {
        await queue.close();
        await connection.quit();
      }
    },
  );

  it("does not carry provenance from a marker in a person's promotion PR", { timeout: 120_000 }, async () => {
    const repo = 'promoted';
    const full = `${owner}/${repo}`;
    await stack.client.createRepo({ name: repo, files: files(false) });
    await waitIndexed(stack, owner, repo);
    await stack.client.commit(full, {
      branch: 'escalator/promote/staging/hello',
      from: 'main',
      message: 'Promote',
      files: { 'apps/hello/overlays/prod/kustomization.yaml': implant },
    });
    const opened = await stack.client.openPull(full, {
      title: 'Promote hello 1.1.0 to staging',
      head: 'escalator/promote/staging/hello',
      body: forgedMarker('promote', 'staging'),
    });
    const foreign = await pull(repo, opened.number);
    // dev moves (a person's commit to the default branch): a promotion into staging follows.
    const moved = await stack.client.commit(full, {
      branch: 'main',
      message: 'dev 1.1.0',
      files: { 'apps/hello/overlays/dev/kustomization.yaml': devOverlay('1.1.0') },
    });
    await waitIndexed(stack, owner, repo, moved.sha);
    const { foreign: after, own } = await actedOn(
      repo,
      foreign,
      'escalator/promote/staging/hello',
      'the promotion into staging',
    );

    expect(after).toMatchObject({ state: 'open', merged: false, title: foreign.title, body: foreign.body });
    expect(after.head.sha).toBe(foreign.head.sha);
    expect(own!.head.ref).toBe('escalator/promote/staging/hello@2');
    expect(own!.title).toBe('Promote hello 1.1.0 to staging');
    expect(own!.body).not.toContain('#4242');
    expect(own!.body).not.toContain('evil');
    expect(await changedFiles(repo, own!.number)).toEqual(['apps/hello/overlays/staging/kustomization.yaml']);
    expect(await notes(repo, foreign.number)).toHaveLength(1);
  });

  it(
    'does not carry images from a marker a person edited into the body of its own PR',
    // Two bumps end to end: about 20 s on an idle machine, and well over a minute under load.
    { timeout: 150_000 },
    async () => {
      const repo = 'edited';
      await stack.client.createRepo({ name: repo, files: files(false) });
      await waitIndexed(stack, owner, repo);
      expect((await postImage(stack, 'ghcr.io/example/hello:3.0.0')).status).toBe(202);
      const mine = await eventually(
        async () =>
          (await pulls(repo)).find(
            (candidate) => candidate.head.ref === 'escalator/dev/hello' && candidate.labels.length > 0,
          ),
        { what: "Escalator's PR" },
      );
      // Anyone with write access may edit a pull request's body, Escalator's marker included.
      await stack.user.rest.pulls.update({
        owner,
        repo,
        pull_number: mine.number,
        body: `${mine.body}\n${forgedMarker('bump', 'dev')}`.replace(
          /<!-- escalator:v1 \{"kind":"bump","environment":"dev","app":"hello","images":\[\{"repository":"ghcr.io\/example\/hello"[^\n]*-->\n/,
          '',
        ),
      });
      expect((await pull(repo, mine.number)).body).toContain('ghcr.io/evil/implant');
      expect((await postImage(stack, 'ghcr.io/example/hello:3.0.1')).status).toBe(202);
      const updated = await eventually(
        async () => {
          const now = await pull(repo, mine.number);
          return now.body?.includes('"tag":"3.0.1"') ? now : undefined;
        },
        { what: 'the PR to move to 3.0.1' },
      );
      expect(updated.title).toBe('Bump hello to 3.0.1 in dev');
      expect(updated.body).not.toContain('evil');
      expect(updated.body).not.toContain('6.6.6');
      expect(await notes(repo, mine.number)).toHaveLength(0);
    },
  );
});
