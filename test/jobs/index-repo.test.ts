import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RepoIndex } from '../../src/adapters/store/subscriptions.js';
import { redisUrl, startStack, waitIndexed, type Stack } from '../support/stack.js';

const owner = 'developer';
const repo = 'reindex';
// One environment fed by the registry: a push to main starts only the index job, no promotions.
const config = 'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n';
const kustomization = (image: string, tag: string) =>
  `images:\n  - name: ghcr.io/example/${image}\n    newTag: ${tag}\n`;

/**
 * The index job against the sandbox GitHub and real Redis: a push to the default branch reads only
 * the environment files whose blob changed since the last index; the others keep what was found.
 */
describe('index job (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  let redis: Redis;

  beforeAll(async () => {
    stack = await startStack();
    redis = new Redis(redisUrl);
    await stack.client.createRepo({
      name: repo,
      files: {
        '.github/escalator.yml': config,
        'apps/hello/overlays/dev/kustomization.yaml': kustomization('hello', '1.0.0'),
        'apps/world/overlays/dev/kustomization.yaml': kustomization('world', '2.0.0'),
        'apps/world/overlays/dev/config.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: world\ndata:\n  greeting: hi\n',
      },
    });
    await waitIndexed(stack, owner, repo);
  }, 60_000);
  afterAll(async () => {
    await redis?.quit();
    await stack?.close();
  });

  const index = async () =>
    JSON.parse((await redis.get(`${stack.prefix}:index:repo:${owner}/${repo}`)) as string) as RepoIndex;
  const versions = (entry: RepoIndex) =>
    entry.files.map((file) => `${file.path} ${file.versions.map((v) => `${v.name}:${v.tag}`).join(',')}`);

  /** Commit to main, wait for the index at that commit, and return the contents calls made meanwhile. */
  async function pushAndCount(files: Record<string, string | null>): Promise<number> {
    const from = stack.calls.length;
    const { sha } = await stack.client.commit(`${owner}/${repo}`, { branch: 'main', files });
    await waitIndexed(stack, owner, repo, sha);
    return stack.calls.slice(from).filter((call) => call.route === 'GET /repos/{owner}/{repo}/contents/{path}').length;
  }

  it('reads only the changed file, and keeps the others as they were found', async () => {
    const before = await index();
    expect(Object.keys(before.blobs?.shas ?? {}).sort()).toEqual([
      'apps/hello/overlays/dev/kustomization.yaml',
      'apps/world/overlays/dev/config.yaml',
      'apps/world/overlays/dev/kustomization.yaml',
    ]);

    // The config, then the one file that changed.
    expect(await pushAndCount({ 'apps/hello/overlays/dev/kustomization.yaml': kustomization('hello', '1.1.0') })).toBe(
      2,
    );
    expect(versions(await index())).toEqual([
      'apps/hello/overlays/dev/kustomization.yaml ghcr.io/example/hello:1.1.0',
      'apps/world/overlays/dev/kustomization.yaml ghcr.io/example/world:2.0.0',
    ]);

    // Nothing in an environment changed: only the config is read.
    expect(await pushAndCount({ 'NOTES.md': 'notes\n' })).toBe(1);
    expect(versions(await index())).toEqual([
      'apps/hello/overlays/dev/kustomization.yaml ghcr.io/example/hello:1.1.0',
      'apps/world/overlays/dev/kustomization.yaml ghcr.io/example/world:2.0.0',
    ]);

    // A file without images that starts to reference one is read and indexed.
    expect(
      await pushAndCount({
        'apps/world/overlays/dev/config.yaml':
          'apiVersion: v1\nkind: Pod\nmetadata:\n  name: sidecar\nspec:\n  containers:\n    - name: s\n      image: ghcr.io/example/sidecar:3.0.0\n',
      }),
    ).toBe(2);
    expect(versions(await index())).toEqual([
      'apps/hello/overlays/dev/kustomization.yaml ghcr.io/example/hello:1.1.0',
      'apps/world/overlays/dev/config.yaml ghcr.io/example/sidecar:3.0.0',
      'apps/world/overlays/dev/kustomization.yaml ghcr.io/example/world:2.0.0',
    ]);

    // A deleted file leaves the index without being read.
    expect(await pushAndCount({ 'apps/world/overlays/dev/config.yaml': null })).toBe(1);
    expect(versions(await index())).toEqual([
      'apps/hello/overlays/dev/kustomization.yaml ghcr.io/example/hello:1.1.0',
      'apps/world/overlays/dev/kustomization.yaml ghcr.io/example/world:2.0.0',
    ]);
  });

  it('reads every file again when the index was written by another image reader', async () => {
    const stale = await index();
    await redis.set(
      `${stack.prefix}:index:repo:${owner}/${repo}`,
      JSON.stringify({ ...stale, blobs: { reader: -1, shas: stale.blobs?.shas } }),
    );
    expect(await pushAndCount({ 'NOTES.md': 'more notes\n' })).toBe(3);
    expect((await index()).blobs?.reader).toBeGreaterThan(0);
    // An index from before blobs were recorded is read in full as well.
    const { blobs: _dropped, ...old } = await index();
    await redis.set(`${stack.prefix}:index:repo:${owner}/${repo}`, JSON.stringify(old));
    expect(await pushAndCount({ 'NOTES.md': 'even more notes\n' })).toBe(3);
  });
});
