import { execFileSync } from 'node:child_process';
import { SandboxClient, type Simulator, startSimulator } from '@escalator/github-sandbox';
import { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitHubClients } from '../../src/adapters/github/client.js';
import { loadSourceRange } from '../../src/adapters/github/source-repo.js';
import { createLogger } from '../../src/observability/logger.js';
import { renderReleaseNotes, type SourceRange } from '../../src/planners/release-notes.js';

/**
 * The source-repository reader against the sandbox GitHub, through the production client: a
 * repository with tags, releases, merged pull requests and commits whose messages carry markdown,
 * HTML and mentions; 5,000 commits in one range; repositories the App may not read.
 */
const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const HOSTILE = [
  '<img src=x onerror=alert(1)> **Fix** [the](http://evil.example) greeting',
  '@example/release-managers please review, thanks @octocat (fixes #1)',
  '</details> ``` `` closes https://github.com/example/hello/issues/1',
];

let sim: Simulator;
let client: SandboxClient;
let github: GitHubClients;
let installationId: number;
let base: string;
let head: string;
let calls: string[] = [];
const gitops = { owner: 'example', repo: 'gitops' };
let secretBase: string;
let secretHead: string;
const SECRET = 'Rotate the payment key for the Acme deal';

beforeAll(async () => {
  sim = await startSimulator();
  client = new SandboxClient(sim.url, sim.user.token);
  const created = await client.createRepo({ owner: 'example', name: 'hello', files: { 'README.md': 'v1\n' } });
  installationId = created.installation_id ?? 0;
  github = new GitHubClients({
    appId: sim.app.id,
    privateKey: sim.app.privateKey,
    baseUrl: sim.apiUrl,
    log: createLogger({ level: 'silent' }),
    onRequest: (info) => calls.push(info.route),
  });
  const user = new Octokit({ baseUrl: sim.apiUrl, auth: sim.user.token, log: quiet });
  const repo = { owner: 'example', repo: 'hello' };
  base = (await user.rest.repos.getBranch({ ...repo, branch: 'main' })).data.commit.sha;
  await user.rest.repos.createRelease({ ...repo, tag_name: 'v1.0.0', body: 'old, out of range' });
  await client.commit('example/hello', { branch: 'main', files: { 'a.txt': '1\n' }, message: HOSTILE[0] });
  await client.commit('example/hello', { branch: 'fix', files: { 'b.txt': '2\n' }, message: HOSTILE[1], from: 'main' });
  const pull = await user.rest.pulls.create({ ...repo, title: HOSTILE[1]!, head: 'fix', base: 'main' });
  await user.rest.pulls.merge({ ...repo, pull_number: pull.data.number, merge_method: 'squash' });
  head = (await client.commit('example/hello', { branch: 'main', files: { 'c.txt': '3\n' }, message: HOSTILE[2] })).sha;
  await user.rest.repos.createRelease({
    ...repo,
    tag_name: 'v1.1.0',
    name: '@octocat #2',
    body: '## Fixes\n- @example/release-managers look\n</details>\n```\n<script>alert(1)</script>',
  });
  await client.createRepo({ owner: 'outsider', name: 'hidden', files: { 'a.txt': 'a\n' }, install: false });
  await client.createRepo({ owner: 'other', name: 'private', files: { 'a.txt': 'a\n' } });
  // The GitOps repositories of each visibility, and a private source whose commit must not leak.
  await client.createRepo({ owner: 'example', name: 'gitops', files: { 'a.txt': 'a\n' } });
  await client.createRepo({
    owner: 'example',
    name: 'gitops-private',
    files: { 'a.txt': 'a\n' },
    visibility: 'private',
  });
  await client.createRepo({
    owner: 'example',
    name: 'gitops-internal',
    files: { 'a.txt': 'a\n' },
    visibility: 'internal',
  });
  await client.createRepo({ owner: 'example', name: 'app', files: { 'a.txt': 'a\n' }, visibility: 'private' });
  secretBase = (await user.rest.repos.getBranch({ owner: 'example', repo: 'app', branch: 'main' })).data.commit.sha;
  secretHead = (await client.commit('example/app', { branch: 'main', files: { 'b.txt': 'b\n' }, message: SECRET })).sha;
});

