/**
 * Helm releases (Argo CD Applications, Flux HelmReleases) are bounded as kustomize targets are:
 * with the real helm 3.17 and 4.1 (scripts/fetch-helm.sh), in the render sandbox, through
 * renderAndDiff.
 * - `lookup` returns nothing under `helm template` (there is no cluster to ask);
 * - `.Files` reads only the chart's own files: a file beside the chart, or outside the repository,
 *   never reaches the output;
 * - a values file outside the repository is not read: the release is refused where it names it;
 * - inline values over the YAML limits (an alias bomb in an Application's `helm.values`) are
 *   refused before helm parses them;
 * - helm's error about inline values names them as the Application does (`helm.values`);
 * - the folder inline values are written to is gone after the render.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalGitSourceTree, renderAndDiff } from '../../src/adapters/render/index.js';
import { renderComment } from '../../src/planners/diff/index.js';
import { HELM_VERSIONS, helmBinary } from '../support/helm-binaries.js';

const scratch = mkdtempSync(join(tmpdir(), 'escalator-helm-bounds-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const VICTIM = 'VICTIM-outside-the-repository-5d21e8';
const BESIDE = 'BESIDE-the-chart-in-the-repository-9b7c44';
writeFileSync(join(scratch, 'victim.txt'), `${VICTIM}\n`);

const application = (name: string, helm: string, revision = '1'): string =>
  `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: ${name}, labels: {revision: "${revision}"}}\nspec:\n  destination: {namespace: probe}\n  source:\n    repoURL: https://github.com/example/gitops.git\n    path: charts/probe\n    helm:\n${helm}`;

const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]']
  .concat(
    Array.from(
      { length: 8 },
      (_, i) =>
        `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`,
    ),
  )
  .join('\n');

function buildRepo(): { dir: string; base: string; head: string } {
  const dir = join(scratch, 'repo');
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
    execFileSync('git', ['-C', dir, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
      .toString('utf8')
      .trim();
  const write = (files: Record<string, string>): void => {
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), content);
    }
  };
  mkdirSync(dir);
  git('init', '-q', '-b', 'main');
  const outsideDepth = '../'.repeat(8);
  const files = (tag: string): Record<string, string> => ({
    'beside.txt': `${BESIDE}\n`,
    'charts/probe/Chart.yaml': 'apiVersion: v2\nname: probe\nversion: 0.1.0\n',
    'charts/probe/values.yaml': `tag: "${tag}"\n`,
    'charts/probe/own.txt': 'own file',
    'charts/probe/templates/cm.yaml': [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: {name: probe}',
      'data:',
      '  t4-tag: {{ .Values.tag | quote }}',
      '  t3-inline: {{ .Values.inline | default "" | quote }}',
      '  t5-lookup: {{ lookup "v1" "Secret" "kube-system" "" | toJson | quote }}',
      '  t6-own: {{ .Files.Get "own.txt" | quote }}',
      '  t1-beside: {{ .Files.Get "../../beside.txt" | quote }}',
      `  t7-victim: {{ .Files.Get "${outsideDepth}${scratch.slice(1)}/victim.txt" | quote }}`,
      '  t2-glob: {{ range $path, $_ := .Files.Glob "../**" }}{{ $path }} {{ end }}',
      '',
    ].join('\n'),
    'argocd/probe.yaml': application('probe', '      valuesObject: {inline: from-the-application}\n'),
    'argocd/outside.yaml': application(
      'outside',
      `      valueFiles: ["${outsideDepth}${scratch.slice(1)}/victim.txt"]\n`,
      tag,
    ),
    'argocd/broken.yaml': application('broken', '      values: "a: [unclosed"\n', tag),
    'argocd/bomb.yaml': application('bomb', `      values: |\n${bomb.replace(/^/gm, '        ')}\n`, tag),
  });
  write(files('1.0'));
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  const base = git('rev-parse', 'HEAD');
  write(files('1.1'));
  git('add', '-A');
  git('commit', '-q', '-m', 'head');
  return { dir, base, head: git('rev-parse', 'HEAD') };
}

const repo = buildRepo();

describe.each(HELM_VERSIONS)('helm %s releases in the sandbox', (version) => {
  it('lookup is empty, .Files stays in the chart, values outside the repository and alias bombs are not read', async () => {
    const valuesFolders = (): string[] => readdirSync(tmpdir()).filter((name) => name.startsWith('escalator-values-'));
    const before = new Set(valuesFolders());
    const report = await renderAndDiff({
      base: LocalGitSourceTree.open(repo.dir, repo.base),
      head: LocalGitSourceTree.open(repo.dir, repo.head),
      changedPaths: null,
      options: { cacheDir: join(scratch, `cache-${version}`), tools: { helm: helmBinary(version) } },
    });
    const comment = renderComment(report, { baseSha: repo.base, headSha: repo.head, repository: 'example/gitops' });
    const byId = new Map(report.targets.map((target) => [target.id, target]));

    const probe = byId.get('argocd:probe');
    expect(probe?.status).toBe('changed');
    const hunk = probe?.objects[0]?.hunks.join('\n') ?? '';
    // Every probe line is within the diff's context of the changed tag (keys sorted t1…t7).
    expect(hunk).toContain('+  t4-tag: "1.1"');
    expect(hunk).toContain('t1-beside: ""');
    expect(hunk).toContain('t2-glob: null');
    expect(hunk).toContain('t5-lookup: "{}"');
    expect(hunk).toContain('t7-victim: ""');
    expect(comment).toContain('from-the-application');
    expect(comment).toContain('own file');
    expect(comment).not.toContain(VICTIM);
    expect(comment).not.toContain(BESIDE);
    expect(JSON.stringify(report)).not.toContain(VICTIM);
    expect(JSON.stringify(report)).not.toContain(BESIDE);

    expect(byId.get('argocd:outside')).toMatchObject({ status: 'failed' });
    expect(byId.get('argocd:outside')?.failure?.message).toMatch(
      /^refused: .*argocd\/outside\.yaml line \d+ spec\.source\.helm\.valueFiles\[0\]: .* is not a path inside the repository/,
    );
    expect(byId.get('argocd:bomb')?.status).toBe('failed');
    expect(byId.get('argocd:bomb')?.failure?.message).toMatch(/^refused: argocd\/bomb\.yaml helm\.values: /);

    // helm's own error names the inline values as the Application does, not by a temporary path.
    const broken = byId.get('argocd:broken')?.failure?.message ?? '';
    expect(broken).toContain('(helm.values)');
    expect(broken).not.toContain('escalator-values-');

    expect(valuesFolders().filter((name) => !before.has(name))).toEqual([]);
  });
});
