import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitRepository } from '../src/git.js';
import { parseNumstat, parseRaw, parseTreeLine, splitCombinedDiff, splitPatches } from '../src/git-parse.js';
import { startSimulator } from '../src/server.js';

/**
 * What the simulator now does without a git process (blobs and trees written as loose objects,
 * reads through one `git cat-file --batch-command`, one `git diff` for three) against what the
 * git CLI answers for the same question.
 */

const execFileAsync = promisify(execFile);

let dir: string;
let git: GitRepository;
const who = { name: 'Dev', email: 'dev@example.com', date: new Date('2024-01-15T10:00:00Z') };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'git-in-process-'));
  git = await GitRepository.init(join(dir, 'repo.git'), 'main');
});

afterAll(async () => {
  await git.close();
  rmSync(dir, { recursive: true, force: true });
});

type Entry = { mode: string; type: 'blob' | 'tree' | 'commit'; sha: string; path: string };

/** The tree `git mktree` writes for the same entries. */
async function cliMktree(entries: Entry[]): Promise<string> {
  const input = entries.map((e) => `${e.mode} ${e.type} ${e.sha}\t${e.path}\0`).join('');
  return (await git.text(['mktree', '-z'], { input })).trim();
}

async function cliBlob(content: Buffer): Promise<string> {
  return (await git.text(['hash-object', '--stdin'], { input: content })).trim();
}

