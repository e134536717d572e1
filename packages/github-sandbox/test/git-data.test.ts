import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGitHubShaped, startHarness, type Harness } from '../testing/harness.js';

let h: Harness;
let octokit: Octokit;
const repo = { owner: 'example', repo: 'gitops' };

beforeAll(async () => {
  h = await startHarness();
  await h.seedRepo('gitops', {
    'README.md': '# GitOps\n',
    'apps/hello/overlays/dev/kustomization.yaml': 'images:\n  - {name: ghcr.io/example/hello, newTag: 1.0.0}\n',
  });
  const installation = await h.appOctokit().rest.apps.getRepoInstallation(repo);
  octokit = await h.installationOctokit(installation.data.id);
});

afterAll(async () => {
  expectGitHubShaped(h);
  await h.close();
});

async function headOf(branch: string): Promise<string> {
  return (await octokit.rest.git.getRef({ ...repo, ref: `heads/${branch}` })).data.object.sha;
}

/** Writes one file on top of `parent` through blobs → tree (base_tree) → commit, like the product does. */
async function commitFile(parent: string, path: string, content: string, message = `Update ${path}`): Promise<string> {
  const blob = await octokit.rest.git.createBlob({
    ...repo,
    content: Buffer.from(content).toString('base64'),
    encoding: 'base64',
  });
  const base = await octokit.rest.git.getCommit({ ...repo, commit_sha: parent });
  const tree = await octokit.rest.git.createTree({
    ...repo,
    base_tree: base.data.tree.sha,
    tree: [{ path, mode: '100644', type: 'blob', sha: blob.data.sha }],
  });
  const commit = await octokit.rest.git.createCommit({ ...repo, message, tree: tree.data.sha, parents: [parent] });
  return commit.data.sha;
}

describe('repository and installation lookup', () => {
  it('answers repos.get with the default branch and URLs on the simulator', async () => {
    const { data, headers } = await octokit.rest.repos.get(repo);
    expect(data.full_name).toBe('example/gitops');
    expect(data.default_branch).toBe('main');
    expect(data.html_url).toBe(`${h.sim.url}/example/gitops`);
    expect(headers['x-ratelimit-limit']).toBe('5000');
    expect(headers['x-github-request-id']).toBeTruthy();
  });

  it('answers 404 for repositories outside the installation', async () => {
    await h.client.createRepo({ owner: 'someone-else', name: 'private', files: { a: 'b' }, install: false });
    await expect(octokit.rest.repos.get({ owner: 'someone-else', repo: 'private' })).rejects.toMatchObject({
      status: 404,
    });
    await expect(
      h.appOctokit().rest.apps.getRepoInstallation({ owner: 'someone-else', repo: 'private' }),
    ).rejects.toMatchObject({ status: 404 });
  });
});

describe('contents', () => {
  it('reads a file at a ref, base64 encoded, and a directory listing', async () => {
    const { data } = await octokit.rest.repos.getContent({
      ...repo,
      path: 'apps/hello/overlays/dev/kustomization.yaml',
      ref: 'main',
    });
    if (Array.isArray(data) || data.type !== 'file') throw new Error('expected a file');
    expect(Buffer.from(data.content, 'base64').toString()).toContain('newTag: 1.0.0');
    const listing = await octokit.rest.repos.getContent({ ...repo, path: 'apps/hello/overlays' });
    expect(Array.isArray(listing.data) && listing.data.map((entry) => [entry.name, entry.type])).toEqual([
      ['dev', 'dir'],
    ]);
  });

  it('serves raw bytes with the raw media type', async () => {
    const { data } = await octokit.rest.repos.getContent({ ...repo, path: 'README.md', mediaType: { format: 'raw' } });
    expect(data).toBe('# GitOps\n');
  });

  it('answers 404 for a missing path and for a missing ref', async () => {
    await expect(octokit.rest.repos.getContent({ ...repo, path: 'nope.yaml' })).rejects.toMatchObject({ status: 404 });
    await expect(
      octokit.rest.repos.getContent({ ...repo, path: 'README.md', ref: 'no-such-branch' }),
    ).rejects.toMatchObject({ status: 404 });
  });
});

