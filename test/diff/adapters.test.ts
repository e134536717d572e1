import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoWith as repoWithCommits } from '../support/git-repo.js';
import { afterAll, describe, expect, it } from 'vitest';
import {
  cleanToolError,
  findTools,
  gitBlobSha,
  gitCalls,
  LocalGitSourceTree,
  materializeCheckout,
  renderAndDiff,
} from '../../src/adapters/render/index.js';
import { NotFoundError } from '../../src/observability/errors.js';
import { renderComment } from '../../src/planners/diff/index.js';

const FAKE_HELM = fileURLToPath(new URL('./support/fake-helm.sh', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'escalator-render-adapters-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let counter = 0;

/** A repository with one commit per entry: files to write (string) or delete (null). */
const repoWith = (...commits: Array<Record<string, string | null>>) => repoWithCommits(scratch, ...commits);

function fakeTool(name: string, script: string): string {
  const path = join(scratch, `${name}-${counter++}`);
  writeFileSync(path, `#!/bin/sh\n${script}\n`);
  chmodSync(path, 0o755);
  return path;
}

const cm = (name: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {v: "${value}"}\n`;
const kustomization = 'resources: [cm.yaml]\n';

describe('LocalGitSourceTree', () => {
  it('lists, reads (one by one and in a batch) and names blobs like git does', () => {
    const { dir, shas } = repoWith({ 'a/b.yaml': 'x: 1\n', 'c.txt': 'hello', link: 'symlink:c.txt' });
    const tree = LocalGitSourceTree.open(dir, shas[0] as string);
    expect(tree.listFiles()).toEqual(['a/b.yaml', 'c.txt', 'link']);
    expect(tree.isSymlink('link')).toBe(true);
    tree.preload(['a/b.yaml', 'c.txt']);
    expect(tree.read('a/b.yaml').toString()).toBe('x: 1\n');
    expect(tree.blobSha('c.txt')).toBe(gitBlobSha(Buffer.from('hello')));
    expect(() => tree.read('missing')).toThrow(NotFoundError);
    expect(() => LocalGitSourceTree.open(dir, 'no-such-branch')).toThrow(/not a commit/);
  });
});

describe('materializeCheckout', () => {
  it('extracts a commit once (git archive), then reuses it from the cache by SHA', async () => {
    const { dir, shas } = repoWith({ 'k/kustomization.yaml': kustomization, 'k/cm.yaml': cm('a', '1') });
    const cache = join(scratch, `cache-${counter++}`);
    const before = gitCalls.archive;
    const first = await materializeCheckout(LocalGitSourceTree.open(dir, shas[0] as string), cache);
    const second = await materializeCheckout(LocalGitSourceTree.open(dir, shas[0] as string), cache);
    expect(gitCalls.archive - before).toBe(1);
    expect([first.materialized, second.materialized]).toEqual([true, false]);
    expect(readFileSync(join(second.dir, 'k/cm.yaml'), 'utf8')).toBe(cm('a', '1'));
  });

  it('removes symbolic links that leave the checkout and keeps the ones inside', async () => {
    const { dir, shas } = repoWith({
      'k/cm.yaml': cm('a', '1'),
      'k/inside.yaml': 'symlink:cm.yaml',
      'k/passwd.yaml': 'symlink:/etc/passwd',
      'k/up.yaml': 'symlink:../../../../x.yaml',
    });
    const checkout = await materializeCheckout(
      LocalGitSourceTree.open(dir, shas[0] as string),
      join(scratch, `cache-${counter++}`),
    );
    expect(checkout.refusedSymlinks).toEqual(['k/passwd.yaml', 'k/up.yaml']);
    expect(existsSync(join(checkout.dir, 'k/inside.yaml'))).toBe(true);
    expect(existsSync(join(checkout.dir, 'k/passwd.yaml'))).toBe(false);
  });
});

describe('renderAndDiff', () => {
  it('a second run on the same SHAs fetches nothing and renders nothing, with identical output', async () => {
    const { dir, shas } = repoWith(
      { 'app/kustomization.yaml': kustomization, 'app/cm.yaml': cm('a', '1') },
      { 'app/cm.yaml': cm('a', '2') },
    );
    const cacheDir = join(scratch, `cache-${counter++}`);
    const run = () =>
      renderAndDiff({
        base: LocalGitSourceTree.open(dir, shas[0] as string),
        head: LocalGitSourceTree.open(dir, shas[1] as string),
        changedPaths: null,
        options: { cacheDir },
      });
    const archives = gitCalls.archive;
    const first = await run();
    expect(gitCalls.archive - archives).toBe(2);
    expect(first.stats).toMatchObject({ renders: 2, renderCacheHits: 0, checkoutsMaterialized: 2 });
    const second = await run();
    expect(gitCalls.archive - archives).toBe(2);
    expect(second.stats).toMatchObject({ renders: 0, renderCacheHits: 2, checkoutsMaterialized: 0 });
    const context = { baseSha: shas[0] as string, headSha: shas[1] as string, repository: 'r' };
    expect(renderComment(second, context)).toBe(renderComment(first, context));
    // And without any cache: the same bytes again.
    const fresh = await renderAndDiff({
      base: LocalGitSourceTree.open(dir, shas[0] as string),
      head: LocalGitSourceTree.open(dir, shas[1] as string),
      changedPaths: null,
      options: { cacheDir: join(scratch, `cache-${counter++}`), renderCache: false },
    });
    expect(renderComment(fresh, context)).toBe(renderComment(first, context));
  });

  it('refuses remote resources and exec plugins without running kustomize', async () => {
    const { dir, shas } = repoWith(
      {
        'remote/kustomization.yaml': 'resources: [cm.yaml]\n',
        'remote/cm.yaml': cm('a', '1'),
        'plugin/kustomization.yaml': 'resources: [cm.yaml]\n',
        'plugin/cm.yaml': cm('b', '1'),
      },
      {
        'remote/kustomization.yaml':
          'resources:\n  - cm.yaml\n  - https://github.com/example/manifests//base?ref=v1.0.0\n',
        'plugin/kustomization.yaml': 'resources: [cm.yaml]\ngenerators: [gen.yaml]\n',
        'plugin/gen.yaml':
          'apiVersion: example.com/v1\nkind: Gen\nmetadata:\n  name: g\n  annotations:\n    config.kubernetes.io/function: |\n      exec: {path: ./steal.sh}\n',
      },
    );
    const report = await renderAndDiff({
      base: LocalGitSourceTree.open(dir, shas[0] as string),
      head: LocalGitSourceTree.open(dir, shas[1] as string),
      changedPaths: null,
      options: { cacheDir: join(scratch, `cache-${counter++}`) },
    });
    expect(report.targets.map((target) => [target.id, target.failure?.side, target.failure?.message])).toEqual([
      [
        'plugin',
        'head',
        'refused: Escalator never runs exec or container plugins (plugin/gen.yaml declares a KRM function (exec or container plugin))',
      ],
      [
        'remote',
        'head',
        'refused: remote resources are not fetched (https://github.com/example/manifests//base?ref=v1.0.0); vendor them into the repository',
      ],
    ]);
  });

  it('refuses a kustomization that reads through a symlink leaving the repository', async () => {
    const { dir, shas } = repoWith(
      { 'app/kustomization.yaml': kustomization, 'app/cm.yaml': cm('a', '1') },
      { 'app/cm.yaml': 'symlink:/etc/hostname' },
    );
    const report = await renderAndDiff({
      base: LocalGitSourceTree.open(dir, shas[0] as string),
      head: LocalGitSourceTree.open(dir, shas[1] as string),
      changedPaths: null,
      options: { cacheDir: join(scratch, `cache-${counter++}`) },
    });
    expect(report.targets[0]?.failure?.message).toBe(
      'refused: symbolic links point outside the repository (app/cm.yaml)',
    );
  });

  it('stops a render that runs too long, and one that prints too much', async () => {
    const { dir, shas } = repoWith(
      { 'app/kustomization.yaml': kustomization, 'app/cm.yaml': cm('a', '1') },
      { 'app/cm.yaml': cm('a', '2') },
    );
    const slow = fakeTool('kustomize-slow', '[ "$1" = version ] && exit 0; sleep 30');
    const started = performance.now();
    const timedOut = await renderAndDiff({
      base: LocalGitSourceTree.open(dir, shas[0] as string),
      head: LocalGitSourceTree.open(dir, shas[1] as string),
      changedPaths: null,
      options: { cacheDir: join(scratch, `cache-${counter++}`), timeoutMs: 300, tools: { kustomize: slow } },
    });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(timedOut.targets[0]?.failure?.message).toBe('kustomize did not finish within 0.3 s and was stopped');
    const loud = fakeTool('kustomize-loud', 'head -c 3000000 /dev/zero | tr "\\0" "a"');
    const tooLarge = await renderAndDiff({
      base: LocalGitSourceTree.open(dir, shas[0] as string),
      head: LocalGitSourceTree.open(dir, shas[1] as string),
      changedPaths: null,
      options: {
        cacheDir: join(scratch, `cache-${counter++}`),
        maxOutputBytes: 1024 * 1024,
        tools: { kustomize: loud },
      },
    });
    expect(tooLarge.targets[0]?.failure?.message).toBe('kustomize printed more than 1 MiB and was stopped');
  });

  it('stops a render whose processes hold too much memory, counting the processes it starts', async () => {
    const { dir, shas } = repoWith(
      { 'app/kustomization.yaml': kustomization, 'app/cm.yaml': cm('a', '1') },
      { 'app/cm.yaml': cm('a', '2') },
    );
    // The shell stays small; the process it starts (as kustomize starts helm) takes 512 MiB.
    const hungry = fakeTool(
      'kustomize-hungry',
      '[ "$1" = version ] && exit 0\nnode -e "globalThis.held = Buffer.alloc(512 * 1024 * 1024, 1); setTimeout(() => {}, 30000)"\necho "not stopped" >&2; exit 1',
    );
    const report = await renderAndDiff({
      base: LocalGitSourceTree.open(dir, shas[0] as string),
      head: LocalGitSourceTree.open(dir, shas[1] as string),
      changedPaths: null,
      options: {
        cacheDir: join(scratch, `cache-${counter++}`),
        maxMemoryBytes: 128 * 1024 * 1024,
        timeoutMs: 20_000,
        tools: { kustomize: hungry },
      },
    });
    expect(report.targets.map((target) => [target.id, target.failure?.side, target.failure?.message])).toEqual([
      ['app', 'both', 'kustomize used more than 128 MiB of memory and was stopped'],
    ]);
  });

  it('refuses every hostile target of one pull request within its limits, and still renders the others', async () => {
    const chart = (name: string) => ({
      [`${name}/Chart.yaml`]: `name: ${name}\n`,
      [`${name}/templates/x.yaml`]: '{{ . }}\n',
      [`${name}/values.yaml`]: 'tag: 1\n',
    });
    const { dir, shas } = repoWith(
      {
        'good/kustomization.yaml': kustomization,
        'good/cm.yaml': cm('a', '1'),
        ...chart('chart'),
        ...chart('endless'),
      },
      {
        'good/cm.yaml': cm('a', '2'),
        'escape/kustomization.yaml': 'resources:\n  - ../../../../../../../../etc\n',
        'absolute/kustomization.yaml': 'resources:\n  - /etc/passwd\n',
        'remote/kustomization.yaml': 'resources:\n  - https://example.com/manifests.yaml\n',
        'plugin/kustomization.yaml': 'transformers: [t.yaml]\n',
        'plugin/t.yaml':
          'apiVersion: example.com/v1\nkind: T\nmetadata:\n  name: t\n  annotations:\n    config.kubernetes.io/function: |\n      exec: {path: /bin/sh}\n',
        'bomb/kustomization.yaml': 'resources: [cm.yaml]\n',
        'bomb/cm.yaml': `a: &a ["x","x","x","x","x","x","x","x","x"]\n${['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].map((name, i) => `${name}: &${name} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(',')}]`).join('\n')}\n`,
        'chart/values.yaml': 'tag: 2\n',
        'endless/values.yaml': 'tag: 2\n',
      },
    );
    // A chart whose templates never end: helm is stopped at the time limit.
    // (The stand-in's text is copied in: a render sees only its own tool binaries, not the test folder.)
    const helm = fakeTool(
      'helm-endless',
      `case "$3" in *endless*) sleep 60 ;; esac\n${readFileSync(FAKE_HELM, 'utf8')}`,
    );
    const started = performance.now();
    const report = await renderAndDiff({
      base: LocalGitSourceTree.open(dir, shas[0] as string),
      head: LocalGitSourceTree.open(dir, shas[1] as string),
      changedPaths: null,
      options: { cacheDir: join(scratch, `cache-${counter++}`), timeoutMs: 3_000, tools: { helm } },
    });
    expect(performance.now() - started).toBeLessThan(30_000);
    const outside = 'keep everything the overlay uses inside the repository';
    expect(
      report.targets.map((target) => [
        target.id,
        target.failure
          ? `${target.failure.side}: ${target.failure.message}`
          : `rendered, ${target.objects.length} changed`,
      ]),
    ).toEqual([
      [
        'absolute',
        `head: refused: Escalator never reads outside the repository (absolute/kustomization.yaml line 2 reads /etc/passwd); ${outside}`,
      ],
      [
        'bomb',
        "head: refused: bomb/cm.yaml: the file's aliases expand to more than 100,000 values when read (an alias bomb, or an alias inside the value it names); write the values out instead",
      ],
      ['chart', 'rendered, 1 changed'],
      ['endless', 'both: helm template did not finish within 3 s and was stopped'],
      [
        'escape',
        `head: refused: Escalator never reads outside the repository (escape/kustomization.yaml line 2 reads ../../../../../../../../etc); ${outside}`,
      ],
      ['good', 'rendered, 1 changed'],
      [
        'plugin',
        'head: refused: Escalator never runs exec or container plugins (plugin/t.yaml declares a KRM function (exec or container plugin))',
      ],
      [
        'remote',
        'head: refused: remote resources are not fetched (https://example.com/manifests.yaml); vendor them into the repository',
      ],
    ]);
  });

  it('runs tools with a scrubbed environment, the root-only load restrictor and no plugin flags', async () => {
    const { dir, shas } = repoWith(
      { 'app/kustomization.yaml': kustomization, 'app/cm.yaml': cm('a', '1') },
      { 'app/cm.yaml': cm('a', '2') },
    );
    const spy = fakeTool('kustomize-spy', 'echo "args: $*" >&2; env >&2; exit 1');
    process.env.ESCALATOR_TEST_TOKEN = 'CANARY-process-env-token';
    try {
      const report = await renderAndDiff({
        base: LocalGitSourceTree.open(dir, shas[0] as string),
        head: LocalGitSourceTree.open(dir, shas[1] as string),
        changedPaths: null,
        options: { cacheDir: join(scratch, `cache-${counter++}`), tools: { kustomize: spy } },
      });
      const message = report.targets[0]?.failure?.message ?? '';
      expect(message).toContain('args: build --load-restrictor LoadRestrictionsRootOnly -- ./app');
      expect(message).not.toContain('enable-alpha-plugins');
      expect(message).not.toContain('CANARY-process-env-token');
      // Only what we pass (plus what sh itself sets: PWD, SHLVL, _).
      const allowed = [
        'HELM_CACHE_HOME',
        'HELM_CONFIG_HOME',
        'HELM_DATA_HOME',
        'HELM_PLUGINS',
        'HOME',
        'KUBECONFIG',
        'KUSTOMIZE_PLUGIN_HOME',
        'LANG',
        'PATH',
        'PWD',
        'SHLVL',
        'XDG_CACHE_HOME',
        'XDG_CONFIG_HOME',
        'XDG_DATA_HOME',
        '_',
      ];
      const names = message
        .split('\n')
        .filter((line) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(line))
        .map((line) => line.slice(0, line.indexOf('=')));
      expect(names.length).toBeGreaterThan(5);
      for (const name of names) expect(allowed).toContain(name);
    } finally {
      delete process.env.ESCALATOR_TEST_TOKEN;
    }
  });

  it('scrubs a secret that helm echoes in its error', async () => {
    const chart = {
      'chart/Chart.yaml': 'name: chart\n',
      'chart/templates/x.yaml': '{{ . }}\n',
      'chart/values.yaml': 'tag: 1\npassword: CANARY-helm-pw-base\n',
    };
    const { dir, shas } = repoWith(chart, {
      'chart/values.yaml': 'tag: 2\npassword: CANARY-helm-pw-head\nfail: wrong password CANARY-helm-pw-head\n',
    });
    const report = await renderAndDiff({
      base: LocalGitSourceTree.open(dir, shas[0] as string),
      head: LocalGitSourceTree.open(dir, shas[1] as string),
      changedPaths: null,
      options: { cacheDir: join(scratch, `cache-${counter++}`), tools: { helm: FAKE_HELM } },
    });
    expect(report.targets[0]?.failure).toEqual({
      side: 'head',
      breaks: true,
      message: 'execution error at (chart/templates/deployment.yaml:1:3): wrong password [redacted]',
    });
  });

  it('scrubs the values of secretGenerator env and key files that a failing kustomize echoes', async () => {
    // A kustomize that prints the target's env and key files and fails, as a parse error would quote them.
    const echoing = fakeTool(
      'kustomize-echo',
      '[ "$1" = version ] && exit 0; for a; do d=$a; done; cat "$d/db.env" "$d/../shared/tls.key" >&2; exit 1',
    );
    const files = (password: string) => ({
      'app/kustomization.yaml':
        'secretGenerator:\n  - name: db\n    envs: [db.env]\n    files: [tls.key=../shared/tls.key]\n',
      'app/db.env': `PASSWORD=${password}\n`,
      'shared/tls.key': `KEY-${password}`,
    });
    const { dir, shas } = repoWith(files('CANARY-env-base-1'), files('CANARY-env-head-2'));
    const report = await renderAndDiff({
      base: LocalGitSourceTree.open(dir, shas[0] as string),
      head: LocalGitSourceTree.open(dir, shas[1] as string),
      changedPaths: null,
      options: { cacheDir: join(scratch, `cache-${counter++}`), tools: { kustomize: echoing } },
    });
    const message = report.targets.find((target) => target.id === 'app')?.failure?.message ?? '';
    expect(message).toContain('PASSWORD=[redacted]');
    expect(message).not.toContain('CANARY');
  });
});