describe('objects written in-process', () => {
  it('writes blobs with the ids hash-object gives them, readable by git', async () => {
    for (const content of [
      Buffer.alloc(0),
      Buffer.from('a\r\nb\r\n'),
      Buffer.from([0, 1, 2, 255, 0]),
      Buffer.from('é ü 😀\n'),
      Buffer.alloc(300_000, 'x'),
    ]) {
      const sha = await git.writeBlob(content);
      expect(sha).toBe(await cliBlob(content));
      expect((await git.run(['cat-file', 'blob', sha])).stdout.equals(content)).toBe(true);
      expect(await git.writeBlob(content)).toBe(sha);
    }
  });

  it('writes trees byte-identical to git mktree: sort order, modes, submodules', async () => {
    const blob = await git.writeBlob(Buffer.from('content\n'));
    const other = await git.writeBlob(Buffer.from('other\n'));
    const inner = await git.mktree([{ mode: '100644', type: 'blob', sha: blob, path: 'inner' }]);
    // Names that sort differently bytewise, as "name/" for trees, and by code unit.
    const names = ['foo', 'foo.txt', 'foo-bar', 'foo0', 'Foo', 'a b', 'é', 'z', '_', 'tab\tname', ':colon', 'ü', 'ab'];
    const entries: Entry[] = [];
    names.forEach((name, index) => {
      if (index % 3 === 0) entries.push({ mode: '040000', type: 'tree', sha: inner, path: name });
      else if (index % 3 === 1) entries.push({ mode: '100644', type: 'blob', sha: blob, path: name });
      else entries.push({ mode: '100755', type: 'blob', sha: other, path: name });
    });
    entries.push({ mode: '120000', type: 'blob', sha: other, path: 'link' });
    entries.push({ mode: '160000', type: 'commit', sha: 'c'.repeat(40), path: 'submodule' });
    entries.push({ mode: '40000', type: 'tree', sha: inner, path: 'foo.d' });
    const shuffled = [entries, [...entries].reverse(), [...entries].sort((a, b) => a.sha.localeCompare(b.sha))];
    for (const order of shuffled) expect(await git.mktree(order)).toBe(await cliMktree(order));
    // The cases that differ between sorting by name and by name + "/" (a tree "foo" after "foo.txt").
    const tricky: Entry[] = [
      { mode: '100644', type: 'blob', sha: blob, path: 'foo.txt' },
      { mode: '040000', type: 'tree', sha: inner, path: 'foo' },
      { mode: '100644', type: 'blob', sha: blob, path: 'foo0' },
      { mode: '100644', type: 'blob', sha: blob, path: 'foo-' },
    ];
    expect(await git.mktree(tricky)).toBe(await cliMktree(tricky));
    expect(await git.mktree([])).toBe(await cliMktree([]));
  });

  it('refuses what git mktree refuses, and git agrees', async () => {
    const blob = await git.writeBlob(Buffer.from('x\n'));
    const tree = await git.mktree([{ mode: '100644', type: 'blob', sha: blob, path: 'x' }]);
    const refused: Entry[][] = [
      [{ mode: '040000', type: 'blob', sha: blob, path: 'mode says tree' }],
      [{ mode: '100644', type: 'tree', sha: tree, path: 'mode says blob' }],
      [{ mode: '100644', type: 'blob', sha: tree, path: 'a tree as a blob' }],
      [{ mode: '040000', type: 'tree', sha: blob, path: 'a blob as a tree' }],
      [{ mode: '100644', type: 'blob', sha: 'd'.repeat(40), path: 'missing' }],
      [{ mode: '160000', type: 'commit', sha: blob, path: 'a blob as a submodule' }],
      [{ mode: '1x0644', type: 'blob', sha: blob, path: 'bad mode' }],
      [{ mode: '100644', type: 'blob', sha: 'not-a-sha', path: 'bad sha' }],
    ];
    for (const entries of refused) {
      const ours = await git.mktree(entries).then(
        () => 'written',
        (error: Error) => error.message,
      );
      const theirs = await cliMktree(entries).then(
        () => 'written',
        (error: Error) => error.message,
      );
      expect(ours, entries[0]?.path).toMatch(/^git mktree -z failed \(exit 128\): fatal: /);
      expect(theirs, entries[0]?.path).toMatch(/^git mktree -z failed \(exit 128\): fatal: /);
      if (entries[0]?.path !== 'bad sha') expect(ours).toBe(theirs);
    }
  });

  it('leaves a repository git fsck --strict finds nothing wrong with', async () => {
    const fresh = await GitRepository.init(join(dir, 'fsck.git'), 'main');
    try {
      const blob = await fresh.writeBlob(Buffer.from('a: 1\n'));
      const deep = await fresh.mktree([{ mode: '100644', type: 'blob', sha: blob, path: 'values.yaml' }]);
      const mid = await fresh.mktree([
        { mode: '040000', type: 'tree', sha: deep, path: 'app' },
        { mode: '100644', type: 'blob', sha: blob, path: 'app.yaml' },
        { mode: '100755', type: 'blob', sha: blob, path: 'run.sh' },
      ]);
      const root = await fresh.mktree([
        { mode: '040000', type: 'tree', sha: mid, path: 'clusters' },
        { mode: '100644', type: 'blob', sha: blob, path: 'README' },
      ]);
      const commit = await fresh.commitTree(root, [], 'first\n', who, who);
      expect(await fresh.updateRef('refs/heads/main', commit, '0'.repeat(40))).toBe(true);
      const fsck = await fresh.run(['fsck', '--strict', '--full', '--no-dangling'], { okCodes: [1, 2, 4, 8] });
      expect(fsck.code).toBe(0);
      const { stdout } = await fresh.run(['ls-tree', '-r', '-t', root]);
      expect(stdout.toString()).toContain('040000 tree');
      // Loose objects only, no temporary files left behind.
      const objects = join(fresh.dir, 'objects');
      const leftovers = readdirSync(objects)
        .filter((name) => /^[0-9a-f]{2}$/.test(name))
        .flatMap((folder) => readdirSync(join(objects, folder)).filter((name) => !/^[0-9a-f]{38}$/.test(name)));
      expect(leftovers).toEqual([]);
    } finally {
      await fresh.close();
    }
  });
});

