/**
 * Issue 22, part 1: renders must not reach the network or anything outside their checkout.
 *
 * The attacker writes the kustomization (or chart) of a pull request. A canary HTTP server on
 * 127.0.0.1 must receive zero requests, and "victim" files — another installation's cached
 * repository, and a file elsewhere in tmp — must never appear in any output (rendered YAML, error
 * messages, the comment). Every probe runs twice against the real `kubectl kustomize` and real
 * helm (scripts/fetch-helm.sh): at the tool-run layer with the pre-check bypassed (the isolation
 * alone must hold), and through renderAndDiff. A control run of the same probe without isolation
 * shows the probe is a real attack with these tools.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  findExecutable,
  installationCacheDir,
  isolationUnavailableMessage,
  LocalGitSourceTree,
  renderAndDiff,
  renderWithTool,
  runTool,
  scrubbedEnv,
  warnIfRenderIsolationUnavailable,
  type RenderIsolationMode,
  type ToolRunOptions,
} from '../../src/adapters/render/index.js';
import { runDiff } from '../../src/cli/diff.js';
import { createLogger } from '../../src/observability/logger.js';
import { renderComment } from '../../src/planners/diff/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const KUBECTL = findExecutable('kustomize', process.env.PATH) ?? findExecutable('kubectl', process.env.PATH);
const KUSTOMIZE_ARGS = KUBECTL && basename(KUBECTL) === 'kustomize' ? ['build'] : ['kustomize'];
const HELM = join(ROOT, '.cache/tools/helm-3.17/helm');
const HELM4 = join(ROOT, '.cache/tools/helm-4.1/helm');

const scratch = mkdtempSync(join(tmpdir(), 'escalator-isolation-'));
const cacheRoot = join(scratch, 'cache');
const VICTIM_TENANT = 'VICTIM-other-installation-7f3a9c';
const VICTIM_TMP = 'VICTIM-elsewhere-in-tmp-c41d07';
const VICTIM = /VICTIM-/;

/** A new git repository at `repo` on branch main, with no user or system configuration; returns its `git`. */
function initRepo(repo: string): (...args: string[]) => string {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: scratch,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@t.invalid',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@t.invalid',
  };
  const git = (...args: string[]): string =>
    execFileSync('git', ['-C', repo, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
      .toString('utf8')
      .trim();
  git('init', '-q', '-b', 'main');
  return git;
}

/** Every request the canary saw; each test starts from zero and must end there. */
const hits: string[] = [];
let canary: Server;
let port = 0;
const url = (path: string, scheme = 'http'): string => `${scheme}://127.0.0.1:${port}/${path}`;

let tenantA: string;
let tenantB: string;
/** Another installation's cached repository: a kustomization, a values file and a chart home. */
let victimTenantDir: string;
/** A kustomization, a values file and a plain file elsewhere in tmp. */
let victimTmpDir: string;

/** The same ConfigMap as kustomize prints it (keys sorted). */
const rendered = (name: string, value: string): string =>
  `apiVersion: v1\ndata:\n  value: ${value}\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`;
const configMap = (name: string, value: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  value: ${value}\n`;
const chart = (name: string, template: string): Record<string, string> => ({
  'Chart.yaml': `apiVersion: v2\nname: ${name}\nversion: 0.1.0\n`,
  'values.yaml': 'tag: "1"\n',
  'templates/cm.yaml': template,
});

function writeTree(dir: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

/** Where a checkout of installation A lives; its depth is the same for every SHA. */
const checkoutOf = (sha: string): string => join(tenantA, 'render', 'checkouts', sha);
const PROBE_SHA = 'a'.repeat(40);

/**
 * The probes: one kustomization each, written in a directory of its own. `leaks` says what the
 * same probe does without any isolation (the control run): 'fetch' reaches the canary, 'read'
 * prints a victim's contents.
 */
function probes(): Array<{ dir: string; files: Record<string, string>; leaks: 'fetch' | 'read' | 'none' }> {
  const fromProbe = (target: string): string => relative(join(checkoutOf(PROBE_SHA), 'probe'), target);
  return [
    {
      dir: 'generator-files',
      leaks: 'fetch',
      files: {
        'kustomization.yaml': `configMapGenerator:\n  - name: leak\n    files: [creds=${url('generator-files')}]\n`,
      },
    },
    {
      dir: 'generator-upper',
      leaks: 'fetch',
      files: {
        'kustomization.yaml': `configMapGenerator:\n  - name: leak\n    files: [creds=${url('generator-upper', 'HTTP')}]\n`,
      },
    },
    {
      dir: 'generator-envs',
      leaks: 'fetch',
      files: { 'kustomization.yaml': `configMapGenerator:\n  - name: leak\n    envs: [${url('generator-envs')}]\n` },
    },
    {
      dir: 'remote-resource',
      leaks: 'fetch',
      files: { 'kustomization.yaml': `resources:\n  - ${url('remote-resource')}\n` },
    },
    {
      dir: 'remote-upper',
      leaks: 'fetch',
      files: { 'kustomization.yaml': `resources:\n  - ${url('remote-upper', 'HTTP')}\n` },
    },
    {
      dir: 'merge-key',
      leaks: 'fetch',
      files: { 'kustomization.yaml': `<<: {resources: ["${url('merge-key')}"]}\n`, 'cm.yaml': configMap('merge', 'x') },
    },
    // kustomize reads the first document; a reader of the last one sees only cm.yaml.
    {
      dir: 'multi-doc',
      leaks: 'fetch',
      files: {
        'kustomization.yaml': `resources:\n  - ${url('multi-doc')}\n---\nresources: [cm.yaml]\n`,
        'cm.yaml': configMap('multi', 'x'),
      },
    },
    {
      dir: 'patch-remote',
      leaks: 'fetch',
      files: {
        'kustomization.yaml': `resources: [cm.yaml]\npatches:\n  - path: ${url('patch-remote')}\n`,
        'cm.yaml': configMap('patched', 'x'),
      },
    },
    {
      dir: 'helm-values-url',
      leaks: 'fetch',
      files: {
        'kustomization.yaml': `helmCharts:\n  - name: local\n    releaseName: r\n    valuesFile: ${url('helm-values-url')}\n`,
        ...prefixed(
          'charts/local/',
          chart(
            'local',
            'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: local}\ndata: {tag: "{{ .Values.tag }}"}\n',
          ),
        ),
      },
    },
    {
      dir: 'other-tenant-relative',
      leaks: 'read',
      files: { 'kustomization.yaml': `resources:\n  - ${fromProbe(join(victimTenantDir, 'app'))}\n` },
    },
    {
      dir: 'tmp-relative',
      leaks: 'read',
      files: { 'kustomization.yaml': `resources:\n  - ${fromProbe(join(victimTmpDir, 'app'))}\n` },
    },
    // kustomize itself refuses absolute roots and files outside the root; the probes stay to prove it.
    {
      dir: 'other-tenant-absolute',
      leaks: 'none',
      files: { 'kustomization.yaml': `resources:\n  - ${join(victimTenantDir, 'app')}\n` },
    },
    {
      dir: 'tmp-absolute-files',
      leaks: 'none',
      files: {
        'kustomization.yaml': `configMapGenerator:\n  - name: leak\n    files: [${join(victimTmpDir, 'secret.txt')}]\n`,
      },
    },
    {
      dir: 'chart-home',
      leaks: 'read',
      files: {
        'kustomization.yaml': `helmGlobals:\n  chartHome: ${join(victimTenantDir, 'charts')}\nhelmCharts:\n  - name: stolen\n    releaseName: r\n    valuesFile: values.yaml\n`,
        'values.yaml': 'x: 1\n',
      },
    },
  ];
}

/** The probes' names and what they do bare, known before the directories exist (for it.each). */
const PROBES: Array<readonly [string, 'fetch' | 'read' | 'none']> = [
  ['generator-files', 'fetch'],
  ['generator-upper', 'fetch'],
  ['generator-envs', 'fetch'],
  ['remote-resource', 'fetch'],
  ['remote-upper', 'fetch'],
  ['merge-key', 'fetch'],
  ['multi-doc', 'fetch'],
  ['patch-remote', 'fetch'],
  ['helm-values-url', 'fetch'],
  ['other-tenant-relative', 'read'],
  ['tmp-relative', 'read'],
  ['other-tenant-absolute', 'none'],
  ['tmp-absolute-files', 'none'],
  ['chart-home', 'read'],
];

function prefixed(prefix: string, files: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(files).map(([path, content]) => [`${prefix}${path}`, content]));
}

function runOptions(mode: RenderIsolationMode, extra: Partial<ToolRunOptions> = {}): ToolRunOptions {
  return {
    timeoutMs: 30_000,
    maxOutputBytes: 16 * 1024 * 1024,
    maxMemoryBytes: 1024 * 1024 * 1024,
    home: join(tenantA, 'render', 'home'),
    path: process.env.PATH,
    isolation: { mode, binaries: [KUBECTL as string, HELM] },
    ...extra,
  };
}

const kustomizeArgs = (dir: string): string[] => [
  ...KUSTOMIZE_ARGS,
  '--load-restrictor',
  'LoadRestrictionsRootOnly',
  '--enable-helm',
  '--helm-command',
  HELM,
  `./${dir}`,
];

beforeAll(async () => {
  if (!KUBECTL) throw new Error('neither kustomize nor kubectl is on PATH; the isolation tests need a real kustomize');
  if (!existsSync(HELM) || !existsSync(HELM4))
    execFileSync(join(ROOT, 'scripts/fetch-helm.sh'), ['3.17', '4.1'], { stdio: 'ignore', timeout: 600_000 });
  canary = createServer((request, response) => {
    hits.push(`${request.method ?? '?'} ${request.url ?? '?'}`);
    response.end(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fetched}\ndata: {canary: CANARY-FETCHED}\n`);
  });
  await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
  port = (canary.address() as AddressInfo).port;

  tenantA = installationCacheDir(cacheRoot, 1001);
  tenantB = installationCacheDir(cacheRoot, 2002);
  victimTenantDir = join(tenantB, 'tarballs', 'acme', 'gitops', 'b'.repeat(40));
  writeTree(victimTenantDir, {
    'app/kustomization.yaml': 'resources: [cm.yaml]\n',
    'app/cm.yaml': configMap('stolen', VICTIM_TENANT),
    'values.yaml': `tag: ${VICTIM_TENANT}\n`,
    'charts/stolen/Chart.yaml': 'apiVersion: v2\nname: stolen\nversion: 0.1.0\n',
    'charts/stolen/templates/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stolen}\ndata: {v: ${VICTIM_TENANT}}\n`,
  });
  victimTmpDir = join(scratch, 'elsewhere');
  writeTree(victimTmpDir, {
    'app/kustomization.yaml': 'resources: [cm.yaml]\n',
    'app/cm.yaml': configMap('stolen', VICTIM_TMP),
    'secret.txt': `${VICTIM_TMP}\n`,
    'values.yaml': `tag: ${VICTIM_TMP}\n`,
  });

  // Installation A's checkout, written by hand: no pre-check, no symlink removal.
  const checkout = checkoutOf(PROBE_SHA);
  for (const probe of probes()) writeTree(join(checkout, probe.dir), probe.files);
  writeTree(join(checkout, 'good'), {
    'kustomization.yaml': 'resources: [cm.yaml]\n',
    'cm.yaml': configMap('good', 'fine'),
  });
  writeTree(join(checkout, 'symlinked'), { 'kustomization.yaml': 'resources: [linked]\n' });
  symlinkSync(join(victimTmpDir, 'app'), join(checkout, 'symlinked', 'linked'));
  writeTree(
    join(checkout, 'chart'),
    chart('chart', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: chart}\ndata: {tag: "{{ .Values.tag }}"}\n'),
  );
  symlinkSync(join(victimTmpDir, 'app', 'cm.yaml'), join(checkout, 'chart', 'templates', 'leak.yaml'));
  writeTree(
    join(checkout, 'plain-chart'),
    chart('plain', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\ndata: {tag: "{{ .Values.tag }}"}\n'),
  );
}, 600_000);