describe('git data', () => {
  it('builds nested trees on a base tree, keeps the other files, and commits with real SHAs', async () => {
    const main = await headOf('main');
    const sha = await commitFile(main, 'apps/world/base/deployment.yaml', 'kind: Deployment\n');
    const tree = await octokit.rest.git.getTree({ ...repo, tree_sha: sha, recursive: 'true' });
    const paths = tree.data.tree.filter((entry) => entry.type === 'blob').map((entry) => entry.path);
    expect(paths).toEqual([
      'README.md',
      'apps/hello/overlays/dev/kustomization.yaml',
      'apps/world/base/deployment.yaml',
    ]);
    const blobSha = execFileSync('git', ['hash-object', '--stdin'], { input: 'kind: Deployment\n' }).toString().trim();
    expect(tree.data.tree.find((entry) => entry.path === 'apps/world/base/deployment.yaml')?.sha).toBe(blobSha);
  });

  it('deletes a path when a tree entry has sha null', async () => {
    const main = await headOf('main');
    const base = await octokit.rest.git.getCommit({ ...repo, commit_sha: main });
    const tree = await octokit.rest.git.createTree({
      ...repo,
      base_tree: base.data.tree.sha,
      tree: [{ path: 'README.md', mode: '100644', type: 'blob', sha: null }],
    });
    expect(tree.data.tree.map((entry) => entry.path)).toEqual(['apps']);
  });

  it('reports App commits with the default identity as verified, and the bot as author', async () => {
    const sha = await commitFile(await headOf('main'), 'x.txt', 'x');
    const { data } = await octokit.rest.git.getCommit({ ...repo, commit_sha: sha });
    expect(data.verification?.verified).toBe(true);
    expect(data.author.name).toBe('escalator[bot]');
  });

  it('creates a ref, then answers 422 when it exists already', async () => {
    const main = await headOf('main');
    const created = await octokit.rest.git.createRef({ ...repo, ref: 'refs/heads/feature-a', sha: main });
    expect(created.status).toBe(201);
    expect(created.data.object.sha).toBe(main);
    await expect(octokit.rest.git.createRef({ ...repo, ref: 'refs/heads/feature-a', sha: main })).rejects.toMatchObject(
      { status: 422, response: { data: { message: 'Reference already exists' } } },
    );
  });

  it('fast-forwards with updateRef, refuses a non-fast-forward without force, accepts it with force', async () => {
    const main = await headOf('main');
    await octokit.rest.git.createRef({ ...repo, ref: 'refs/heads/feature-b', sha: main });
    const first = await commitFile(main, 'b.txt', 'one');
    await octokit.rest.git.updateRef({ ...repo, ref: 'heads/feature-b', sha: first, force: false });
    const sibling = await commitFile(main, 'b.txt', 'two');
    await expect(
      octokit.rest.git.updateRef({ ...repo, ref: 'heads/feature-b', sha: sibling, force: false }),
    ).rejects.toMatchObject({ status: 422, response: { data: { message: 'Update is not a fast forward' } } });
    expect(await headOf('feature-b')).toBe(first);
    await octokit.rest.git.updateRef({ ...repo, ref: 'heads/feature-b', sha: sibling, force: true });
    expect(await headOf('feature-b')).toBe(sibling);
  });

  it('answers 404 for a missing ref and 422 for a commit that does not exist', async () => {
    await expect(octokit.rest.git.getRef({ ...repo, ref: 'heads/missing' })).rejects.toMatchObject({ status: 404 });
    await expect(
      octokit.rest.git.createRef({ ...repo, ref: 'refs/heads/ghost', sha: 'f'.repeat(40) }),
    ).rejects.toMatchObject({ status: 422 });
  });

  it('lets exactly one of two concurrent compare-and-swap updates win', async () => {
    const main = await headOf('main');
    await octokit.rest.git.createRef({ ...repo, ref: 'refs/heads/race', sha: main });
    const [a, b] = await Promise.all([commitFile(main, 'race.txt', 'a'), commitFile(main, 'race.txt', 'b')]);
    const results = await Promise.allSettled(
      [a, b].map((sha) => octokit.rest.git.updateRef({ ...repo, ref: 'heads/race', sha, force: false })),
    );
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
  });
});