describe('reads through one cat-file process', () => {
  it('answers types, contents, commits and peeled SHAs as the git CLI does', async () => {
    const blob = await git.writeBlob(Buffer.from('v1\n'));
    const tree = await git.mktree([{ mode: '100644', type: 'blob', sha: blob, path: 'f' }]);
    const commit = await git.commitTree(tree, [], 'subject\n\nbody ünïcode\n', who, who);
    const tag = (
      await git.text(['mktag'], {
        input: `object ${commit}\ntype commit\ntag v1\ntagger Dev <dev@example.com> 1705312800 +0000\n\nrelease\n`,
      })
    ).trim();
    const missing = 'e'.repeat(40);
    for (const sha of [blob, tree, commit, tag, missing]) {
      const type = await git.run(['cat-file', '-t', sha], { okCodes: [128] });
      expect(await git.objectType(sha)).toBe(type.code === 0 ? type.stdout.toString().trim() : null);
      for (const peel of ['commit', 'tree']) {
        const cli = await git.run(['rev-parse', '--verify', '--quiet', `${sha}^{${peel}}`], { okCodes: [1, 128] });
        const expected = cli.code === 0 ? cli.stdout.toString().trim() : null;
        const ours = peel === 'commit' ? await git.resolveCommit(sha) : await git.resolveTree(sha);
        expect(ours, `${sha}^{${peel}}`).toBe(expected);
      }
    }
    expect((await git.readBlob(blob)).toString()).toBe('v1\n');
    await expect(git.readBlob(tree)).rejects.toThrow(/cat-file blob/);
    await expect(git.readBlob(missing)).rejects.toThrow(/cat-file blob/);
    const read = await git.readCommit(commit);
    expect(read).toMatchObject({ sha: commit, tree, parents: [], message: 'subject\n\nbody ünïcode\n' });
    expect(read.author).toEqual(who);
  });

  it('sees objects written by other git processes after it started, and starts again after close', async () => {
    const content = Buffer.from(`written later ${Date.now()}\n`);
    const sha = await cliBlob(content);
    expect(await git.objectType(sha)).toBeNull();
    expect(await git.resolveTree(`${sha}`)).toBeNull();
    await git.run(['hash-object', '-w', '--stdin'], { input: content });
    expect(await git.objectType(sha)).toBe('blob');
    // A commit named (and peeled) before it exists, then written by another process.
    const tree = await git.mktree([{ mode: '100644', type: 'blob', sha, path: 'f' }]);
    const commitBody = `tree ${tree}\nauthor a <a@b> 1705312800 +0000\ncommitter a <a@b> 1705312800 +0000\n\nlater\n`;
    const commit = (await git.text(['hash-object', '-t', 'commit', '--stdin'], { input: commitBody })).trim();
    expect(await git.resolveCommit(commit)).toBeNull();
    expect(await git.resolveTree(commit)).toBeNull();
    await git.run(['hash-object', '-w', '-t', 'commit', '--stdin'], { input: commitBody });
    expect(await git.resolveCommit(commit)).toBe(commit);
    expect(await git.resolveTree(commit)).toBe(tree);
    await git.close();
    expect((await git.readBlob(sha)).equals(content)).toBe(true);
  });

  it('sees every ref write at once, as rev-parse does, packed refs included', async () => {
    const blob = await git.writeBlob(Buffer.from('refs\n'));
    const tree = await git.mktree([{ mode: '100644', type: 'blob', sha: blob, path: 'f' }]);
    /**
     * `git rev-parse --verify --quiet` of each spec, one git process each, started by one shell:
     * the test worker starting ~900 processes itself cost it up to ~35 ms of system time each.
     */
    const cli = async (specs: string[]): Promise<Array<string | null>> => {
      const script = 'for spec in "$@"; do git rev-parse --verify --quiet "$spec" || echo -; done';
      const { stdout } = await execFileAsync('sh', ['-c', script, 'rev-parse-each', ...specs], {
        env: { ...process.env, GIT_DIR: git.dir },
      });
      const lines = stdout.trim().split('\n');
      expect(lines).toHaveLength(specs.length);
      return lines.map((line) => (line === '-' ? null : line));
    };
    const check = async (...refs: string[]) => {
      const expected = await cli(refs.flatMap((ref) => [ref, `${ref}^{commit}`, `${ref}^{tree}`]));
      for (const [i, ref] of refs.entries()) {
        expect(await git.readRef(ref), ref).toBe(expected[3 * i]);
        expect(await git.resolveCommit(ref), `${ref}^{commit}`).toBe(expected[3 * i + 1]);
        expect(await git.resolveTree(ref), `${ref}^{tree}`).toBe(expected[3 * i + 2]);
      }
    };
    const refs = [
      'refs/heads/live',
      'refs/heads/feature/x-1',
      'refs/pull/7/head',
      'refs/heads/v1-gabc1234',
      'refs/heads/cafe',
      'refs/tags/live',
    ];
    let previous: string | null = null;
    // Two cycles of set, update × 5 and delete; the live refs are packed (`git pack-refs`) mid-second.
    for (let i = 0; i < 14; i++) {
      const commit = await git.commitTree(tree, previous ? [previous] : [], `update ${i}\n`, who, who);
      await check(...refs, 'live', 'feature/x-1', 'cafe', 'v1-gabc1234', 'HEAD', 'main', 'no-such-branch');
      for (const ref of refs) {
        if (i % 7 === 6) expect(await git.deleteRef(ref, previous ?? '0'.repeat(40))).toBe(true);
        else if (i % 7 === 0) await git.setRef(ref, commit);
        else expect(await git.updateRef(ref, commit, previous ?? '0'.repeat(40))).toBe(true);
        await check(ref);
        expect(await git.readRef(ref)).toBe(i % 7 === 6 ? null : commit);
      }
      previous = i % 7 === 6 ? null : commit;
      if (i === 8) await git.run(['pack-refs', '--all']);
    }
  });

  it('answers many reads asked at once, in order', async () => {
    const contents = Array.from({ length: 200 }, (_, i) => Buffer.from(`${'line\n'.repeat(i)}${i}`));
    const shas = await Promise.all(contents.map((c) => git.writeBlob(c)));
    const read = await Promise.all(shas.map((sha) => git.readBlob(sha)));
    read.forEach((body, i) => expect(body.equals(contents[i] ?? Buffer.alloc(0))).toBe(true));
  });
});