afterAll(async () => {
  await new Promise((resolve) => canary?.close(resolve));
  rmSync(scratch, { recursive: true, force: true });
});

beforeEach(() => {
  hits.length = 0;
});

function expectNoLeak(text: string): void {
  expect(text).not.toMatch(VICTIM);
  expect(text).not.toContain('CANARY-FETCHED');
  expect(hits).toEqual([]);
}

describe('the control: without isolation these probes are real attacks on this kustomize and helm', () => {
  it.each(PROBES)('%s leaks (%s) when run bare', async (dir, leaks) => {
    const home = join(scratch, 'bare-home');
    const result = await runTool(KUBECTL as string, kustomizeArgs(dir), {
      cwd: checkoutOf(PROBE_SHA),
      timeoutMs: 30_000,
      maxOutputBytes: 1 << 24,
      maxMemoryBytes: 1 << 30,
      env: scrubbedEnv(process.env.PATH, home),
    });
    if (leaks === 'fetch') expect(hits.length).toBeGreaterThan(0);
    else if (leaks === 'read') expect(`${result.stdout}${result.stderr}`).toMatch(VICTIM);
    else expect([result.code, hits.length, VICTIM.test(`${result.stdout}${result.stderr}`)]).toEqual([1, 0, false]);
    hits.length = 0;
  });
});

