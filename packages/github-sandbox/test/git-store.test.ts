import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitRepository, ZERO_SHA } from '../src/git.js';
import { KeyedLock } from '../src/lock.js';
import { buildTree, InvalidTreePathError } from '../src/trees.js';

let dir: string;
let git: GitRepository;
const who = { name: 'Dev', email: 'dev@example.com', date: new Date('2024-01-15T10:00:00Z') };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'git-store-'));
  git = await GitRepository.init(join(dir, 'repo.git'), 'main');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function tree(files: Record<string, string | null>, base: string | null = null): Promise<string> {
  const changes = await Promise.all(
    Object.entries(files).map(async ([path, content]) => ({
      path,
      mode: '100644',
      type: 'blob' as const,
      sha: content === null ? null : await git.writeBlob(Buffer.from(content)),
    })),
  );
  return buildTree(git, base, changes);
}

async function paths(treeSha: string): Promise<string[]> {
  return (await git.lsTree(treeSha, { recursive: true })).filter((e) => e.type === 'blob').map((e) => e.path);
}

describe('building trees', () => {
  it('writes nested paths, keeps the base, deletes files and whole directories', async () => {
    const base = await tree({ 'a/b/c.yaml': 'c', 'a/d.yaml': 'd', 'top.txt': 't' });
    expect(await paths(await tree({ 'a/b/e.yaml': 'e' }, base))).toEqual([
      'a/b/c.yaml',
      'a/b/e.yaml',
      'a/d.yaml',
      'top.txt',
    ]);
    expect(await paths(await tree({ 'a/b': null }, base))).toEqual(['a/d.yaml', 'top.txt']);
  });

  it('replaces a file with a directory and a directory with a file', async () => {
    const base = await tree({ x: 'file', 'y/z': 'nested' });
    expect(await paths(await tree({ 'x/inner': 'now a dir', y: 'now a file' }, base))).toEqual(['x/inner', 'y']);
  });

  it('refuses "." and ".." segments', async () => {
    await expect(tree({ '../escape': 'x' })).rejects.toBeInstanceOf(InvalidTreePathError);
  });
});

describe('commits, refs and merges', () => {
  it('compare-and-swaps refs and reports renames, counts and hunks in diffs', async () => {
    const first = await git.commitTree(await tree({ 'old.yaml': 'a\nb\nc\nd\n' }), [], 'first\n', who, who);
    expect(await git.updateRef('refs/heads/main', first, ZERO_SHA)).toBe(true);
    expect(await git.updateRef('refs/heads/main', first, ZERO_SHA)).toBe(false);
    const second = await git.commitTree(
      await tree({ 'old.yaml': null, 'new.yaml': 'a\nb\nc\nD\n' }),
      [first],
      'second\n',
      who,
      who,
    );
    expect(await git.updateRef('refs/heads/main', second, first)).toBe(true);
    const [change] = await git.diff(first, second);
    expect(change).toMatchObject({
      status: 'renamed',
      previousPath: 'old.yaml',
      path: 'new.yaml',
      additions: 1,
      deletions: 1,
    });
    expect(change?.patch).toMatch(/^@@ .* @@\n a\n b\n c\n-d\n\+D$/);
    expect(await git.readCommit(second)).toMatchObject({
      parents: [first],
      message: 'second\n',
      author: { name: 'Dev', date: who.date },
    });
  });

  it('merges without a worktree and names the conflicting files', async () => {
    const base = await git.commitTree(await tree({ 'f.txt': 'base\n', 'g.txt': 'g\n' }), [], 'base\n', who, who);
    const ours = await git.commitTree(
      await tree({ 'f.txt': 'ours\n' }, await git.resolveTree(base)),
      [base],
      'ours\n',
      who,
      who,
    );
    const theirs = await git.commitTree(
      await tree({ 'f.txt': 'theirs\n' }, await git.resolveTree(base)),
      [base],
      'theirs\n',
      who,
      who,
    );
    const clean = await git.commitTree(
      await tree({ 'g.txt': 'G\n' }, await git.resolveTree(base)),
      [base],
      'clean\n',
      who,
      who,
    );
    expect(await git.mergeTree(ours, theirs)).toMatchObject({ clean: false, conflicts: ['f.txt'] });
    const merged = await git.mergeTree(ours, clean);
    expect(merged.clean).toBe(true);
    expect(await paths(merged.tree)).toEqual(['f.txt', 'g.txt']);
    expect((await git.readBlob((await git.lsTree(merged.tree, { path: 'g.txt' }))[0]?.sha ?? '')).toString()).toBe(
      'G\n',
    );
  });
});

describe('the per-repository lock', () => {
  it('runs work for one key in order, even when earlier work fails', async () => {
    const lock = new KeyedLock();
    const order: string[] = [];
    const slow = lock.run('repo', async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      order.push('first');
      throw new Error('boom');
    });
    const fast = lock.run('repo', async () => {
      order.push('second');
    });
    await expect(slow).rejects.toThrow('boom');
    await fast;
    expect(order).toEqual(['first', 'second']);
  });
});
