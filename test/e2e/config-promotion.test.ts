import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainConfig } from '../support/environments.js';
import { eventually, postImage, readFile, startStack, waitIndexed, type Stack } from '../support/stack.js';

// docs/configuration.md, "Promote configuration": staging and prod take what people merge into
// the environment before them, three-way, in the promotion pull request, behind the same gates.
const promoted = '    soak: 2s\n    promote: { config: true }\n';
const config = chainConfig({ extra: { staging: promoted, prod: promoted } });
const digest = `sha256:${'0'.repeat(64)}`;
const kustomization = (app: string, tag: string, extra = '') =>
  `resources: [../../base]\n${extra}patches:\n  - path: env.yaml\nimages:\n  - name: ghcr.io/example/${app}\n    newTag: ${tag}\n    digest: ${digest}\n`;
/** A strategic-merge patch setting the container's environment (the file people change). */
const envPatch = (app: string, level: string, replicas: number) =>
  `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${app}
spec:
  replicas: ${replicas} # this environment's own size
  template:
    spec:
      containers:
        - name: ${app}
          env:
            - name: LOG_LEVEL
              value: ${level}
`;
const deployment = (app: string) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ${app}}\nspec:\n  template:\n    spec:\n      containers:\n        - name: ${app}\n          image: ghcr.io/example/${app}:1.0.0\n`;

function appFiles(app: string, levels: { dev: string; staging: string; prod: string }): Record<string, string> {
  return {
    [`apps/${app}/base/deployment.yaml`]: deployment(app),
    [`apps/${app}/base/kustomization.yaml`]: 'resources: [deployment.yaml]\n',
    [`apps/${app}/overlays/dev/kustomization.yaml`]: kustomization(app, '1.0.0'),
    [`apps/${app}/overlays/dev/env.yaml`]: envPatch(app, levels.dev, 1),
    [`apps/${app}/overlays/staging/kustomization.yaml`]: kustomization(app, '1.0.0', 'namePrefix: staging-\n'),
    [`apps/${app}/overlays/staging/env.yaml`]: envPatch(app, levels.staging, 2),
    [`apps/${app}/overlays/prod/kustomization.yaml`]: kustomization(app, '1.0.0'),
    [`apps/${app}/overlays/prod/env.yaml`]: envPatch(app, levels.prod, 5),
  };
}

describe('configuration promotion dev → staging → prod (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  let owner: string;
  const repo = 'gitops';
  const full = () => `${owner}/${repo}`;

  beforeAll(async () => {
    stack = await startStack({}, { name: 'e2e-config' });
    const created = await stack.client.createRepo({
      name: repo,
      files: {
        '.github/escalator.yml': config,
        ...appFiles('hello', { dev: 'info', staging: 'info', prod: 'info' }),
        ...appFiles('world', { dev: 'info', staging: 'info', prod: 'info' }),
        // staging keeps its own log level for `quiet`: dev's change meets a value staging keeps.
        ...appFiles('quiet', { dev: 'info', staging: 'warn', prod: 'warn' }),
      },
    });
    owner = created.full_name.split('/')[0] as string;
    await waitIndexed(stack, owner, repo);
  });
  afterAll(async () => {
    await stack?.close();
  });

  const openPulls = async () => (await stack.user.rest.pulls.list({ owner, repo, state: 'open' })).data;
  const pullOn = (branch: string, predicate: (p: Awaited<ReturnType<typeof openPulls>>[number]) => boolean) =>
    eventually(async () => (await openPulls()).find((p) => p.head.ref === branch && predicate(p)), {
      what: `an open PR on ${branch}`,
      timeoutMs: 60_000,
    });
  const soakPassed = (sha: string) =>
    eventually(
      async () => {
        const { data } = await stack.user.rest.checks.listForRef({
          owner,
          repo,
          ref: sha,
          check_name: 'escalator/soak',
        });
        return data.check_runs[0]?.conclusion === 'success' ? data.check_runs[0] : undefined;
      },
      { what: 'the soak check to pass', timeoutMs: 30_000 },
    );
  /** A person's pull request changing files on main, merged. */
  const mergeChange = async (branch: string, title: string, files: Record<string, string>) => {
    await stack.client.commit(full(), { branch, from: 'main', files, message: title });
    const pull = await stack.client.openPull(full(), { title, head: branch });
    await stack.client.mergePull(full(), pull.number);
    return pull.number;
  };
  const envPath = (app: string, env: string) => `apps/${app}/overlays/${env}/env.yaml`;

  it(
    'carries a merged change to staging, then to prod after the soak, keeping what each keeps',
    { timeout: 150_000 },
    async () => {
      const source = await mergeChange('debug-logs', 'Debug logs for hello', {
        [envPath('hello', 'dev')]: envPatch('hello', 'debug', 1),
      });

      const staging = await pullOn('escalator/promote/staging/hello', (p) => p.labels.length > 0);
      expect(staging.title).toBe('Promote hello configuration to staging');
      expect(staging.body).toContain(`#${source} Debug logs for hello`);
      expect(staging.body).toContain('LOG_LEVEL');
      // The log level travels; staging's replicas and its comment stay.
      expect(await readFile(stack, owner, repo, envPath('hello', 'staging'), staging.head.sha)).toBe(
        envPatch('hello', 'debug', 2),
      );
      await soakPassed(staging.head.sha);
      await stack.client.mergePull(full(), staging.number);

      const prod = await pullOn('escalator/promote/prod/hello', (p) => p.labels.length > 0);
      expect(prod.title).toBe('Promote hello configuration to prod');
      // Provenance: the person's pull request in dev, then the promotion into staging.
      expect(prod.body).toContain(`#${source} Debug logs for hello`);
      expect(prod.body).toContain(`#${staging.number} Promote hello configuration to staging`);
      expect(await readFile(stack, owner, repo, envPath('hello', 'prod'), prod.head.sha)).toBe(
        envPatch('hello', 'debug', 5),
      );
      await soakPassed(prod.head.sha);
      await stack.client.mergePull(full(), prod.number);
      expect(await readFile(stack, owner, repo, envPath('hello', 'prod'), 'main')).toBe(envPatch('hello', 'debug', 5));
      expect(await readFile(stack, owner, repo, `apps/hello/overlays/prod/kustomization.yaml`, 'main')).toBe(
        kustomization('hello', '1.0.0'),
      );
    },
  );

  it('carries the waiting image version and the change in one pull request', { timeout: 150_000 }, async () => {
    const newDigest = `sha256:${'ab'.repeat(32)}`;
    expect((await postImage(stack, `ghcr.io/example/world:1.1.0@${newDigest}`)).status).toBe(202);
    const bump = await pullOn('escalator/dev/world', (p) => p.labels.length > 0);
    await stack.client.mergePull(full(), bump.number);
    const source = await mergeChange('world-debug', 'Debug logs for world', {
      [envPath('world', 'dev')]: envPatch('world', 'debug', 1),
    });

    const staging = await pullOn('escalator/promote/staging/world', (p) => p.title.includes('configuration'));
    expect(staging.title).toBe('Promote world 1.1.0 and its configuration to staging');
    expect(staging.body).toContain(`#${source} Debug logs for world`);
    expect(await readFile(stack, owner, repo, envPath('world', 'staging'), staging.head.sha)).toBe(
      envPatch('world', 'debug', 2),
    );
    expect(await readFile(stack, owner, repo, 'apps/world/overlays/staging/kustomization.yaml', staging.head.sha)).toBe(
      kustomization('world', '1.1.0', 'namePrefix: staging-\n').replace(digest, newDigest),
    );
  });

  it(
    'opens nothing for a change whose every edit meets a value staging keeps, and says why on it',
    { timeout: 90_000 },
    async () => {
      const source = await mergeChange('quiet-debug', 'Debug logs for quiet', {
        [envPath('quiet', 'dev')]: envPatch('quiet', 'debug', 1),
      });
      const comment = await eventually(
        async () => {
          const { data } = await stack.user.rest.issues.listComments({ owner, repo, issue_number: source });
          return data.find((c) => c.body?.includes('did not open a promotion'));
        },
        { what: 'the comment on the source pull request', timeoutMs: 60_000 },
      );
      expect(comment.body).toContain('**staging**');
      expect(comment.body).toContain('staging keeps');
      expect(comment.body).toContain('warn');
      expect((await openPulls()).some((p) => p.head.ref === 'escalator/promote/staging/quiet')).toBe(false);
      expect(await readFile(stack, owner, repo, envPath('quiet', 'staging'), 'main')).toBe(
        envPatch('quiet', 'warn', 2),
      );
    },
  );
});