describe('namespace isolation at the tool-run layer (pre-check bypassed)', () => {
  it('renders a good kustomization, and a chart, as before', async () => {
    const good = await renderWithTool(
      'kustomize',
      KUBECTL as string,
      kustomizeArgs('good'),
      checkoutOf(PROBE_SHA),
      runOptions('namespace'),
    );
    expect(good.outcome).toEqual({ status: 'ok', yaml: rendered('good', 'fine') });
    for (const helm of [HELM, HELM4]) {
      const rendered = await renderWithTool(
        'helm template',
        helm,
        ['template', 'plain', './plain-chart'],
        checkoutOf(PROBE_SHA),
        runOptions('namespace', { isolation: { mode: 'namespace', binaries: [helm] } }),
      );
      expect(rendered.outcome).toEqual({
        status: 'ok',
        yaml: '---\n# Source: plain/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\ndata: {tag: "1"}\n',
      });
    }
  });

  it.each(PROBES)('%s: fetches nothing and reads no victim', async (dir) => {
    const result = await renderWithTool(
      'kustomize',
      KUBECTL as string,
      kustomizeArgs(dir),
      checkoutOf(PROBE_SHA),
      runOptions('namespace'),
    );
    expect(result.outcome.status).toBe('failed');
    expectNoLeak(JSON.stringify(result.outcome));
  });

  it('a symlinked folder pointing outside the checkout leads nowhere', async () => {
    const bare = await runTool(KUBECTL as string, kustomizeArgs('symlinked'), {
      cwd: checkoutOf(PROBE_SHA),
      timeoutMs: 30_000,
      maxOutputBytes: 1 << 24,
      maxMemoryBytes: 1 << 30,
      env: scrubbedEnv(process.env.PATH, join(scratch, 'bare-home')),
    });
    expect(bare.stdout).toContain(VICTIM_TMP); // the control
    const result = await renderWithTool(
      'kustomize',
      KUBECTL as string,
      kustomizeArgs('symlinked'),
      checkoutOf(PROBE_SHA),
      runOptions('namespace'),
    );
    expect(result.outcome.status).toBe('failed');
    expectNoLeak(JSON.stringify(result.outcome));
  });

  it.each([
    ['helm 3.17', HELM],
    ['helm 4.1', HELM4],
  ])('%s: a values URL, an absolute values path and a chart file linked outside read nothing', async (_name, helm) => {
    const cases: Array<{ args: string[]; leaks: 'fetch' | 'read' }> = [
      { args: ['template', 'r', './plain-chart', '-f', url('helm-values')], leaks: 'fetch' },
      { args: ['template', 'r', './plain-chart', '-f', join(victimTenantDir, 'values.yaml')], leaks: 'read' },
      { args: ['template', 'r', './plain-chart', '-f', join(victimTmpDir, 'values.yaml')], leaks: 'read' },
      { args: ['template', 'r', './chart'], leaks: 'read' },
    ];
    for (const { args, leaks } of cases) {
      const bare = await runTool(helm, args, {
        cwd: checkoutOf(PROBE_SHA),
        timeoutMs: 30_000,
        maxOutputBytes: 1 << 24,
        maxMemoryBytes: 1 << 30,
        env: scrubbedEnv(process.env.PATH, join(scratch, 'bare-home')),
      });
      if (leaks === 'fetch') expect(hits.length, args.join(' ')).toBeGreaterThan(0);
      else expect(`${bare.stdout}${bare.stderr}`, args.join(' ')).toMatch(VICTIM);
      hits.length = 0;
      const result = await renderWithTool(
        'helm template',
        helm,
        args,
        checkoutOf(PROBE_SHA),
        runOptions('namespace', { isolation: { mode: 'namespace', binaries: [helm] } }),
      );
      expect(result.outcome.status, args.join(' ')).toBe('failed');
      expectNoLeak(JSON.stringify(result.outcome));
    }
  });

  it('the tool holds no capability: it cannot mount, write its checkout, see another installation or signal the worker', async () => {
    const spy = join(scratch, 'spy.sh');
    // Harmless if it ever runs unsandboxed: it mounts only on a folder of its own and unmounts at once.
    const mountTarget = join(scratch, 'mount-probe');
    mkdirSync(mountTarget, { recursive: true });
    writeFileSync(
      spy,
      [
        '#!/bin/sh',
        'exec 1>&2',
        `mount -t tmpfs none ${mountTarget} 2>/dev/null && { echo MOUNTED; umount ${mountTarget}; }`,
        `cat ${join(victimTmpDir, 'secret.txt')} ${join(victimTenantDir, 'values.yaml')} 2>/dev/null`,
        `ls ${dirname(tenantA)} 2>/dev/null`,
        `touch ${join(checkoutOf(PROBE_SHA), 'written')} 2>/dev/null && echo WROTE`,
        `kill -0 ${process.pid} 2>/dev/null && echo SIGNALLED`,
        'echo END; exit 1',
      ].join('\n'),
    );
    chmodSync(spy, 0o755);
    const result = await renderWithTool(
      'kustomize',
      spy,
      [],
      checkoutOf(PROBE_SHA),
      runOptions('namespace', { isolation: { mode: 'namespace' } }),
    );
    // Only the path down to its own checkout exists: installation A's folder, never B's.
    expect(result.outcome).toEqual({ status: 'failed', message: `${basename(tenantA)}\nEND` });
    expect(existsSync(join(checkoutOf(PROBE_SHA), 'written'))).toBe(false);
  });
});

