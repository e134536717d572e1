import { describe, expect, it } from 'vitest';
import { listImages } from '../../../src/planners/image-edit/index.js';
import { NEW_DIGEST, OLD_DIGEST, lines } from './helpers.js';

describe('listImages', () => {
  it('lists kustomize entries with the spelling, normalized name, tag and digest', () => {
    const text = lines(
      'images:',
      '- name: nginx',
      '  newTag: "1.25"',
      '- name: hello',
      '  newName: ghcr.io/example/hello',
      `  newTag: 1.2.3@${OLD_DIGEST}`,
      '- name: ghcr.io/example/worker',
      `  digest: ${NEW_DIGEST}`,
    );
    expect(listImages(text, { path: 'kustomization.yaml' })).toEqual({
      uses: [
        {
          name: 'docker.io/library/nginx',
          written: 'nginx',
          tag: '1.25',
          path: 'images[0].newTag',
          line: 3,
          kind: 'kustomize',
        },
        {
          name: 'ghcr.io/example/hello',
          written: 'ghcr.io/example/hello',
          tag: '1.2.3',
          digest: OLD_DIGEST,
          path: 'images[1].newTag',
          line: 6,
          kind: 'kustomize',
        },
        {
          name: 'ghcr.io/example/worker',
          written: 'ghcr.io/example/worker',
          digest: NEW_DIGEST,
          path: 'images[2]',
          line: 7,
          kind: 'kustomize',
        },
      ],
      refused: [],
    });
  });

  it('lists container images of every document with document-prefixed paths', () => {
    const text = lines(
      'apiVersion: v1',
      'kind: Pod',
      'spec:',
      '  containers:',
      '  - image: busybox',
      '---',
      'apiVersion: apps/v1',
      'kind: Deployment',
      'spec:',
      '  template:',
      '    spec:',
      '      initContainers: [{name: i, image: "ghcr.io/example/hello:1.2.3"}]',
    );
    expect(listImages(text, { path: 'all.yaml' }).uses).toEqual([
      {
        name: 'docker.io/library/busybox',
        written: 'busybox',
        path: '[0].spec.containers[0].image',
        line: 5,
        kind: 'manifest',
      },
      {
        name: 'ghcr.io/example/hello',
        written: 'ghcr.io/example/hello',
        tag: '1.2.3',
        path: '[1].spec.template.spec.initContainers[0].image',
        line: 12,
        kind: 'manifest',
      },
    ]);
  });

  it('lists Helm image maps (Bitnami registry composed) and strings, skipping empty tags', () => {
    const text = lines(
      'image:',
      '  registry: docker.io',
      '  repository: bitnami/redis',
      '  tag: 7.2.4',
      '  digest: ""',
      'metrics:',
      '  image: {repository: ghcr.io/example/exporter, tag: ""}',
      'sidecarImage: ghcr.io/example/hello:1.2.3',
    );
    expect(listImages(text, { path: 'values.yaml' }).uses).toEqual([
      {
        name: 'docker.io/bitnami/redis',
        written: 'docker.io/bitnami/redis',
        tag: '7.2.4',
        path: 'image.tag',
        line: 4,
        kind: 'helm-values',
      },
      {
        name: 'ghcr.io/example/exporter',
        written: 'ghcr.io/example/exporter',
        path: 'metrics.image.tag',
        line: 7,
        kind: 'helm-values',
      },
      {
        name: 'ghcr.io/example/hello',
        written: 'ghcr.io/example/hello',
        tag: '1.2.3',
        path: 'sidecarImage',
        line: 8,
        kind: 'helm-values',
      },
    ]);
  });

  it('lists Argo CD overrides', () => {
    const text = lines(
      'apiVersion: argoproj.io/v1alpha1',
      'kind: Application',
      'spec:',
      '  source:',
      '    kustomize:',
      '      images: ["hello=ghcr.io/example/hello:1.2.3"]',
      '    helm:',
      '      parameters:',
      '      - {name: image.repository, value: ghcr.io/example/api}',
      '      - {name: image.tag, value: "2.0"}',
    );
    expect(listImages(text, { path: 'app.yaml' }).uses).toEqual([
      {
        name: 'ghcr.io/example/hello',
        written: 'ghcr.io/example/hello',
        tag: '1.2.3',
        path: 'spec.source.kustomize.images[0]',
        line: 6,
        kind: 'argocd-application',
      },
      {
        name: 'ghcr.io/example/api',
        written: 'ghcr.io/example/api',
        tag: '2.0',
        path: 'spec.source.helm.parameters[1].value',
        line: 10,
        kind: 'argocd-application',
      },
    ]);
  });

  it('reports templated images and parse errors as refusals', () => {
    expect(
      listImages(lines('images:', '- name: ghcr.io/example/hello', '  newTag: ${TAG}'), { path: 'kustomization.yaml' }),
    ).toEqual({
      uses: [],
      refused: [
        {
          reason:
            'ghcr.io/example/hello is set through a template placeholder; its version cannot be read from the file',
          line: 3,
        },
      ],
    });
    const broken = listImages('images: [', { path: 'kustomization.yaml' });
    expect(broken.uses).toEqual([]);
    expect(broken.refused[0]?.reason).toMatch(/not valid YAML/);
  });

  it('lists nothing for files that are not YAML', () => {
    expect(listImages('image: nginx:1', { path: 'README.md' })).toEqual({ uses: [], refused: [] });
  });

  it('reports instead of lists what kustomize cannot build or no reference grammar reads', () => {
    const text = lines(
      'images:',
      '- name: nginx',
      '  newTag: 1.10',
      '- name: foobar',
      '  digest: sha256:24a0c4b4',
      '- name: postgres',
      '  newName: awesome/postgres:11',
    );
    expect(listImages(text, { path: 'kustomization.yaml' })).toEqual({
      uses: [
        {
          name: 'docker.io/awesome/postgres',
          written: 'awesome/postgres',
          tag: '11',
          path: 'images[2].newName',
          line: 7,
          kind: 'kustomize',
        },
      ],
      refused: [
        {
          reason: `foobar's version cannot be read from the file: "sha256:24a0c4b4" is not a valid digest`,
          line: 5,
        },
        {
          reason:
            'images[0].newTag is written 1.10 without quotes, which YAML reads as a number; kustomize refuses to build the file until it is quoted ("1.10")',
          line: 3,
        },
      ],
    });
  });
});

describe('listImages on a multi-document file with Go/Helm template documents', () => {
  it('reads the plain documents and reports each template document with its line', () => {
    const text = [
      'apiVersion: v1',
      'kind: Pod',
      'spec:',
      '  containers:',
      '  - image: ghcr.io/example/hello:1.0.0',
      '---',
      '{{- if .Values.worker }}',
      'apiVersion: v1',
      'kind: Pod',
      '{{- end }}',
      '',
    ].join('\n');
    const { uses, refused } = listImages(text, { path: 'all.yaml' });
    expect(uses.map((use) => `${use.name}:${use.tag ?? ''}@${use.line}`)).toEqual(['ghcr.io/example/hello:1.0.0@5']);
    expect(refused).toEqual([
      {
        line: 7,
        reason:
          'document 2 is a Go/Helm template ({{ … }} at line 7), not YAML data, so it was skipped and the other documents were read; edit the values the template reads',
      },
    ]);
  });
});
