import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, postImage, readFile, redisUrl, startStack, type Stack } from '../support/stack.js';

const config = `environments:
  - name: dev
    paths: ["apps/*/overlays/dev"]
    from: registry
  - name: staging
    paths: ["apps/*/overlays/staging"]
    from: dev
`;
const devKustomization = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../../base
images:
  # the app itself
  - {name: ghcr.io/example/hello, newTag: 1.0.0}   # bumped by Escalator
`;
const stagingKustomization = `resources: [../../base]
images:
  - name: ghcr.io/example/hello
    newTag: "1.0.0"
`;
const digest = `sha256:${'ab'.repeat(32)}`;

describe('image pushed → pull request (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  let owner: string;
  const repo = 'gitops';

  beforeAll(async () => {
    stack = await startStack();
    const created = await stack.client.createRepo({
      name: repo,
      files: {
        '.github/escalator.yml': config,
        'apps/hello/base/deployment.yaml':
          'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: hello}\nspec:\n  template:\n    spec:\n      containers:\n        - name: hello\n          image: ghcr.io/example/hello:1.0.0\n',
        'apps/hello/overlays/dev/kustomization.yaml': devKustomization,
        'apps/hello/overlays/staging/kustomization.yaml': stagingKustomization,
      },
    });
    owner = created.full_name.split('/')[0] as string;
  });
  afterAll(async () => {
    if (process.env.E2E_CALLS) process.stdout.write(`${JSON.stringify(stack.calls, null, 1)}\n`);
    await stack?.close();
  });

  it('opens one PR that bumps only the dev overlay, byte for byte', async () => {
    const res = await postImage(stack, `ghcr.io/example/hello:1.2.3@${digest}`);
    expect(res.status).toBe(202);
    // The PR is complete once its labels are on (they are the last write of a bump).
    const pull = await eventually(
      async () =>
        (await stack.user.rest.pulls.list({ owner, repo, state: 'open' })).data.find((p) => p.labels.length === 2),
      { what: 'the bump pull request' },
    );
    expect(pull.title).toBe('Bump hello to 1.2.3 in dev');
    expect(pull.head.ref).toBe('escalator/dev/hello');
    expect(pull.labels.map((label) => label.name).sort()).toEqual(['env:dev', 'escalator']);
    expect(pull.body).toContain(
      '<!-- escalator:v1 {"kind":"bump","environment":"dev","app":"hello","images":[{"repository":"ghcr.io/example/hello","tag":"1.2.3","digest":"sha256:',
    );
    const dev = await readFile(stack, owner, repo, 'apps/hello/overlays/dev/kustomization.yaml', pull.head.sha);
    expect(dev).toBe(devKustomization.replace('newTag: 1.0.0}', 'newTag: 1.2.3}'));
    const staging = await readFile(stack, owner, repo, 'apps/hello/overlays/staging/kustomization.yaml', pull.head.sha);
    expect(staging).toBe(stagingKustomization);
    const files = await stack.user.rest.pulls.listFiles({ owner, repo, pull_number: pull.number });
    expect(files.data.map((file) => file.filename)).toEqual(['apps/hello/overlays/dev/kustomization.yaml']);
  });

  it('updates the same PR for a newer image, and does nothing for a redelivery', async () => {
    const before = (await stack.user.rest.pulls.list({ owner, repo, state: 'open' })).data;
    expect(before).toHaveLength(1);
    expect((await postImage(stack, 'ghcr.io/example/hello:1.2.4')).status).toBe(202);
    const pull = await eventually(
      async () => {
        const open = (await stack.user.rest.pulls.list({ owner, repo, state: 'open' })).data;
        return open[0]?.title === 'Bump hello to 1.2.4 in dev' ? open : undefined;
      },
      { what: 'the PR to move to 1.2.4' },
    );
    expect(pull).toHaveLength(1);
    expect(pull[0]!.number).toBe(before[0]!.number);
    const commits = await stack.user.rest.pulls.listCommits({ owner, repo, pull_number: pull[0]!.number });
    expect(commits.data).toHaveLength(2);
  });

  it('after its PR is merged and the branch deleted, opens the next bump in five GitHub calls', async () => {
    const [open] = (await stack.user.rest.pulls.list({ owner, repo, state: 'open' })).data;
    const living = new Redis(redisUrl);
    const record = `${stack.prefix}:living:${owner}/${repo}:escalator/dev/hello`;
    expect(await living.hget(record, 'at')).toBe('escalator/dev/hello');
    await stack.client.mergePull(`${owner}/${repo}`, open!.number);
    await stack.user.rest.git.deleteRef({ owner, repo, ref: 'heads/escalator/dev/hello' });
    // The pull_request.closed webhook makes Escalator forget the branch it wrote.
    try {
      await eventually(async () => ((await living.hget(record, 'at')) === null ? true : undefined), {
        what: 'the closed pull request to be forgotten',
      });
    } finally {
      await living.quit();
    }
    // The merge opens the staging promotion; its writes are done once its labels are on.
    await eventually(
      async () =>
        (await stack.user.rest.pulls.list({ owner, repo, state: 'open' })).data.find(
          (p) => p.head.ref === 'escalator/promote/staging/hello' && p.labels.length === 2,
        ),
      { what: 'the staging promotion' },
    );
    const from = stack.calls.length;
    expect((await postImage(stack, 'ghcr.io/example/hello:1.2.5')).status).toBe(202);
    const next = await eventually(
      async () =>
        (await stack.user.rest.pulls.list({ owner, repo, state: 'open' })).data.find(
          (p) => p.title === 'Bump hello to 1.2.5 in dev' && p.labels.length === 2,
        ),
      { what: 'the next bump pull request' },
    );
    expect(next.number).not.toBe(open!.number);
    // The bump's writes: the branch created at once (no read of it first), one commit, the PR, its labels.
    const writes = stack.calls
      .slice(from)
      .filter((call) => /^POST .*(\/git\/refs|\/graphql|\/pulls|\/labels)$/.test(call.route));
    expect(writes.map((call) => `${call.status} ${call.route}`)).toEqual([
      '201 POST /repos/{owner}/{repo}/git/refs',
      '200 POST /graphql',
      '201 POST /repos/{owner}/{repo}/pulls',
      '200 POST /repos/{owner}/{repo}/issues/{issue_number}/labels',
    ]);
  });

  it('ignores an image nobody uses: its image job finds no target', async () => {
    const res = await postImage(stack, 'ghcr.io/example/unused:9.9.9');
    expect(res.status).toBe(202);
    const [id] = ((await res.json()) as { jobs: string[] }).jobs;
    const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue('image', { connection, prefix: stack.prefix });
    try {
      const job = await eventually(
        async () => {
          const found = await queue.getJob(id as string);
          return found?.finishedOn ? found : undefined;
        },
        { what: 'the image job to finish' },
      );
      expect(job.returnvalue).toEqual({ scheduled: 0, targets: [], nothing: 'no-environment' });
      expect(job.failedReason).toBeUndefined();
    } finally {
      await queue.close();
      await connection.quit();
    }
  });
});