describe('the sandbox root', () => {
  it('holds only the checkout, the tool and what it links against: no /etc, no /proc, no /work, no other installation', async () => {
    // ls(1) is a dynamic binary: its libraries are bound too, or it could not start.
    const ls = findExecutable('ls', '/usr/bin:/bin') as string;
    const result = await renderWithTool(
      'ls',
      ls,
      ['-1', '/', dirname(ls), dirname(tenantA)],
      checkoutOf(PROBE_SHA),
      runOptions('namespace', { isolation: { mode: 'namespace' } }),
    );
    expect(result.outcome.status).toBe('ok');
    const listing = result.outcome.status === 'ok' ? result.outcome.yaml : '';
    // ls prints one `<dir>:` section per operand.
    const sections = new Map(
      listing
        .trim()
        .split('\n\n')
        .map((section) => {
          const [header, ...names] = section.split('\n');
          return [(header ?? '').replace(/:$/, ''), names] as const;
        }),
    );
    const top = sections.get('/') ?? [];
    for (const absent of ['etc', 'proc', 'sys', 'work', 'root', 'home', 'var', 'run'])
      expect(top).not.toContain(absent);
    expect(top).toEqual(expect.arrayContaining(['dev', 'tmp']));
    expect(sections.get(dirname(ls))).toEqual(['ls', 'setpriv']);
    expect(sections.get(dirname(tenantA))).toEqual([basename(tenantA)]);
  });
});

