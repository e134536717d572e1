import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Exchange } from '@escalator/github-sandbox';
import type { RepoIndex } from '../../src/adapters/store/subscriptions.js';
import { chainConfig } from '../support/environments.js';
import { eventually, readFile, redisUrl, startStack, waitIndexed, type Stack } from '../support/stack.js';

// docs/configuration.md, "Promote configuration": a merge's landing job takes what the merge
// changed from the index the push's index job built from it, and the promotion reads dev's files
// before and after the change from the blob store; neither asks GitHub again.
const config = chainConfig({ environments: ['dev', 'staging'], extra: { staging: '    promote: { config: true }\n' } });
const envPatch = (app: string, level: string) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${app}\nspec:\n  template:\n    spec:\n      containers:\n        - name: ${app}\n          env:\n            - name: LOG_LEVEL\n              value: ${level}\n`;
const kustomization = (app: string) =>
  `resources: [../../base]\npatches:\n  - path: env.yaml\nimages:\n  - name: ghcr.io/example/${app}\n    newTag: 1.0.0\n`;

function appFiles(app: string): Record<string, string> {
  return {
    [`apps/${app}/base/deployment.yaml`]: `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ${app}}\nspec:\n  template:\n    spec:\n      containers:\n        - name: ${app}\n          image: ghcr.io/example/${app}:1.0.0\n`,
    [`apps/${app}/base/kustomization.yaml`]: 'resources: [deployment.yaml]\n',
    [`apps/${app}/overlays/dev/kustomization.yaml`]: kustomization(app),
    [`apps/${app}/overlays/dev/env.yaml`]: envPatch(app, 'info'),
    [`apps/${app}/overlays/staging/kustomization.yaml`]: kustomization(app),
    [`apps/${app}/overlays/staging/env.yaml`]: envPatch(app, 'info'),
  };
}

describe('landing of a configuration change (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  let redis: Redis;
  let owner: string;
  const repo = 'landing-index';
  const full = () => `${owner}/${repo}`;
  /** Escalator's reads of the API since the test started them (the person's own calls go through the control API). */
  const reads: Exchange[] = [];

  beforeAll(async () => {
    stack = await startStack({}, { name: 'landing-index' });
    redis = new Redis(redisUrl);
    const created = await stack.client.createRepo({
      name: repo,
      files: { '.github/escalator.yml': config, ...appFiles('hello'), ...appFiles('world') },
    });
    owner = created.full_name.split('/')[0] as string;
    await waitIndexed(stack, owner, repo);
    stack.sim.onExchange((exchange) => {
      if (exchange.surface === 'api' && exchange.method === 'GET') reads.push(exchange);
    });
  }, 60_000);
  afterAll(async () => {
    await redis?.quit();
    await stack?.close();
  });

  const loadIndex = async () =>
    JSON.parse((await redis.get(`${stack.prefix}:index:repo:${owner}/${repo}`)) ?? 'null') as RepoIndex | null;
  const stagingPull = (app: string) =>
    eventually(
      async () => {
        const { data } = await stack.user.rest.pulls.list({ owner, repo, state: 'open' });
        return data.find((p) => p.head.ref === `escalator/promote/staging/${app}` && p.labels.length > 0);
      },
      { what: `the staging promotion of ${app}`, timeoutMs: 60_000 },
    );
  /** A person's pull request changing `files` on main, merged: the merge commit and its parent. */
  const mergeChange = async (branch: string, files: Record<string, string>) => {
    const before = (await stack.user.rest.repos.getBranch({ owner, repo, branch: 'main' })).data.commit.sha;
    await stack.client.commit(full(), { branch, from: 'main', files, message: branch });
    const pull = await stack.client.openPull(full(), { title: `Change ${branch}`, head: branch });
    const merged = await stack.client.mergePull(full(), pull.number);
    return { merge: merged.sha, parent: before, number: pull.number };
  };

  it('takes what the merge changed from the index, and the files before it from the blob store', async () => {
    const envPath = 'apps/hello/overlays/dev/env.yaml';
    const { merge, parent } = await mergeChange('hello-debug', { [envPath]: envPatch('hello', 'debug') });
    const staging = await stagingPull('hello');
    expect(staging.title).toBe('Promote hello configuration to staging');
    expect(await readFile(stack, owner, repo, 'apps/hello/overlays/staging/env.yaml', staging.head.sha)).toBe(
      envPatch('hello', 'debug'),
    );

    // The index built from the merge kept what it changed, and dev's env.yaml as its parent held it.
    const index = await loadIndex();
    expect(index?.sha).toBe(merge);
    expect(index?.changes?.parents[0]).toBe(parent);
    expect(index?.changes?.files).toContain(envPath);
    expect(index?.changes?.before[envPath]).toMatch(/^[0-9a-f]{40}$/);
    expect(index?.changes?.before[envPath]).not.toBe(index?.blobs?.shas[envPath]);

    // Nobody asked GitHub for the merge commit, nor for dev's env.yaml at the merge's parent.
    const paths = reads.map((exchange) => `${exchange.path}${exchange.url.search}`);
    expect(paths.filter((path) => path.includes(`/commits/${merge}`))).toEqual([]);
    expect(paths.filter((path) => path.includes(`/contents/${envPath}`) && path.includes(parent))).toEqual([]);
  }, 90_000);

  it('reads a merge whose files do not fit the index’s one page from GitHub, with the same outcome', async () => {
    const envPath = 'apps/world/overlays/dev/env.yaml';
    // 100 more files outside every environment: the index's read of the head lists at most 100.
    const notes = Object.fromEntries(
      Array.from({ length: 100 }, (_, i) => [`notes/${String(i).padStart(3, '0')}.md`, `note ${i}\n`]),
    );
    const { merge } = await mergeChange('world-debug', { [envPath]: envPatch('world', 'debug'), ...notes });
    const staging = await stagingPull('world');
    expect(staging.title).toBe('Promote world configuration to staging');
    expect(await readFile(stack, owner, repo, 'apps/world/overlays/staging/env.yaml', staging.head.sha)).toBe(
      envPatch('world', 'debug'),
    );
    const index = await loadIndex();
    expect(index?.sha).toBe(merge);
    expect(index?.changes).toBeUndefined();
    // The landing asked GitHub what the merge changed.
    expect(reads.some((exchange) => exchange.path.endsWith(`/commits/${merge}`))).toBe(true);
  }, 90_000);
});