describe('trees listed from the cat-file process', () => {
  it('lists as git ls-tree -z -l [-r -t] [-- path] does', async () => {
    const blob = (text: string) => git.writeBlob(Buffer.from(text));
    const leaf = await git.mktree([
      { mode: '100644', type: 'blob', sha: await blob('deep\n'), path: 'values.yaml' },
      { mode: '100755', type: 'blob', sha: await blob('#!/bin/sh\n'), path: 'run sh' },
    ]);
    const mid = await git.mktree([
      { mode: '040000', type: 'tree', sha: leaf, path: 'app' },
      { mode: '100644', type: 'blob', sha: await blob(''), path: 'app.yaml' },
      { mode: '120000', type: 'blob', sha: await blob('app.yaml'), path: 'link' },
      { mode: '160000', type: 'commit', sha: 'f'.repeat(40), path: 'vendor' },
    ]);
    const root = await git.mktree([
      { mode: '040000', type: 'tree', sha: mid, path: 'clusters' },
      { mode: '100644', type: 'blob', sha: await blob('readme\n'), path: 'README' },
      { mode: '100664', type: 'blob', sha: await blob('group\n'), path: 'group-writable' },
      { mode: '100644', type: 'blob', sha: await blob('ü\n'), path: 'é.yaml' },
    ]);
    const commit = await git.commitTree(root, [], 'trees\n', who, who);
    const cli = async (treeish: string, options: { recursive?: boolean; path?: string }) => {
      const args = ['ls-tree', '-z', '-l'];
      if (options.recursive) args.push('-r', '-t');
      args.push(treeish);
      if (options.path !== undefined) args.push('--', options.path);
      return (await git.text(args)).split('\0').filter(Boolean).map(parseTreeLine);
    };
    const paths = ['README', 'clusters', 'clusters/app', 'clusters/app/values.yaml', 'clusters/app/run sh'];
    paths.push('clusters/link', 'clusters/vendor', 'clusters/vendor/x', 'README/x', 'nothing', 'clusters/nothing/x');
    paths.push('group-writable', 'é.yaml');
    for (const treeish of [root, commit, mid]) {
      for (const options of [{}, { recursive: true }, ...paths.map((path) => ({ path }))]) {
        expect(await git.lsTree(treeish, options), `${treeish} ${JSON.stringify(options)}`).toEqual(
          await cli(treeish, options),
        );
      }
    }
  });
});