describe('a sandbox that cannot be built', () => {
  it('refuses the render with what went wrong instead of running the tool bare', async () => {
    const missing = join(tenantA, 'render', 'checkouts', 'c'.repeat(40));
    const result = await renderWithTool(
      'kustomize',
      KUBECTL as string,
      kustomizeArgs('good'),
      missing,
      runOptions('namespace'),
    );
    expect(result).toEqual({
      outcome: {
        status: 'failed',
        message: `not rendered: the render sandbox could not be set up (cannot bind ${missing} into the sandbox (ro,nosuid,nodev,noexec)); see docs/operations.md`,
      },
      toolMs: expect.any(Number),
      cacheable: false,
    });
  });
});

describe('namespace isolation through renderAndDiff', () => {
  it('every probe of one pull request fails at head, nothing is fetched, no victim is shown, the good target renders', async () => {
    const repo = join(scratch, 'repo');
    mkdirSync(repo);
    const git = initRepo(repo);
    writeTree(repo, {
      'good/kustomization.yaml': 'resources: [cm.yaml]\n',
      'good/cm.yaml': configMap('good', 'before'),
    });
    git('add', '-A');
    git('commit', '-q', '-m', 'base');
    const baseSha = git('rev-parse', 'HEAD');
    for (const probe of probes()) writeTree(join(repo, probe.dir), probe.files);
    writeTree(repo, { 'good/cm.yaml': configMap('good', 'after') });
    writeTree(repo, { 'symlinked/kustomization.yaml': 'resources: [linked]\n' });
    symlinkSync(join(victimTmpDir, 'app'), join(repo, 'symlinked', 'linked'));
    git('add', '-A');
    git('commit', '-q', '-m', 'head');
    const headSha = git('rev-parse', 'HEAD');
    const report = await renderAndDiff({
      base: LocalGitSourceTree.open(repo, baseSha),
      head: LocalGitSourceTree.open(repo, headSha),
      changedPaths: null,
      options: {
        cacheDir: join(tenantA, 'render'),
        tools: {
          kustomize: basename(KUBECTL as string) === 'kustomize' ? KUBECTL : null,
          kubectl: KUBECTL,
          helm: HELM,
        },
        timeoutMs: 30_000,
      },
    });
    const comment = renderComment(report, { baseSha, headSha, repository: 'acme/gitops' });
    expectNoLeak(`${comment}\n${JSON.stringify(report)}`);
    const outcomes = Object.fromEntries(
      report.targets.map((target) => [
        target.id,
        target.failure ? `failed at ${target.failure.side}` : `rendered ${target.objects.length}`,
      ]),
    );
    expect(outcomes.good).toBe('rendered 1');
    for (const probe of [...probes().map((p) => p.dir), 'symlinked'])
      expect(outcomes[probe], probe).toMatch(/^failed at head/);
  });
});

