import { describe, expect, it } from 'vitest';
import {
  isKustomizationPath,
  kustomizationFile,
  kustomizationPaths,
  kustomizationSiblings,
  landReference,
  readKustomization,
  renderedReferences,
} from '../../../src/planners/kustomize/index.js';
import { kustomizeViews, kustomizationRefs } from '../../../src/planners/image-edit/index.js';
import { discoverTargets } from '../../../src/planners/diff/index.js';

// The one kustomization reader (src/planners/kustomize/) that the editor's render graph and the
// diff's target graph share. Where the two once disagreed, kustomize decides: each such case says
// what `kubectl kustomize` (kustomize v5.5.0) does with the same input.

const lines = (...rows: string[]): string => `${rows.join('\n')}\n`;
const deployment = lines(
  'apiVersion: apps/v1',
  'kind: Deployment',
  'metadata:',
  '  name: app',
  'spec:',
  '  template:',
  '    spec:',
  '      containers:',
  '        - name: app',
  '          image: alpine:1.8.0',
);
const mirror = lines('images:', '- name: alpine', '  newName: my.mirror/alpine');

/** The editor's and the diff's answers to "which files does the kustomization in `dir` render or read?". */
function bothReaders(files: Record<string, string>, kustomization: string): { editor: string[]; diff: string[] } {
  const text = files[kustomization] ?? '';
  const [node] = discoverTargets({ files: Object.keys(files), read: (path) => files[path] }).filter(
    (target) => target.kind === 'kustomize',
  );
  return { editor: kustomizationRefs(kustomization, text).sort(), diff: node?.inputFiles ?? [] };
}

describe('the kustomization file names', () => {
  it('are the three kustomize takes, in its order, and a path is one by its file name alone', () => {
    expect(kustomizationPaths('apps/base')).toEqual([
      'apps/base/kustomization.yaml',
      'apps/base/kustomization.yml',
      'apps/base/Kustomization',
    ]);
    expect(kustomizationPaths('')).toEqual(['kustomization.yaml', 'kustomization.yml', 'Kustomization']);
    expect(
      ['k/kustomization.yaml', 'k/kustomization.yml', 'k/Kustomization', 'kustomization.yaml'].map(isKustomizationPath),
    ).toEqual([true, true, true, true]);
    // kustomize compares the name exactly: no other case, no other extension, `\` is part of a name.
    expect(
      ['k/Kustomization.yaml', 'k/kustomization.json', 'k/kustomization', 'k\\kustomization.yaml'].map(
        isKustomizationPath,
      ),
    ).toEqual([false, false, false, false]);
    expect(kustomizationFile(new Set(['a/Kustomization', 'a/kustomization.yml']), 'a')).toBe('a/kustomization.yml');
    expect(kustomizationFile(new Set(['a/deployment.yaml']), 'a')).toBeUndefined();
  });

  it('pair up two kustomizations of one directory, which kustomize refuses to build', () => {
    // kubectl kustomize: "Found multiple kustomization files under: <dir>".
    const siblings = kustomizationSiblings([
      'a/kustomization.yaml',
      'a/Kustomization',
      'b/kustomization.yaml',
      'a/x.yaml',
    ]);
    expect([...siblings]).toEqual([
      ['a/kustomization.yaml', ['a/Kustomization']],
      ['a/Kustomization', ['a/kustomization.yaml']],
    ]);
  });
});

describe('where a reference lands', () => {
  it('is a repository path, remote (fetched or cloned by kustomize) or outside the repository', () => {
    expect(landReference('apps/prod', '../base/')).toEqual({ kind: 'local', path: 'apps/base' });
    expect(landReference('apps/prod', './patch.yaml')).toEqual({ kind: 'local', path: 'apps/prod/patch.yaml' });
    for (const remote of [
      'https://github.com/example/repo//base?ref=v1',
      'github.com/example/repo/base',
      'git@github.com:example/repo.git//base',
      'git::https://example.com/repo.git',
      'SSH://example.com/repo',
      '../base?ref=v1',
    ])
      expect(landReference('apps/prod', remote)).toEqual({ kind: 'remote' });
    expect(landReference('apps/prod', '../../../etc')).toEqual({ kind: 'outside' });
    expect(landReference('apps/prod', '/etc/passwd')).toEqual({ kind: 'outside' });
  });
});

