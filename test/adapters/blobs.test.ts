import { randomUUID } from 'node:crypto';
import { SandboxClient, type Simulator, startSimulator } from '@escalator/github-sandbox';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitHubClients } from '../../src/adapters/github/client.js';
import { loadBranch, loadTree } from '../../src/adapters/github/repo.js';
import { BlobStore, gitBlobSha, MAX_BLOB_BYTES } from '../../src/adapters/store/blobs.js';
import type { RepoIndex } from '../../src/adapters/store/subscriptions.js';
import { loadFilesAt, withTreeAt } from '../../src/jobs/shared/indexed-files.js';
import { createLogger } from '../../src/observability/logger.js';
import { redisUrl } from '../support/stack.js';

/**
 * File texts by git blob SHA in real Redis: what the index read at a commit is read again with no
 * GitHub call, a text is only ever taken for the blob it is, and installations never share them.
 */
describe('blob store', () => {
  let redis: Redis;
  let blobs: BlobStore;
  let sim: Simulator;
  const prefix = `test-blobs-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    redis = new Redis(redisUrl);
    blobs = new BlobStore(redis, prefix);
    sim = await startSimulator();
  });
  afterAll(async () => {
    await sim?.close();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  /**
   * A repository `blobs/<name>` holding `files`, indexed at its head with every file's blob SHA
   * named (as the index job leaves it), and the GitHub routes its client calls.
   */
  async function indexedRepo(client: SandboxClient, name: string, files: Record<string, string>) {
    const created = await client.createRepo({ owner: 'blobs', name, files });
    const calls: string[] = [];
    const octokit = new GitHubClients({
      appId: sim.app.id,
      privateKey: sim.app.privateKey,
      baseUrl: sim.apiUrl,
      log: createLogger({ level: 'silent' }),
      onRequest: (info) => calls.push(info.route),
    }).forInstallation(created.installation_id!);
    const id = { owner: 'blobs', repo: name };
    const head = (await loadBranch(octokit, id, 'main'))!;
    const tree = await loadTree(octokit, id, head.treeSha);
    const paths = Object.keys(files);
    const index = {
      installationId: created.installation_id!,
      ...id,
      defaultBranch: 'main',
      sha: head.sha,
      config: null,
      problems: [],
      files: [],
      blobs: { reader: 1, shas: Object.fromEntries(paths.map((path) => [path, tree.get(path)!])) },
    } satisfies RepoIndex;
    return { calls, octokit, id, head, paths, source: { octokit, index, blobs } };
  }

  it("computes git's blob id (as `git hash-object` does)", () => {
    // `printf 'hello\n' | git hash-object --stdin`, and the empty blob every git knows.
    expect(gitBlobSha('hello\n')).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
    expect(gitBlobSha('')).toBe('e69de29bb2d1d6434b8b29ae775ad8c2e48c5391');
  });

  it('keeps a text only as the blob it is, and gives it back to its installation only', async () => {
    const text = 'images:\n  - name: app\n    newTag: 1.2.3\n';
    const sha = gitBlobSha(text);
    await blobs.set(1, sha, text);
    expect(await blobs.get(1, sha)).toBe(text);
    expect(await blobs.get(2, sha)).toBeUndefined();
    // A text offered under another blob's SHA is not kept.
    await blobs.set(1, gitBlobSha('other\n'), text);
    expect(await blobs.get(1, gitBlobSha('other\n'))).toBeUndefined();
  });

  it('never answers a damaged entry', async () => {
    const text = 'a: 1\n';
    const sha = gitBlobSha(text);
    await blobs.set(3, sha, text);
    await redis.set(`${prefix}:blob:3:${sha}`, 'a: 2\n');
    expect(await blobs.get(3, sha)).toBeUndefined();
  });

  it('does not keep a text over the size bound', async () => {
    const text = 'x'.repeat(MAX_BLOB_BYTES + 1);
    await blobs.set(4, gitBlobSha(text), text);
    expect(await redis.exists(`${prefix}:blob:4:${gitBlobSha(text)}`)).toBe(0);
  });

  it('reads files at the indexed commit from GitHub once, then from Redis; at another commit from GitHub', async () => {
    const client = new SandboxClient(sim.url, sim.user.token);
    const files = {
      'apps/a/dev/kustomization.yaml': 'images:\n  - name: a\n    newTag: "1"\n',
      'apps/b/dev/values.yaml': 'b: 1\n',
    };
    const { calls, head, paths, source } = await indexedRepo(client, 'gitops', files);
    const expected = paths.map((path) => ({ path, text: files[path as keyof typeof files] }));

    calls.length = 0;
    expect(await loadFilesAt(source, paths, head.sha)).toEqual(expected);
    expect(calls.filter((route) => route.includes('/contents/'))).toHaveLength(2);
    calls.length = 0;
    expect(await loadFilesAt(source, paths, head.sha)).toEqual(expected);
    expect(calls).toEqual([]);

    const next = await client.commit('blobs/gitops', { branch: 'main', files: { 'apps/b/dev/values.yaml': 'b: 2\n' } });
    calls.length = 0;
    const later = await loadFilesAt(source, paths, next.sha);
    expect(later.map((file) => file.text)).toEqual([files['apps/a/dev/kustomization.yaml'], 'b: 2\n']);
    expect(calls.filter((route) => route.includes('/contents/'))).toHaveLength(2);
  });

  it('reads a head newer than the index from Redis after one tree listing, and only changed files from GitHub', async () => {
    const client = new SandboxClient(sim.url, sim.user.token);
    const files = {
      'apps/a/dev/kustomization.yaml': 'images:\n  - name: a\n    newTag: "1"\n',
      'apps/a/dev/env.yaml': 'LOG_LEVEL: info\n',
      'apps/a/staging/env.yaml': 'LOG_LEVEL: warn\n',
    };
    const { calls, octokit, id, head, paths, source } = await indexedRepo(client, 'newer-head', files);
    // What the index read at its commit is in the blob store.
    await loadFilesAt(source, paths, head.sha);

    calls.length = 0;
    expect(await withTreeAt(source, head)).toBe(source);
    expect(calls).toEqual([]);

    await client.commit('blobs/newer-head', { branch: 'main', files: { 'apps/a/dev/env.yaml': 'LOG_LEVEL: debug\n' } });
    const next = (await loadBranch(octokit, id, 'main'))!;
    calls.length = 0;
    const newer = await withTreeAt(source, next);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatch(/^GET .*\/git\/trees\//);
    calls.length = 0;
    const read = await loadFilesAt(newer, paths, next.sha);
    expect(read.map((file) => file.text)).toEqual([
      files['apps/a/dev/kustomization.yaml'],
      'LOG_LEVEL: debug\n',
      files['apps/a/staging/env.yaml'],
    ]);
    // Only the file the commit changed was read from GitHub; then it too comes from Redis.
    expect(calls).toHaveLength(1);
    expect(calls[0]).toContain('/contents/');
    calls.length = 0;
    expect((await loadFilesAt(newer, paths, next.sha)).map((file) => file.text)).toEqual(read.map((file) => file.text));
    expect(calls).toEqual([]);
    // The index's own commit is still read from Redis.
    expect((await loadFilesAt(newer, paths, head.sha)).map((file) => file.text)).toEqual(Object.values(files));
    expect(calls).toEqual([]);
  });
});
