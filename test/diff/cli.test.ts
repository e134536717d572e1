import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalGitSourceTree, renderAndDiff } from '../../src/adapters/render/index.js';
import { diffHelp, runDiff } from '../../src/cli/diff.js';
import { renderComment } from '../../src/planners/diff/index.js';
import { UsageError, type CliIo } from '../../src/cli/io.js';
import { buildCaseRepo } from './support/case-repo.js';
import { repoWith } from '../support/git-repo.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/diff/', import.meta.url));
const cacheDir = mkdtempSync(join(tmpdir(), 'escalator-diff-cli-'));
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

function io(cwd: string): CliIo & { out: string; err: string } {
  const result = {
    out: '',
    err: '',
    cwd,
    stdout: (text: string) => (result.out += text),
    stderr: (text: string) => (result.err += text),
  };
  return result;
}

describe('escalator diff', () => {
  it('prints exactly the comment of the golden case', async () => {
    const repo = buildCaseRepo(join(FIXTURES, 'configmap-generator'));
    try {
      const out = io(repo.dir);
      expect(
        await runDiff(
          ['--base', repo.base, '--head', 'main', '--repository', 'example/gitops', '--cache-dir', cacheDir],
          out,
        ),
      ).toBe(0);
      expect(out.out).toBe(readFileSync(join(FIXTURES, 'configmap-generator/expected.md'), 'utf8'));
    } finally {
      repo.cleanup();
    }
  });

  it('prints JSON with targets, objects by change kind, Secret keys and failures — and exits 0 although a target fails', async () => {
    const repo = buildCaseRepo(join(FIXTURES, 'secrets'));
    try {
      const out = io('/');
      expect(
        await runDiff(
          ['--repo', repo.dir, '--base', repo.base, '--head', repo.head, '--format', 'json', '--cache-dir', cacheDir],
          out,
        ),
      ).toBe(0);
      expect(out.out).not.toContain('CANARY');
      const report = JSON.parse(out.out);
      expect(report.summary).toMatchObject({ targetsChecked: 3, failures: 1, secretsChanged: 2 });
      const cache = report.targets.find((target: { id: string }) => target.id === 'apps/cache');
      expect(cache.failure).toMatchObject({ side: 'head', breaks: true });
      const db = report.targets.find((target: { id: string }) => target.id === 'apps/db');
      const secret = db.objects.find((object: { kind: string }) => object.kind === 'Secret');
      expect(secret).toMatchObject({
        change: 'renamed',
        renameReason: 'hash-suffix',
        name: 'db-credentials-9ddg4bg675',
      });
      expect(secret.secretKeys).toEqual([
        { key: 'API_TOKEN', change: 'changed', fromBytes: 24, toBytes: 24 },
        { key: 'NEW_KEY', change: 'added', toBytes: 21 },
        { key: 'OLD_KEY', change: 'removed', fromBytes: 21 },
        { key: 'password', change: 'changed', fromBytes: 25, toBytes: 39 },
      ]);
    } finally {
      repo.cleanup();
    }
  });

  it('renders only the --path targets', async () => {
    const repo = buildCaseRepo(join(FIXTURES, 'head-failure'));
    try {
      const out = io(repo.dir);
      expect(
        await runDiff(
          [
            '--base',
            repo.base,
            '--head',
            repo.head,
            '--path',
            'apps/blog',
            '--format',
            'json',
            '--cache-dir',
            cacheDir,
          ],
          out,
        ),
      ).toBe(0);
      expect(JSON.parse(out.out).targets.map((target: { id: string }) => target.id)).toEqual(['apps/blog']);
    } finally {
      repo.cleanup();
    }
  });

  it('reads diff.paths from .github/escalator.yml at base like the App; --path overrides it; an invalid file is said on stderr', async () => {
    const repo = buildCaseRepo(join(FIXTURES, 'head-failure'));
    const git = (...args: string[]): string =>
      execFileSync('git', ['-C', repo.dir, '-c', 'user.name=t', '-c', 'user.email=t@t.invalid', ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
      })
        .toString('utf8')
        .trim();
    const withConfig = (config: string): { base: string; head: string } => {
      git('checkout', '-q', '--detach', repo.base);
      mkdirSync(join(repo.dir, '.github'), { recursive: true });
      writeFileSync(join(repo.dir, '.github/escalator.yml'), config);
      git('add', '-A');
      git('commit', '-qm', 'config');
      const base = git('rev-parse', 'HEAD');
      git('checkout', '-q', repo.head, '--', 'apps');
      git('commit', '-qam', 'change');
      return { base, head: git('rev-parse', 'HEAD') };
    };
    const targets = async (base: string, head: string, extra: string[] = []) => {
      const out = io(repo.dir);
      await runDiff(['--base', base, '--head', head, '--format', 'json', '--cache-dir', cacheDir, ...extra], out);
      return { ids: JSON.parse(out.out).targets.map((target: { id: string }) => target.id), err: out.err };
    };
    try {
      const env = 'environments:\n  - name: prod\n    paths: ["apps/*"]\n    from: registry\n';
      const configured = withConfig(`${env}diff:\n  paths: ["apps/blog"]\n`);
      expect(await targets(configured.base, configured.head)).toEqual({ ids: ['apps/blog'], err: '' });
      expect((await targets(configured.base, configured.head, ['--path', 'apps/shop'])).ids).toEqual(['apps/shop']);
      const invalid = withConfig(`${env}diff:\n  paths: "apps/blog"\n`);
      const all = await targets(invalid.base, invalid.head);
      expect(all.ids).toEqual(['apps/blog', 'apps/shop']);
      expect(all.err).toContain('.github/escalator.yml at');
      expect(all.err).toContain('.github/escalator.yml:6:10: paths must be a list');
    } finally {
      repo.cleanup();
    }
  });

  it("starts the comment with the App's callout when the change reaches several environments at once (issue 33.5)", async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'escalator-diff-shared-'));
    const deployment = (tag: string) =>
      `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: hello}\nspec:\n  template:\n    spec:\n      containers:\n        - {name: hello, image: "ghcr.io/example/hello:${tag}"}\n`;
    const overlay = 'resources: [../../base]\n';
    const config =
      'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n  - name: prod\n    paths: ["apps/*/overlays/prod"]\n    from: dev\n    soak: 2h\n';
    try {
      const { dir, shas } = repoWith(
        scratch,
        {
          '.github/escalator.yml': config,
          'apps/hello/base/kustomization.yaml': 'resources: [deployment.yaml]\n',
          'apps/hello/base/deployment.yaml': deployment('1.0.0'),
          'apps/hello/overlays/dev/kustomization.yaml': overlay,
          'apps/hello/overlays/prod/kustomization.yaml': overlay,
        },
        { 'apps/hello/base/deployment.yaml': deployment('1.1.0') },
        { 'apps/hello/overlays/dev/kustomization.yaml': `${overlay}namePrefix: dev-\n` },
      );
      const run = async (base: string, head: string) => {
        const out = io(dir);
        await runDiff(['--base', base, '--head', head, '--cache-dir', cacheDir], out);
        return out.out;
      };
      expect(await run(shas[0]!, shas[1]!)).toMatch(
        /^<!-- escalator:diff v1 -->\n\n> \[!WARNING\]\n> \*\*This change reaches dev and prod at once\*\* through `apps\/hello\/base`: it skips prod's promotion from dev and soak \(2h\)\.\n\n### Rendered manifest diff\n/,
      );
      expect(await run(shas[1]!, shas[2]!)).toMatch(/^<!-- escalator:diff v1 -->\n\n### Rendered manifest diff\n/);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('refuses bad arguments and unknown revisions with a usage error', async () => {
    const out = io(FIXTURES);
    await expect(runDiff(['--head', 'x'], out)).rejects.toThrow(
      new UsageError('diff needs --base <rev> and --head <rev>'),
    );
    await expect(runDiff(['--base', 'a', '--head', 'b', '--format', 'html'], out)).rejects.toThrow(
      /--format must be markdown or json/,
    );
    await expect(runDiff(['--base', 'a', '--head', 'b', '--timeout', '0'], out)).rejects.toThrow(/--timeout/);
    await expect(runDiff(['--base', 'a', '--head', 'b', '--path'], out)).rejects.toThrow(/--path needs a value/);
    await expect(runDiff(['--base', 'a', '--head', 'b', '--frobnicate'], out)).rejects.toThrow(
      /unknown option --frobnicate/,
    );
    const repo = buildCaseRepo(join(FIXTURES, 'image-bump'));
    try {
      await expect(runDiff(['--repo', repo.dir, '--base', 'no-such-rev', '--head', repo.head], out)).rejects.toThrow(
        UsageError,
      );
    } finally {
      repo.cleanup();
    }
  });

  it("reproduces the App's comment of a pull request from a fresh clone with the footer's command, never naming GitHub's merge commit", async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'escalator-diff-reproduce-'));
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: scratch,
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'Dev',
      GIT_AUTHOR_EMAIL: 'dev@example.invalid',
      GIT_COMMITTER_NAME: 'Dev',
      GIT_COMMITTER_EMAIL: 'dev@example.invalid',
    };
    const git = (dir: string, ...args: string[]): string =>
      execFileSync('git', ['-C', dir, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
        .toString('utf8')
        .trim();
    const write = (dir: string, files: Record<string, string>): void => {
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(join(dir, path, '..'), { recursive: true });
        writeFileSync(join(dir, path), text);
      }
    };
    const overlay = (tag: string) =>
      `resources: [../../base]\nimages:\n  - name: ghcr.io/example/hello\n    newTag: ${tag}\n`;
    try {
      // Upstream as GitHub holds it: main, a pull request branch, main moving on after the branch was cut.
      const upstream = join(scratch, 'upstream');
      mkdirSync(upstream);
      git(upstream, 'init', '-q', '-b', 'main');
      write(upstream, {
        'apps/hello/base/kustomization.yaml': 'resources: [deployment.yaml]\n',
        'apps/hello/base/deployment.yaml':
          'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: hello}\nspec:\n  selector: {matchLabels: {app: hello}}\n  template:\n    metadata: {labels: {app: hello}}\n    spec:\n      containers:\n        - {name: hello, image: ghcr.io/example/hello:1.0.0}\n',
        'apps/hello/overlays/dev/kustomization.yaml': overlay('1.0.0'),
        'apps/hello/overlays/prod/kustomization.yaml': overlay('1.0.0'),
      });
      git(upstream, 'add', '-A');
      git(upstream, 'commit', '-q', '-m', 'base');
      git(upstream, 'checkout', '-q', '-b', 'bump');
      write(upstream, { 'apps/hello/overlays/dev/kustomization.yaml': overlay('1.1.0') });
      git(upstream, 'commit', '-qam', 'bump dev');
      const headSha = git(upstream, 'rev-parse', 'HEAD');
      git(upstream, 'checkout', '-q', 'main');
      write(upstream, { 'apps/hello/overlays/prod/kustomization.yaml': overlay('0.9.0') });
      git(upstream, 'commit', '-qam', 'prod on main');
      const baseSha = git(upstream, 'rev-parse', 'HEAD');
      // GitHub's test merge commit (refs/pull/7/merge): its own author and time, in no clone.
      git(upstream, 'checkout', '-q', '--detach', baseSha);
      git(upstream, 'merge', '-q', '--no-ff', '-m', `Merge ${headSha} into ${baseSha}`, headSha);
      const mergeSha = git(upstream, 'rev-parse', 'HEAD');
      git(upstream, 'checkout', '-q', 'main');
      const origin = join(scratch, 'origin.git');
      git(scratch, 'clone', '-q', '--bare', upstream, origin);
      git(origin, 'update-ref', 'refs/pull/7/head', headSha);
      git(origin, 'update-ref', 'refs/pull/7/merge', mergeSha);
      git(origin, 'branch', '-D', 'bump');

      // What the App posts: base → the merge commit.
      const report = await renderAndDiff({
        base: LocalGitSourceTree.open(origin, baseSha),
        head: LocalGitSourceTree.open(origin, mergeSha),
        changedPaths: null,
        options: { cacheDir },
      });
      const comment = renderComment(report, {
        baseSha,
        headSha: mergeSha,
        mergeCommit: true,
        pull: { number: 7, headSha },
        repository: 'example/gitops',
      });
      const command = /Reproduce locally: `([^`]+)`/.exec(comment)?.[1] ?? '';
      expect(command).toBe(
        `git fetch origin && git fetch origin pull/7/head && escalator diff --base ${baseSha.slice(0, 7)} --head ${headSha.slice(0, 7)} --merged`,
      );
      expect(command).not.toContain(mergeSha.slice(0, 7));

      // A user's clone: it has neither the merge commit nor, before the fetch, the branch head.
      const clone = join(scratch, 'clone');
      git(scratch, 'clone', '-q', '--no-local', origin, clone);
      expect(() => git(clone, 'cat-file', '-e', `${headSha}^{commit}`)).toThrow();
      let printed: (CliIo & { out: string }) | undefined;
      for (const step of command.split(' && ')) {
        const [tool, ...args] = step.split(' ');
        if (tool === 'git') git(clone, ...args);
        else {
          expect(tool).toBe('escalator');
          expect(args[0]).toBe('diff');
          printed = io(clone);
          expect(
            await runDiff([...args.slice(1), '--repository', 'example/gitops', '--cache-dir', cacheDir], printed),
          ).toBe(0);
        }
      }
      expect(() => git(clone, 'cat-file', '-e', `${mergeSha}^{commit}`)).toThrow();
      // Everything but the header line and the footer is the App's comment, byte for byte.
      const body = (text: string): string[] => text.split('\n').filter((line) => !/^Base |^<sub>/.test(line));
      expect(printed?.out.split('\n')[4]).toMatch(
        new RegExp(
          `^Base \`${baseSha.slice(0, 7)}\` → head \`${headSha.slice(0, 7)}\` merged into base \\(\`[0-9a-f]{7}\`, as GitHub's merge commit of a pull request\\)\\.$`,
        ),
      );
      expect(body(printed?.out ?? '')).toEqual(body(comment));
      expect(comment).toContain('1.1.0');
      expect(comment).not.toContain('overlays/prod');
      // Without --merged the branch head would undo main's newer prod change: the flag matters here.
      const plain = io(clone);
      await runDiff(['--base', baseSha, '--head', headSha, '--cache-dir', cacheDir], plain);
      expect(plain.out).toContain('overlays/prod');
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('--merged refuses two commits that do not merge cleanly, as GitHub has no merge commit for them', async () => {
    const repo = buildCaseRepo(join(FIXTURES, 'image-bump'));
    try {
      execFileSync('git', ['-C', repo.dir, 'checkout', '-q', '-b', 'other', repo.base], { stdio: 'ignore' });
      writeFileSync(join(repo.dir, 'apps/hello/overlays/dev/kustomization.yaml'), 'resources: []\n');
      execFileSync(
        'git',
        ['-C', repo.dir, '-c', 'user.name=t', '-c', 'user.email=t@t.invalid', 'commit', '-qam', 'conflicting'],
        { stdio: 'ignore' },
      );
      await expect(
        runDiff(
          ['--repo', repo.dir, '--base', 'other', '--head', repo.head, '--merged', '--cache-dir', cacheDir],
          io('/'),
        ),
      ).rejects.toThrow(/does not merge cleanly .* run without --merged/);
    } finally {
      repo.cleanup();
    }
  });

  it('prints its help', async () => {
    const out = io('/');
    expect(await runDiff(['--help'], out)).toBe(0);
    expect(out.out).toBe(`${diffHelp}\n`);
  });
});