describe('commits, compare and archives', () => {
  it('compares two refs with commits and files', async () => {
    const main = await headOf('main');
    await octokit.rest.git.createRef({ ...repo, ref: 'refs/heads/compare-me', sha: main });
    const next = await commitFile(
      main,
      'apps/hello/overlays/dev/kustomization.yaml',
      'images:\n  - {name: ghcr.io/example/hello, newTag: 1.1.0}\n',
    );
    await octokit.rest.git.updateRef({ ...repo, ref: 'heads/compare-me', sha: next });
    const { data } = await octokit.rest.repos.compareCommits({ ...repo, base: 'main', head: 'compare-me' });
    expect(data.status).toBe('ahead');
    expect(data.ahead_by).toBe(1);
    expect(data.commits.map((c) => c.sha)).toEqual([next]);
    expect(data.files?.map((f) => [f.filename, f.status, f.additions, f.deletions])).toEqual([
      ['apps/hello/overlays/dev/kustomization.yaml', 'modified', 1, 1],
    ]);
    expect(data.files?.[0]?.patch).toContain('+  - {name: ghcr.io/example/hello, newTag: 1.1.0}');
  });

  it('lists commits touching a path and gets one commit with its files', async () => {
    const list = await octokit.rest.repos.listCommits({ ...repo, sha: 'main', path: 'README.md' });
    expect(list.data).toHaveLength(1);
    const one = await octokit.rest.repos.getCommit({ ...repo, ref: list.data[0]?.sha ?? '' });
    expect(one.data.files?.map((f) => f.filename)).toContain('README.md');
    expect(one.data.author).toMatchObject({ login: 'developer' });
  });

  it("pages a commit's files by per_page, repeating the commit on every page, as GitHub does", async () => {
    const [seed] = (await octokit.rest.repos.listCommits({ ...repo, sha: 'main', path: 'README.md' })).data;
    const ref = seed?.sha ?? '';
    const all = await octokit.rest.repos.getCommit({ ...repo, ref });
    const names = all.data.files?.map((f) => f.filename) ?? [];
    expect(names).toHaveLength(2);
    expect(all.headers.link).toBeUndefined();

    const first = await octokit.rest.repos.getCommit({ ...repo, ref, per_page: 1 });
    expect(first.data.files?.map((f) => f.filename)).toEqual([names[0]]);
    expect(first.data.sha).toBe(ref);
    expect(first.headers.link).toContain('per_page=1&page=2>; rel="next"');
    const second = await octokit.rest.repos.getCommit({ ...repo, ref, per_page: 1, page: 2 });
    expect(second.data.files?.map((f) => f.filename)).toEqual([names[1]]);
    expect(second.data.sha).toBe(ref);
    expect(second.headers.link).toContain('rel="prev"');
    expect(second.headers.link).not.toContain('rel="next"');
  });

  it("downloads a tarball of a ref through a redirect, with GitHub's top-level folder", async () => {
    const main = await headOf('main');
    const { data, url } = await octokit.rest.repos.downloadTarballArchive({ ...repo, ref: 'main' });
    expect(url).toContain('/_codeload/example/gitops/legacy.tar.gz/');
    const dir = mkdtempSync(join(tmpdir(), 'tarball-'));
    try {
      writeFileSync(join(dir, 'a.tar.gz'), Buffer.from(data as ArrayBuffer));
      execFileSync('tar', ['-xzf', 'a.tar.gz'], { cwd: dir });
      expect(readFileSync(join(dir, `example-gitops-${main.slice(0, 7)}`, 'README.md'), 'utf8')).toBe('# GitOps\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