describe('findTools', () => {
  it('finds helm on PATH (here: the fake helm under the name helm)', () => {
    const bin = join(scratch, `bin-${counter++}`);
    mkdirSync(bin);
    symlinkSync(FAKE_HELM, join(bin, 'helm'));
    const tools = findTools({ path: `${bin}:${process.env.PATH ?? ''}` });
    expect(tools.helm).toEqual({ command: join(bin, 'helm'), version: 'helm v3.99.0+fake' });
    expect(findTools({ path: '/nonexistent' })).toEqual({});
  });

  it('uses the helm ESCALATOR_HELM_PATH names (a file or a directory) instead of the one on PATH', () => {
    const bin = join(scratch, `bin-${counter++}`);
    mkdirSync(bin);
    symlinkSync(FAKE_HELM, join(bin, 'helm'));
    const named = join(scratch, `named-${counter++}`);
    mkdirSync(named);
    symlinkSync(FAKE_HELM, join(named, 'helm-3.17'));
    const onPath = `${bin}:${process.env.PATH ?? ''}`;
    expect(findTools({ path: onPath, helmPath: join(named, 'helm-3.17') }).helm?.command).toBe(
      join(named, 'helm-3.17'),
    );
    expect(findTools({ path: '/nonexistent', helmPath: bin }).helm?.command).toBe(join(bin, 'helm'));
    // Named but not there: helm counts as missing, never the one on PATH by surprise.
    expect(findTools({ path: onPath, helmPath: join(named, 'missing') }).helm).toBeUndefined();
  });
});

describe('cleanToolError', () => {
  it('drops klog prefixes and Go quoting, and makes checkout paths relative', () => {
    const stderr =
      'E1202 11:43:16.331108   16645 run.go:72] "command failed" err="accumulating resources: file \'/cache/checkouts/abc/apps/x.yaml\' is not in or below \'/cache/checkouts/abc/apps/k\'"\n';
    expect(cleanToolError(stderr, '/cache/checkouts/abc')).toBe(
      "command failed: accumulating resources: file 'apps/x.yaml' is not in or below 'apps/k'",
    );
    expect(cleanToolError('Error: something broke\n', '/x')).toBe('something broke');
  });
});