describe('when isolation is not available', () => {
  it('refuses every kustomize and helm render with one sentence, renders plain manifests, and fetches nothing', async () => {
    const repo = join(scratch, 'repo-unavailable');
    mkdirSync(repo);
    const git = initRepo(repo);
    git('commit', '-q', '--allow-empty', '-m', 'base');
    const baseSha = git('rev-parse', 'HEAD');
    writeTree(repo, {
      'app/kustomization.yaml': 'resources: [cm.yaml]\n',
      'app/cm.yaml': configMap('app', 'x'),
      ...prefixed(
        'chart/',
        chart('chart', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: chart}\ndata: {tag: "{{ .Values.tag }}"}\n'),
      ),
      'plain/cm.yaml': configMap('plain', 'x'),
    });
    git('add', '-A');
    git('commit', '-q', '-m', 'head');
    const headSha = git('rev-parse', 'HEAD');
    const report = await renderAndDiff({
      base: LocalGitSourceTree.open(repo, baseSha),
      head: LocalGitSourceTree.open(repo, headSha),
      changedPaths: null,
      options: {
        cacheDir: join(tenantA, 'render-unavailable'),
        tools: { kustomize: null, kubectl: KUBECTL, helm: HELM },
        unshare: join(scratch, 'no-such-unshare'),
      },
    });
    const sentence = isolationUnavailableMessage(
      'namespace',
      `unshare (util-linux) is not installed at ${join(scratch, 'no-such-unshare')}`,
    );
    expect(sentence).toMatch(/^not rendered: .*; see docs\/operations\.md$/);
    expect(report.targets.map((target) => [target.id, target.failure?.message ?? 'rendered'])).toEqual([
      ['app', sentence],
      ['chart', sentence],
      ['plain', 'rendered'],
    ]);
    expect(renderComment(report, { baseSha, headSha, repository: 'acme/gitops' })).toContain(
      sentence.replace(/\.md/, ''),
    );
    expect(hits).toEqual([]);
  });

  it('says so loudly at worker start', async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString('utf8')), done()),
    });
    const status = await warnIfRenderIsolationUnavailable(createLogger({ level: 'info', destination }), 'namespace', {
      unshare: join(scratch, 'no-unshare-here'),
    });
    expect(status).toEqual({
      available: false,
      reason: `unshare (util-linux) is not installed at ${join(scratch, 'no-unshare-here')}`,
    });
    const record = JSON.parse(lines[0] as string) as { level: number; msg: string; mode: string; reason: string };
    expect(record).toMatchObject({ level: 40, mode: 'namespace', reason: status.available ? '' : status.reason });
    expect(record.msg).toContain('every kustomize and helm render will be refused');
  });
});

