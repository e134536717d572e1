import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFile } from '../../src/adapters/github/repo.js';
import { ConfigError } from '../../src/observability/errors.js';
import { redisUrl, startStack, waitIndexed, type Stack } from '../support/escalator.js';

const owner = 'developer';
const repo = 'limits';
const config = 'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n';
const kustomization = (image: string) => `images:\n  - name: ${image}\n    newTag: 1.0.0\n`;

/**
 * A repository file over the size Escalator reads (8 MB) is never downloaded: the index skips it
 * with a warning and keeps the other files, and a job that needs it fails with its path and size.
 * Files over GitHub's 1 MB of inline content are read raw.
 */
describe('files over the size limit (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  const big = 'apps/big/overlays/dev/kustomization.yaml';
  // Over GitHub's 1 MB of inline content, under Escalator's limit: read raw.
  const large = 'apps/large/overlays/dev/kustomization.yaml';
  const largeText = `${kustomization('ghcr.io/example/large')}${'# padding past one megabyte\n'.repeat(3 * 1024 * 1024 / 28)}`;

  beforeAll(async () => {
    stack = await startStack();
    await stack.client.createRepo({
      name: repo,
      files: {
        '.github/escalator.yml': config,
        'apps/hello/overlays/dev/kustomization.yaml': kustomization('ghcr.io/example/hello'),
        [large]: largeText,
        [big]: `${kustomization('ghcr.io/example/big')}${'# padding to pass the limit\n'.repeat(9 * 1024 * 1024 / 28)}`,
      },
    });
    await waitIndexed(stack, owner, repo);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('indexes the files within the limit and skips the one over it', async () => {
    const redis = new Redis(redisUrl);
    try {
      const index = JSON.parse((await redis.get(`${stack.prefix}:index:repo:${owner}/${repo}`)) as string) as { files: Array<{ path: string; images: string[] }> };
      expect(index.files.map((file) => [file.path, file.images]).sort()).toEqual([
        ['apps/hello/overlays/dev/kustomization.yaml', ['ghcr.io/example/hello']],
        [large, ['ghcr.io/example/large']],
      ]);
    } finally {
      await redis.quit();
    }
  });

  it('refuses to download the file, naming its path and size', async () => {
    const read = loadFile(stack.user, { owner, repo }, big, 'main');
    await expect(read).rejects.toBeInstanceOf(ConfigError);
    await expect(read).rejects.toThrow(`${big} is 9.0 MB, over the 8.0 MB Escalator reads from one file; split it into smaller files, or keep it out of the environment's paths`);
    expect(await loadFile(stack.user, { owner, repo }, 'apps/hello/overlays/dev/kustomization.yaml', 'main')).toBe(kustomization('ghcr.io/example/hello'));
    expect(await loadFile(stack.user, { owner, repo }, large, 'main')).toBe(largeText);
  });
});
