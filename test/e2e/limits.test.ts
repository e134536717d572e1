import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFile } from '../../src/adapters/github/repo.js';
import { ConfigError } from '../../src/observability/errors.js';
import { redisUrl, startStack, waitIndexed, type Stack } from '../support/stack.js';

const owner = 'developer';
const repo = 'limits';
const config = 'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n';
const kustomization = (image: string) => `images:\n  - name: ${image}\n    newTag: 1.0.0\n`;

/**
 * A repository file over the size Escalator reads (8 MB) is never downloaded: the index skips it
 * with a warning and keeps the other files, and a job that needs it fails with its path and size.
 * Files over GitHub's 1 MB of inline content are read raw. A file that is not UTF-8 is treated
 * the same way: skipped, never decoded with replacement characters a bump would commit back.
 */
describe('files over the size limit (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  const big = 'apps/big/overlays/dev/kustomization.yaml';
  // Over GitHub's 1 MB of inline content, under Escalator's limit: read raw.
  const large = 'apps/large/overlays/dev/kustomization.yaml';
  const largeText = `${kustomization('ghcr.io/example/large')}${'# padding past one megabyte\n'.repeat((3 * 1024 * 1024) / 28)}`;
  // A Latin-1 comment (0xE9, é): valid Latin-1, invalid UTF-8; small, and over 1 MB (read raw).
  const latin1 = 'apps/latin1/overlays/dev/kustomization.yaml';
  const latin1Large = 'apps/latin1-large/overlays/dev/kustomization.yaml';
  const latin1Bytes = Buffer.concat([
    Buffer.from('# caf'),
    Buffer.from([0xe9]),
    Buffer.from(`\n${kustomization('ghcr.io/example/latin1')}`),
  ]);
  const folder = mkdtempSync(join(tmpdir(), 'escalator-limits-'));

  beforeAll(async () => {
    stack = await startStack();
    for (const [path, bytes] of [
      [latin1, latin1Bytes],
      [latin1Large, Buffer.concat([latin1Bytes, Buffer.alloc(2 * 1024 * 1024, '#')])],
    ] as const) {
      mkdirSync(join(folder, dirname(path)), { recursive: true });
      writeFileSync(join(folder, path), bytes);
    }
    await stack.client.createRepo({
      name: repo,
      folder,
      files: {
        '.github/escalator.yml': config,
        'apps/hello/overlays/dev/kustomization.yaml': kustomization('ghcr.io/example/hello'),
        [large]: largeText,
        [big]: `${kustomization('ghcr.io/example/big')}${'# padding to pass the limit\n'.repeat((9 * 1024 * 1024) / 28)}`,
      },
    });
    await waitIndexed(stack, owner, repo);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('indexes the files within the limit and skips the one over it and the two that are not UTF-8', async () => {
    const redis = new Redis(redisUrl);
    try {
      const index = JSON.parse((await redis.get(`${stack.prefix}:index:repo:${owner}/${repo}`)) as string) as {
        files: Array<{ path: string; images: string[] }>;
      };
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
    await expect(read).rejects.toThrow(
      `${big} is 9.0 MB, over the 8.0 MB Escalator reads from one file; split it into smaller files, or keep it out of the environment's paths`,
    );
    expect(await loadFile(stack.user, { owner, repo }, 'apps/hello/overlays/dev/kustomization.yaml', 'main')).toBe(
      kustomization('ghcr.io/example/hello'),
    );
    expect(await loadFile(stack.user, { owner, repo }, large, 'main')).toBe(largeText);
  });

  it('refuses a file that is not UTF-8, inline or raw, naming it', async () => {
    const reason =
      'the file is not UTF-8 text (an invalid byte near byte 5); Escalator reads and rewrites only UTF-8 files, as rewriting it would change bytes it does not own. Save it as UTF-8';
    await expect(loadFile(stack.user, { owner, repo }, latin1, 'main')).rejects.toThrow(
      new ConfigError(`${latin1}: ${reason}`),
    );
    await expect(loadFile(stack.user, { owner, repo }, latin1Large, 'main')).rejects.toThrow(
      new ConfigError(
        `${latin1Large}: the file is not UTF-8 text; Escalator reads and rewrites only UTF-8 files, as rewriting it would change bytes it does not own. Save it as UTF-8`,
      ),
    );
  });
});