afterAll(async () => {
  await sim?.close();
});

function live(markdown: string): string[] {
  const outside = markdown
    .replace(/&#8288;/g, '\u2060')
    .replace(/^(`{3,})text\n[\s\S]*?\n\1$/gm, '')
    .replace(/(`+)[^`]*?\1/g, '')
    .replace(/\]\(https?:\/\/[^)\s]+\)/g, ']');
  return [
    ...outside.matchAll(
      /@[A-Za-z0-9]|#\d|<(?!\/?(details|summary)>)[^ ]|(?<!redirect\\?\.)github\\?\.com\/[^ ]*\/(issues|pull)\//g,
    ),
  ].map((m) => m[0]);
}

describe('loadSourceRange', () => {
  it('reads the commits, the merged pull request and the release in the range', async () => {
    calls = [];
    const range = await loadSourceRange(github, { host: 'github.com', owner: 'example', repo: 'hello' }, base, head, {
      installationId,
      gitops,
    });
    expect(range.kind).toBe('read');
    const read = range as Extract<SourceRange, { kind: 'read' }>;
    expect(read.totalCommits).toBe(3);
    // The squash merge's message, as GitHub writes it: the title and the pull request number.
    expect(read.commits.map((c) => c.message.split('\n')[0])).toEqual([HOSTILE[0], `${HOSTILE[1]} (#1)`, HOSTILE[2]]);
    expect(read.commits[1]?.pulls).toEqual([1]);
    expect(read.pulls.map((p) => p.title)).toEqual([HOSTILE[1]]);
    expect(read.releases.map((r) => r.tag)).toEqual(['v1.1.0']);
    // installation, (token), both visibilities, compare, closed pull requests, releases, tags.
    expect(calls.filter((route) => !route.includes('access_tokens'))).toEqual([
      'GET /repos/{owner}/{repo}/installation',
      'GET /repos/{owner}/{repo}',
      'GET /repos/{owner}/{repo}',
      'GET /repos/{owner}/{repo}/compare/{basehead}',
      'GET /repos/{owner}/{repo}/pulls',
      'GET /repos/{owner}/{repo}/releases',
      'GET /repos/{owner}/{repo}/tags',
    ]);
    const text = renderReleaseNotes(
      [
        {
          image: 'ghcr.io/example/hello',
          to: { tag: '1.1.0' },
          source: {
            url: 'https://github.com/example/hello',
            repository: { host: 'github.com', owner: 'example', repo: 'hello' },
          },
          range,
        },
      ],
      { budget: 20_000 },
    );
    expect(live(text)).toEqual([]);
    expect(text).toContain('**Merged pull requests (1)**');
    expect(text).toContain('<details><summary>v1\\.1\\.0: \\@&#8288;octocat \\#&#8288;2</summary>');
  });

  it('says why when the App is not installed on the source repository', async () => {
    expect(
      await loadSourceRange(github, { host: 'github.com', owner: 'outsider', repo: 'hidden' }, base, head, {
        installationId,
        gitops,
      }),
    ).toEqual({
      kind: 'unavailable',
      base,
      head,
      reason:
        'Escalator cannot show the changes of outsider/hidden: the App is not installed on it (install it there with read access to contents and pull requests).',
    });
  });

  it("never reads another installation's repository into this one's pull request", async () => {
    const range = await loadSourceRange(github, { host: 'github.com', owner: 'other', repo: 'private' }, base, head, {
      installationId,
      gitops,
    });
    expect(range).toMatchObject({ kind: 'unavailable', reason: expect.stringMatching(/another installation/) });
  });

  it('says so when a revision is not in the repository', async () => {
    const range = await loadSourceRange(
      github,
      { host: 'github.com', owner: 'example', repo: 'hello' },
      'f'.repeat(40),
      head,
      { installationId, gitops },
    );
    expect(range).toMatchObject({ kind: 'unavailable', reason: expect.stringMatching(/does not find one of them/) });
  });

  it('reads one page of a range of 5,000 commits and renders it within the budget', { timeout: 120_000 }, async () => {
    // 5,000 commits written straight into the simulator's bare repository by git fast-import.
    const repo = sim.context.state.repo('example', 'hello')!;
    const lines = [`reset refs/heads/many`, `from ${head}`, ''];
    for (let i = 0; i < 5000; i++) {
      const message = `Change ${i}: @team see #${i} <b>bold</b>\n`;
      lines.push(
        'commit refs/heads/many',
        `committer Dev <dev@example.com> ${1_700_000_000 + i} +0000`,
        `data ${Buffer.byteLength(message)}`,
        message,
      );
    }
    execFileSync('git', ['fast-import', '--quiet'], { cwd: repo.git.dir, input: lines.join('\n') });
    const many = (await repo.git.readRef('refs/heads/many'))!;
    await repo.git.setRef('refs/heads/many', many);
    const range = await loadSourceRange(github, { host: 'github.com', owner: 'example', repo: 'hello' }, head, many, {
      installationId,
      gitops,
    });
    expect(range).toMatchObject({ kind: 'read', totalCommits: 5000 });
    expect((range as Extract<SourceRange, { kind: 'read' }>).commits).toHaveLength(100);
    const text = renderReleaseNotes(
      [
        {
          image: 'ghcr.io/example/hello',
          to: { tag: '9.9.9' },
          source: {
            url: 'https://github.com/example/hello',
            repository: { host: 'github.com', owner: 'example', repo: 'hello' },
          },
          range,
        },
      ],
      { budget: 30_000 },
    );
    expect(text.length).toBeLessThanOrEqual(30_000);
    expect(text).toContain('<details><summary>Commits (5000)</summary>');
    expect(text).toMatch(/- … and 4900 more: \[Compare [0-9a-f]{7}\.\.\.[0-9a-f]{7}\]/);
    expect(live(text)).toEqual([]);
  });

  describe('when the source is more private than the GitOps repository', () => {
    const app = { host: 'github.com', owner: 'example', repo: 'app' };

    it('reads nothing of a private source for a public GitOps repository, and says "private source, not shown"', async () => {
      calls = [];
      const range = await loadSourceRange(github, app, secretBase, secretHead, { installationId, gitops });
      expect(range).toEqual({
        kind: 'unavailable',
        hidden: true,
        reason:
          "Private source, not shown: the image's source repository is not visible to everyone who reads this public repository, so its commits, pull requests and releases stay out of this pull request.",
      });
      expect(calls.some((route) => route.includes('compare'))).toBe(false);
      const text = renderReleaseNotes(
        [
          {
            image: 'ghcr.io/example/app',
            from: { tag: '1.0.0' },
            to: { tag: '1.1.0' },
            source: { url: 'https://github.com/example/app', repository: app },
            range,
          },
        ],
        { budget: 20_000 },
      );
      expect(text).toContain('| Source | private source, not shown |');
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain('github.com/example/app');
      expect(text).not.toContain(secretHead.slice(0, 7));
    });

    it('shows a private source of the same owner in a private GitOps repository', async () => {
      const range = await loadSourceRange(github, app, secretBase, secretHead, {
        installationId,
        gitops: { owner: 'example', repo: 'gitops-private' },
      });
      expect(range.kind).toBe('read');
      expect((range as Extract<SourceRange, { kind: 'read' }>).commits.map((c) => c.message)).toEqual([SECRET]);
    });

    it('hides a private source from an internal GitOps repository, shows a public one', async () => {
      const internal = { owner: 'example', repo: 'gitops-internal' };
      expect(
        await loadSourceRange(github, app, secretBase, secretHead, { installationId, gitops: internal }),
      ).toMatchObject({ kind: 'unavailable', hidden: true });
      expect(
        (
          await loadSourceRange(github, { host: 'github.com', owner: 'example', repo: 'hello' }, base, head, {
            installationId,
            gitops: internal,
          })
        ).kind,
      ).toBe('read');
    });
  });
});