describe('proxy isolation (the fallback where user namespaces are not allowed)', () => {
  it('sends every fetch of a host to the closed proxy', async () => {
    writeTree(checkoutOf(PROBE_SHA), {
      'proxied/kustomization.yaml':
        'configMapGenerator:\n  - name: leak\n    files: [creds=HTTP://metadata.internal.example/latest]\n',
    });
    const result = await renderWithTool(
      'kustomize',
      KUBECTL as string,
      kustomizeArgs('proxied'),
      checkoutOf(PROBE_SHA),
      runOptions('proxy'),
    );
    expect(result.outcome).toMatchObject({ status: 'failed' });
    expect(JSON.stringify(result.outcome)).toContain('proxyconnect tcp: dial tcp 127.0.0.1:0');
  });

  it('runs on a private copy: relative paths into the cache find nothing, and the checkout is left as it was', async () => {
    const result = await renderWithTool(
      'kustomize',
      KUBECTL as string,
      kustomizeArgs('other-tenant-relative'),
      checkoutOf(PROBE_SHA),
      runOptions('proxy'),
    );
    expect(result.outcome.status).toBe('failed');
    expectNoLeak(JSON.stringify(result.outcome));
    const good = await renderWithTool(
      'kustomize',
      KUBECTL as string,
      kustomizeArgs('good'),
      checkoutOf(PROBE_SHA),
      runOptions('proxy'),
    );
    expect(good.outcome).toEqual({ status: 'ok', yaml: rendered('good', 'fine') });
  });

  it('documents its gap honestly: Go never proxies loopback, so a 127.0.0.1 URL is still fetched', async () => {
    const result = await renderWithTool(
      'kustomize',
      KUBECTL as string,
      kustomizeArgs('generator-files'),
      checkoutOf(PROBE_SHA),
      runOptions('proxy'),
    );
    expect(hits).toEqual(['GET /generator-files']); // docs/operations.md says so; the namespace mode is the fix
    expect(result.outcome.status).toBe('ok');
    hits.length = 0;
  });
});