describe('the files a kustomization reads', () => {
  it('are every path-valued field; what renders through it is resources, bases, components and patch files', () => {
    const read = readKustomization(
      lines(
        'resources: [deployment.yaml, ../base]',
        'bases: [../old-base]',
        'components: [../component]',
        'patchesStrategicMerge:',
        '- smp.yaml',
        '- |-',
        '  kind: Deployment',
        '  metadata: {name: app}',
        'patches:',
        '- path: patch.yaml',
        '- patch: "[]"',
        'patchesJson6902:',
        '- path: json.yaml',
        'replacements:',
        '- path: replacement.yaml',
        'crds: [crd.json]',
        'configurations: [config.yaml]',
        'openapi: {path: schema.json}',
        'configMapGenerator:',
        '- name: c',
        '  files: [key=file.txt]',
        '  envs: [c.env]',
        'secretGenerator:',
        '- name: s',
        '  env: s.env',
        'helmCharts:',
        '- name: chart',
        '  valuesFile: values.yaml',
        '  additionalValuesFiles: [more.yaml]',
      ),
    );
    if (!read.ok) throw new Error(read.problem);
    expect(read.value.files.map((ref) => ref.value).sort()).toEqual(
      [
        'c.env',
        'config.yaml',
        'crd.json',
        'json.yaml',
        'key=file.txt',
        'more.yaml',
        'patch.yaml',
        'replacement.yaml',
        's.env',
        'schema.json',
        'values.yaml',
      ].sort(),
    );
    expect(renderedReferences(read.value).map((ref) => ref.value)).toEqual([
      'deployment.yaml',
      '../base',
      '../old-base',
      '../component',
      'smp.yaml',
      'patch.yaml',
    ]);
  });

  it('match field names case-insensitively, as kustomize does, in the editor and the diff alike', () => {
    // kubectl kustomize renders `Resources:` and `Images:` (encoding/json folds field names).
    const files = { 'k/kustomization.yaml': lines('Resources:', '- deployment.yaml'), 'k/deployment.yaml': deployment };
    expect(bothReaders(files, 'k/kustomization.yaml')).toEqual({
      editor: ['k/deployment.yaml'],
      diff: ['k/deployment.yaml', 'k/kustomization.yaml'],
    });
  });

  it('apply YAML 1.1 merge keys, as kustomize does, in the editor and the diff alike', () => {
    // kubectl kustomize renders `<<: {resources: [deployment.yaml]}` (go-yaml v2 applies merge keys).
    const files = {
      'k/kustomization.yaml': lines('<<: {resources: [deployment.yaml]}'),
      'k/deployment.yaml': deployment,
    };
    expect(bothReaders(files, 'k/kustomization.yaml')).toEqual({
      editor: ['k/deployment.yaml'],
      diff: ['k/deployment.yaml', 'k/kustomization.yaml'],
    });
  });

  it('give the editor no graph through a kustomization kustomize cannot read', () => {
    // kubectl kustomize: "json: cannot unmarshal number into Go struct field Kustomization.resources
    // of type string" — nothing renders. The editor used to follow deployment.yaml and apply the
    // rename; it now sees what kustomize sees (no render through it), and the diff refuses it.
    const kustomization = lines('resources:', '- deployment.yaml', '- 5', ...mirror.trimEnd().split('\n'));
    expect(kustomizationRefs('k/kustomization.yaml', kustomization)).toEqual([]);
    expect(
      kustomizeViews([
        { path: 'k/kustomization.yaml', text: kustomization },
        { path: 'k/deployment.yaml', text: deployment },
      ]).has('k/deployment.yaml'),
    ).toBe(false);
    const [node] = discoverTargets({
      files: ['k/kustomization.yaml', 'k/deployment.yaml'],
      read: (path) => (path === 'k/kustomization.yaml' ? kustomization : deployment),
    });
    expect(node?.unreadable).toEqual([
      'k/kustomization.yaml resources[1] is a number where kustomize expects a string',
    ]);
  });

  it('render through the first document only for the editor; the diff reads every document', () => {
    // kubectl kustomize renders the first document's resources and ignores a second document. The
    // diff's pre-check reads every document on purpose: it refuses what any document would fetch.
    const kustomization = lines('resources: [a.yaml]', '---', 'resources: [b.yaml]');
    const files = { 'k/kustomization.yaml': kustomization, 'k/a.yaml': deployment, 'k/b.yaml': deployment };
    expect(bothReaders(files, 'k/kustomization.yaml')).toEqual({
      editor: ['k/a.yaml'],
      diff: ['k/a.yaml', 'k/b.yaml', 'k/kustomization.yaml'],
    });
    expect(readKustomization(kustomization, { documents: 'first' })).toMatchObject({
      ok: true,
      value: { resources: [{ field: 'resources[0]', value: 'a.yaml' }] },
    });
  });

  it('leave generator, JSON 6902 and values files out of what renders through it', () => {
    // kubectl kustomize applies a patchesJson6902 file as operations, never as an object of its own.
    const kustomization = lines(
      'resources: [deployment.yaml]',
      'patchesJson6902:',
      '- target: {group: apps, version: v1, kind: Deployment, name: app}',
      '  path: json.yaml',
      'configMapGenerator:',
      '- name: c',
      '  files: [values.yaml]',
    );
    expect(kustomizationRefs('k/kustomization.yaml', kustomization)).toEqual(['k/deployment.yaml']);
  });
});
