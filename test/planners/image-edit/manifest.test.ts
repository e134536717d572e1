import { describe, expect, it } from 'vitest';
import { NEW_DIGEST, OLD_DIGEST, TAG_ONLY, expectEdit, expectRefusal, expectUntouched, lines } from './helpers.js';

const MANIFEST = { path: 'apps/hello/deployment.yaml' };

function deployment(image: string, extra: string[] = []): string {
  return lines(
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: hello',
    '  annotations:',
    `    example.com/image: ${image.replace(/^image: /, '')}`,
    'spec:',
    '  template:',
    '    spec:',
    '      containers:',
    '        - name: hello',
    `          ${image}`,
    '          args: ["--image", "ghcr.io/example/hello:1.2.3"]',
    '          env:',
    '            - name: IMAGE',
    '              value: ghcr.io/example/hello:1.2.3',
    ...extra,
  );
}

describe('manifests', () => {
  it('edits containers[].image and nothing in env, args or annotations', () => {
    const input = deployment('image: ghcr.io/example/hello:1.2.3');
    const expected = input.replace(
      '          image: ghcr.io/example/hello:1.2.3',
      '          image: ghcr.io/example/hello:1.4.0',
    );
    const result = expectEdit(input, expected, MANIFEST);
    expect(result.kind).toBe('manifest');
    expect(result.changed).toEqual([
      {
        path: 'spec.template.spec.containers[0].image',
        line: 12,
        from: 'ghcr.io/example/hello:1.2.3',
        to: 'ghcr.io/example/hello:1.4.0',
      },
    ]);
  });

  it('edits initContainers, ephemeralContainers and image volumes at any depth (CronJob)', () => {
    const input = lines(
      'apiVersion: batch/v1',
      'kind: CronJob',
      'spec:',
      '  jobTemplate:',
      '    spec:',
      '      template:',
      '        spec:',
      '          initContainers:',
      '          - {name: init, image: "ghcr.io/example/hello:1.2.3"}',
      '          containers:',
      '          - name: main',
      "            image: 'ghcr.io/example/hello:1.2.3'",
      '          ephemeralContainers:',
      '          - name: debug',
      '            image: ghcr.io/example/hello:1.2.3',
      '          volumes:',
      '          - name: data',
      '            image:',
      '              reference: ghcr.io/example/hello:1.2.3',
      '              pullPolicy: IfNotPresent',
    );
    const result = expectEdit(input, input.replaceAll('hello:1.2.3', 'hello:1.4.0'), MANIFEST);
    expect(result.changed.map((c) => c.path)).toEqual([
      'spec.jobTemplate.spec.template.spec.initContainers[0].image',
      'spec.jobTemplate.spec.template.spec.containers[0].image',
      'spec.jobTemplate.spec.template.spec.ephemeralContainers[0].image',
      'spec.jobTemplate.spec.template.spec.volumes[0].image.reference',
    ]);
  });

  it('prefixes paths with the document index in multi-document files and reads List items', () => {
    const input = lines(
      'apiVersion: v1',
      'kind: ConfigMap',
      'data:',
      '  image: ghcr.io/example/hello:1.2.3',
      '---',
      'apiVersion: v1',
      'kind: List',
      'items:',
      '  - apiVersion: v1',
      '    kind: Pod',
      '    spec:',
      '      containers:',
      '        - name: a',
      '          image: ghcr.io/example/hello:1.2.3',
    );
    const expected = input.replace(
      '          image: ghcr.io/example/hello:1.2.3',
      '          image: ghcr.io/example/hello:1.4.0',
    );
    const result = expectEdit(input, expected, MANIFEST);
    expect(result.changed).toEqual([
      {
        path: '[1].items[0].spec.containers[0].image',
        line: 14,
        from: 'ghcr.io/example/hello:1.2.3',
        to: 'ghcr.io/example/hello:1.4.0',
      },
    ]);
  });

  it('leaves CustomResourceDefinitions untouched, even with containers in their schema', () => {
    const crd = lines(
      'apiVersion: apiextensions.k8s.io/v1',
      'kind: CustomResourceDefinition',
      'spec:',
      '  versions:',
      '    - schema:',
      '        openAPIV3Schema:',
      '          properties:',
      '            containers:',
      '              - image: ghcr.io/example/hello:1.2.3',
    );
    expectUntouched(crd, { mentions: false, unchanged: false }, MANIFEST);
  });

  it('matches Docker Hub short names and keeps the spelling', () => {
    const input = deployment('image: nginx:1.25.3');
    expectEdit(input, input.replace('          image: nginx:1.25.3', '          image: nginx:1.27.1'), {
      ...MANIFEST,
      event: { repository: 'docker.io/library/nginx', tag: '1.27.1' },
    });
  });

  it('keeps a registry port and does not quote a full image string', () => {
    const input = deployment('image: localhost:5000/example/hello:1.2.3');
    expectEdit(
      input,
      input.replace(
        '          image: localhost:5000/example/hello:1.2.3',
        '          image: localhost:5000/example/hello:1.10',
      ),
      { ...MANIFEST, event: { repository: 'localhost:5000/example/hello', tag: '1.10' } },
    );
  });

  it('replaces tag and digest together and appends a digest with pinDigest', () => {
    const pinned = deployment(`image: ghcr.io/example/hello:1.2.3@${OLD_DIGEST}`);
    expectEdit(
      pinned,
      pinned.replace(
        `          image: ghcr.io/example/hello:1.2.3@${OLD_DIGEST}`,
        `          image: ghcr.io/example/hello:1.4.0@${NEW_DIGEST}`,
      ),
      MANIFEST,
    );
    const plain = deployment('image: ghcr.io/example/hello:1.2.3');
    expectEdit(
      plain,
      plain.replace(
        '          image: ghcr.io/example/hello:1.2.3',
        `          image: ghcr.io/example/hello:1.4.0@${NEW_DIGEST}`,
      ),
      { ...MANIFEST, pinDigest: true },
    );
  });

  it('is unchanged when the container already runs the tag', () => {
    expectUntouched(deployment('image: ghcr.io/example/hello:1.4.0'), { mentions: true, unchanged: true }, MANIFEST);
  });

  it('does not mention an image that only appears in env values', () => {
    const input = lines(
      'apiVersion: v1',
      'kind: Pod',
      'spec:',
      '  containers:',
      '    - name: a',
      '      image: busybox:1.36',
      '      env:',
      '        - {name: X, value: "ghcr.io/example/hello:1.2.3"}',
    );
    expectUntouched(input, { mentions: false, unchanged: false }, MANIFEST);
  });

  it('refuses pinned images without an event digest, placeholders and invalid event tags', () => {
    expectRefusal(
      deployment(`image: ghcr.io/example/hello:1.2.3@${OLD_DIGEST}`),
      /pins a digest but the event carries none/,
      { ...MANIFEST, event: TAG_ONLY },
    );
    expectRefusal(deployment('image: ghcr.io/example/hello:${TAG}'), /template placeholder/, MANIFEST);
    expectRefusal(deployment('image: ${REGISTRY}/example/hello:1.2.3'), /template placeholder/, MANIFEST);
    expectRefusal(deployment('image: ghcr.io/example/hello:1.2.3'), /not a valid Docker tag/, {
      ...MANIFEST,
      event: { repository: 'ghcr.io/example/hello', tag: 'bad tag' },
    });
  });
});
