import { describe, expect, it } from 'vitest';
import { NEW_DIGEST, OLD_DIGEST, TAG_ONLY, expectEdit, expectRefusal, expectUntouched, lines } from './helpers.js';

const APP = { path: 'argocd/apps/hello.yaml' };

function application(...source: string[]): string {
  return lines(
    'apiVersion: argoproj.io/v1alpha1',
    'kind: Application',
    'metadata:',
    '  name: hello',
    'spec:',
    '  source:',
    '    repoURL: https://github.com/example/gitops',
    ...source.map((line) => `    ${line}`),
  );
}

describe('argo cd applications', () => {
  it('edits spec.source.kustomize.images strings and reports the kind', () => {
    const result = expectEdit(
      application('kustomize:', '  images:', '    - ghcr.io/example/hello:1.2.3', '    - nginx:1.25'),
      application('kustomize:', '  images:', '    - ghcr.io/example/hello:1.4.0', '    - nginx:1.25'),
      APP,
    );
    expect(result.kind).toBe('argocd-application');
    expect(result.changed).toEqual([
      {
        path: 'spec.source.kustomize.images[0]',
        line: 10,
        from: 'ghcr.io/example/hello:1.2.3',
        to: 'ghcr.io/example/hello:1.4.0',
      },
    ]);
  });

  it('keeps the alias of `alias=repo:tag` and matches the image after `=`', () => {
    expectEdit(
      application(
        'kustomize:',
        '  images: ["hello=ghcr.io/example/hello:1.2.3", "ghcr.io/example/hello=ghcr.io/example/other:1.2.3"]',
      ),
      application(
        'kustomize:',
        '  images: ["hello=ghcr.io/example/hello:1.4.0", "ghcr.io/example/hello=ghcr.io/example/other:1.2.3"]',
      ),
      APP,
    );
  });

  it('replaces the digest of `repo:tag@digest` and appends one with pinDigest', () => {
    expectEdit(
      application('kustomize:', '  images:', `    - ghcr.io/example/hello:1.2.3@${OLD_DIGEST}`),
      application('kustomize:', '  images:', `    - ghcr.io/example/hello:1.4.0@${NEW_DIGEST}`),
      APP,
    );
    expectEdit(
      application('kustomize:', '  images:', '    - ghcr.io/example/hello:1.2.3'),
      application('kustomize:', '  images:', `    - ghcr.io/example/hello:1.4.0@${NEW_DIGEST}`),
      { ...APP, pinDigest: true },
    );
  });

  it('edits image.tag next to a matching image.repository parameter, quoting as needed', () => {
    const result = expectEdit(
      application(
        'helm:',
        '  parameters:',
        '    - name: image.repository',
        '      value: ghcr.io/example/hello',
        '    - name: image.tag',
        '      value: "1.2.3"',
        '    - name: other.repository',
        '      value: ghcr.io/example/other',
        '    - name: other.tag',
        '      value: 1.2.3',
      ),
      application(
        'helm:',
        '  parameters:',
        '    - name: image.repository',
        '      value: ghcr.io/example/hello',
        '    - name: image.tag',
        '      value: "20240115"',
        '    - name: other.repository',
        '      value: ghcr.io/example/other',
        '    - name: other.tag',
        '      value: 1.2.3',
      ),
      { ...APP, event: { repository: 'ghcr.io/example/hello', tag: '20240115' } },
    );
    expect(result.changed.map((c) => c.path)).toEqual(['spec.source.helm.parameters[1].value']);
    expectEdit(
      application(
        'helm:',
        '  parameters:',
        '    - {name: sidecar.tag, value: v1}',
        '    - {name: sidecar.repository, value: ghcr.io/example/hello}',
      ),
      application(
        'helm:',
        '  parameters:',
        '    - {name: sidecar.tag, value: "1.10"}',
        '    - {name: sidecar.repository, value: ghcr.io/example/hello}',
      ),
      { ...APP, event: { repository: 'ghcr.io/example/hello', tag: '1.10' } },
    );
  });

  it('writes an empty image.tag parameter: the chart default it renders is not the pushed version (issue 32, cause 1)', () => {
    expectEdit(
      application(
        'helm:',
        '  parameters:',
        '    - {name: image.repository, value: ghcr.io/example/hello}',
        '    - {name: image.tag, value: ""}',
      ),
      application(
        'helm:',
        '  parameters:',
        '    - {name: image.repository, value: ghcr.io/example/hello}',
        '    - {name: image.tag, value: "1.4.0"}',
      ),
      APP,
    );
  });

  it('reads helm.valuesObject as Helm values', () => {
    expectEdit(
      application(
        'helm:',
        '  valuesObject:',
        '    image:',
        '      repository: ghcr.io/example/hello',
        '      tag: 1.2.3',
      ),
      application(
        'helm:',
        '  valuesObject:',
        '    image:',
        '      repository: ghcr.io/example/hello',
        '      tag: 1.4.0',
      ),
      APP,
    );
  });

  it('reads spec.sources[] and ApplicationSet templates', () => {
    const multi = lines(
      'apiVersion: argoproj.io/v1alpha1',
      'kind: ApplicationSet',
      'spec:',
      '  template:',
      '    spec:',
      '      sources:',
      '        - repoURL: https://example.com/charts',
      '          helm:',
      '            parameters:',
      '              - {name: image.repository, value: ghcr.io/example/hello}',
      '              - {name: image.tag, value: 1.2.3}',
      '        - repoURL: https://github.com/example/gitops',
      '          kustomize:',
      '            images: [ghcr.io/example/hello:1.2.3]',
    );
    const result = expectEdit(
      multi,
      multi.replaceAll('value: 1.2.3', 'value: 1.4.0').replace('hello:1.2.3]', 'hello:1.4.0]'),
      APP,
    );
    expect(result.kind).toBe('argocd-application');
    expect(result.changed.map((c) => c.path)).toEqual([
      'spec.template.spec.sources[0].helm.parameters[1].value',
      'spec.template.spec.sources[1].kustomize.images[0]',
    ]);
  });

  it('ignores parameters of another repository and is unchanged when current', () => {
    expectUntouched(
      application(
        'helm:',
        '  parameters:',
        '    - {name: image.repository, value: ghcr.io/example/other}',
        '    - {name: image.tag, value: 1.2.3}',
      ),
      { mentions: false, unchanged: false },
      APP,
    );
    expectUntouched(
      application('kustomize:', '  images: [ghcr.io/example/hello:1.4.0]'),
      { mentions: true, unchanged: true },
      APP,
    );
  });
});