describe('one git diff for three', () => {
  it('splits into what --raw -z, --numstat -z and the patch print alone', async () => {
    const blob = (text: string | Buffer) => git.writeBlob(Buffer.isBuffer(text) ? text : Buffer.from(text));
    const before = await git.mktree([
      { mode: '100644', type: 'blob', sha: await blob('a\nb\nc\nd\n'), path: 'old.yaml' },
      { mode: '100644', type: 'blob', sha: await blob('x\n'), path: ':colon' },
      { mode: '100644', type: 'blob', sha: await blob(Buffer.from([98, 0, 105])), path: 'bin' },
      { mode: '120000', type: 'blob', sha: await blob('old.yaml'), path: 'link' },
      { mode: '100644', type: 'blob', sha: await blob('gone\n'), path: 'removed' },
      { mode: '100644', type: 'blob', sha: await blob('mode\n'), path: 'run.sh' },
    ]);
    const after = await git.mktree([
      { mode: '100644', type: 'blob', sha: await blob('a\nb\nc\nD\n'), path: 'new.yaml' },
      { mode: '100644', type: 'blob', sha: await blob('y\n'), path: ':colon' },
      { mode: '100644', type: 'blob', sha: await blob(Buffer.from([98, 0, 106])), path: 'bin' },
      { mode: '100644', type: 'blob', sha: await blob('now a file\n'), path: 'link' },
      { mode: '100644', type: 'blob', sha: await blob('q\n'), path: 'tab\tname' },
      { mode: '100644', type: 'blob', sha: await blob('q\n'), path: '1\t2\t' },
      { mode: '100755', type: 'blob', sha: await blob('mode\n'), path: 'run.sh' },
      { mode: '100644', type: 'blob', sha: await blob('ü\n'), path: 'é.yaml' },
    ]);
    for (const [from, to] of [
      [before, after],
      [after, before],
      [before, before],
    ] as const) {
      const combined = splitCombinedDiff(
        await git.text(['diff', '--raw', '--numstat', '--patch', '-z', '-M', '--no-abbrev', '--no-color', from, to]),
      );
      const raw = await git.text(['diff', '--raw', '-z', '-M', '--no-abbrev', from, to]);
      const numstat = await git.text(['diff', '--numstat', '-z', '-M', from, to]);
      const patch = await git.text(['diff', '-M', '--no-color', from, to]);
      expect(combined.raw ? `${combined.raw}\0` : '').toBe(raw);
      expect(combined.numstat ? `${combined.numstat}\0` : '').toBe(numstat);
      expect(combined.patch).toBe(patch);
      expect(parseRaw(combined.raw)).toEqual(parseRaw(raw));
      expect(parseNumstat(combined.numstat)).toEqual(parseNumstat(numstat));
      expect(splitPatches(combined.patch)).toEqual(splitPatches(patch));
    }
    expect((await git.diff(before, after)).map((change) => change.status).sort()).toEqual(
      ['added', 'added', 'added', 'changed', 'modified', 'modified', 'modified', 'removed', 'renamed'].sort(),
    );
  });
});

describe('the simulator stopping', () => {
  it('leaves no cat-file process behind', async () => {
    const sandbox = await startSimulator();
    try {
      const repo = await sandbox.context.state.createRepo(sandbox.context.state.createUser('org'), 'r', 'main', null);
      const sha = await repo.git.writeBlob(Buffer.from('x\n'));
      expect((await repo.git.readBlob(sha)).toString()).toBe('x\n');
      expect(catFileProcesses(repo.git.dir)).toHaveLength(1);
      await sandbox.close();
      expect(catFileProcesses(repo.git.dir)).toEqual([]);
    } finally {
      await sandbox.close().catch(() => undefined);
    }
  });
});

describe('a process whose last work is closing the reader', () => {
  it('runs what comes after the close (the sandbox removing its Redis keys on SIGTERM)', async () => {
    // Its own Node process: an idle reader is unref'd, and a close that did not hold the event
    // loop let the process end with the close unsettled, skipping the line after it.
    const script = [
      `import { GitRepository } from ${JSON.stringify(join(import.meta.dirname, '../src/git.ts'))};`,
      `const git = await GitRepository.init(${JSON.stringify(join(dir, 'last-work.git'))}, 'main');`,
      `const sha = await git.writeBlob(Buffer.from('x\\n'));`,
      `await git.readBlob(sha);`,
      `void git.close().then(() => process.stdout.write('after the close\\n'));`,
    ].join('\n');
    const { stdout } = await execFileAsync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
    expect(stdout).toBe('after the close\n');
  });
});

/** Live `git cat-file --batch-command` processes reading `gitDir` (Linux /proc). */
function catFileProcesses(gitDir: string): string[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        const environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
        return cmdline.includes('cat-file\0--batch-command') && environ.split('\0').includes(`GIT_DIR=${gitDir}`);
      } catch {
        return false;
      }
    });
}