describe('caches per installation', () => {
  it('names each installation by an HMAC under a per-deployment key: 0700 folders, a 0600 key, not the same in another deployment', () => {
    expect(basename(tenantA)).toMatch(/^[0-9a-f]{32}$/);
    expect(tenantA).not.toBe(tenantB);
    expect(installationCacheDir(cacheRoot, 1001)).toBe(tenantA);
    expect(statSync(join(cacheRoot, 'installation-key')).mode & 0o777).toBe(0o600);
    for (const dir of [tenantA, dirname(tenantA)]) expect(statSync(dir).mode & 0o777).toBe(0o700);
    const otherDeployment = join(scratch, 'other-deployment');
    expect(basename(installationCacheDir(otherDeployment, 1001))).not.toBe(basename(tenantA));
    expect(readFileSync(join(cacheRoot, 'installation-key'), 'utf8')).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('escalator diff', () => {
  it('renders isolated by default, takes --render-isolation proxy, and refuses any other mode', async () => {
    const repo = join(scratch, 'repo-cli');
    mkdirSync(repo);
    const git = initRepo(repo);
    git('commit', '-q', '--allow-empty', '-m', 'base');
    writeTree(repo, {
      'leak/kustomization.yaml': `configMapGenerator:\n  - name: leak\n    files: [creds=${url('cli')}]\n`,
      'good/kustomization.yaml': 'resources: [cm.yaml]\n',
      'good/cm.yaml': configMap('good', 'after'),
    });
    git('add', '-A');
    git('commit', '-q', '-m', 'head');
    // The pre-check refuses the leak before any tool runs (the tool-run layer above proves the
    // sandbox alone); here the CLI's own modes must render the good target and fetch nothing.
    for (const mode of [[], ['--render-isolation', 'proxy']]) {
      const io = {
        out: '',
        stdout(text: string) {
          io.out += text;
        },
        stderr: () => undefined,
        cwd: repo,
      };
      expect(
        await runDiff(
          [
            '--base',
            'HEAD~1',
            '--head',
            'HEAD',
            '--format',
            'json',
            '--cache-dir',
            join(scratch, `cli-cache-${mode.length}`),
            ...mode,
          ],
          io,
        ),
      ).toBe(0);
      const report = JSON.parse(io.out) as { targets: Array<{ id: string; status: string }> };
      expect(report.targets.map((target) => [target.id, target.status])).toEqual([
        ['good', 'changed'],
        ['leak', 'failed'],
      ]);
      expect(hits).toEqual([]);
    }
    const io = {
      out: '',
      stdout(text: string) {
        io.out += text;
      },
      stderr: () => undefined,
      cwd: repo,
    };
    await expect(runDiff(['--base', 'HEAD~1', '--head', 'HEAD', '--render-isolation', 'none'], io)).rejects.toThrow(
      '--render-isolation must be namespace or proxy, not "none"',
    );
  });
});

describe('the probe table', () => {
  it('names every probe the directories hold, with what it does bare', () => {
    expect(probes().map((probe) => [probe.dir, probe.leaks])).toEqual(PROBES.map(([dir, leaks]) => [dir, leaks]));
  });
});