describe('.argocd-source files', () => {
  it('edits kustomize.images written by Argo CD Image Updater', () => {
    const result = expectEdit(
      lines('kustomize:', '  images:', '  - ghcr.io/example/hello:1.2.3'),
      lines('kustomize:', '  images:', '  - ghcr.io/example/hello:1.4.0'),
      { path: 'apps/hello/.argocd-source-hello.yaml' },
    );
    expect(result.kind).toBe('argocd-source');
  });

  it('edits helm.parameters and keeps forcestring', () => {
    expectEdit(
      lines(
        'helm:',
        '  parameters:',
        '  - name: image.name',
        '    value: ghcr.io/example/hello',
        '    forcestring: true',
        '  - name: image.repository',
        '    value: ghcr.io/example/hello',
        '    forcestring: true',
        '  - name: image.tag',
        '    value: 1.2.3',
        '    forcestring: true',
      ),
      lines(
        'helm:',
        '  parameters:',
        '  - name: image.name',
        '    value: ghcr.io/example/hello',
        '    forcestring: true',
        '  - name: image.repository',
        '    value: ghcr.io/example/hello',
        '    forcestring: true',
        '  - name: image.tag',
        '    value: 1.4.0',
        '    forcestring: true',
      ),
      { path: '.argocd-source.yaml' },
    );
  });

  it('refuses a pinned digest parameter when the event has none', () => {
    expectRefusal(
      lines(
        'helm:',
        '  parameters:',
        '  - {name: image.repository, value: ghcr.io/example/hello}',
        '  - {name: image.tag, value: 1.2.3}',
        `  - {name: image.digest, value: "${OLD_DIGEST}"}`,
      ),
      /pins a digest but the event carries none/,
      { path: '.argocd-source-hello.yml', event: TAG_ONLY },
    );
  });
});
