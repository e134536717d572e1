import { describe, expect, it } from 'vitest';
import { editImages } from '../../../src/planners/image-edit/index.js';
import { EVENT, OLD_DIGEST, expectRefusal, expectUntouched, lines } from './helpers.js';

describe('refusals leave the file byte-identical', () => {
  it('refuses duplicate keys anywhere in a file that mentions the image', () => {
    const result = expectRefusal(
      lines('images:', '- name: ghcr.io/example/hello', '  newTag: 1.2.3', '  newTag: 1.2.4'),
      /duplicate key at line 4/,
    );
    expect(result.refused[0]?.line).toBe(4);
    expect(result.mentions).toBe(true);
    expectRefusal(lines('images: []', 'images:', '- name: ghcr.io/example/hello', '  newTag: 1.2.3'), /duplicate key/);
  });

  it('refuses parse errors with the line and a hint for templates', () => {
    const result = expectRefusal(
      lines('images:', '- name: ghcr.io/example/hello', ' newTag: 1.2.3'),
      /not valid YAML \(parse error at line 3/,
    );
    expect(result.refused[0]?.line).toBe(3);
    expectRefusal(
      lines('{{- if .Values.enabled }}', 'image: ghcr.io/example/hello:1.2.3', '{{- end }}'),
      /looks like a template/,
      { path: 'templates/deployment.yaml' },
    );
  });

  it.each([['${TAG}'], ['"$(TAG)"'], ['"{{ .Values.tag }}"'], ["'${CI_COMMIT_TAG}'"]])(
    'refuses a placeholder %s in the matching entry',
    (value) => {
      expectRefusal(lines('images:', '- name: ghcr.io/example/hello', `  newTag: ${value}`), /template placeholder/);
    },
  );

  it('refuses a placeholder in a name that could be the image', () => {
    expectRefusal(
      lines('images:', '- name: hello', '  newName: ${REGISTRY}/example/hello', '  newTag: 1.2.3'),
      /template placeholder/,
    );
  });

  it('refuses editing through an alias or a shared anchor', () => {
    expectRefusal(
      lines('images:', '- name: other', '  newTag: &t 1.2.3', '- name: ghcr.io/example/hello', '  newTag: *t'),
      /alias \*t/,
    );
    expectRefusal(
      lines('images:', '- name: ghcr.io/example/hello', '  newTag: &t 1.2.3', '- name: other', '  newTag: *t'),
      /anchor &t/,
    );
    expectRefusal(lines('images:', '- &e', '  name: ghcr.io/example/hello', '  newTag: 1.2.3', 'x: *e'), /anchor &e/);
    expectRefusal(
      lines('images: &list', '- name: ghcr.io/example/hello', '  newTag: 1.2.3', 'copy: *list'),
      /anchor &list/,
    );
  });

  it('refuses a tag inherited through a merge key', () => {
    expectRefusal(
      lines('base: &b {newTag: 1.2.3}', 'images:', '- <<: *b', '  name: ghcr.io/example/hello'),
      /newTag is inherited through the merge key << from &b/,
    );
    expectRefusal(
      lines('base: &b {tag: 1.2.3}', 'image:', '  <<: [*b]', '  repository: ghcr.io/example/hello'),
      /tag is inherited through the merge key/,
      { path: 'values.yaml' },
    );
  });

  it('refuses an invalid event tag, digest or repository', () => {
    const input = lines('images:', '- name: ghcr.io/example/hello', '  newTag: 1.2.3');
    expectRefusal(input, /tag "-bad" is not a valid Docker tag/, { event: { ...EVENT, tag: '-bad' } });
    expectRefusal(input, /not a valid Docker tag/, { event: { ...EVENT, tag: 'x'.repeat(129) } });
    expectRefusal(input, /digest "sha256:abc" is not a valid digest/, { event: { ...EVENT, digest: 'sha256:abc' } });
    const badRepository = editImages(
      input,
      { ...EVENT, repository: 'GHCR.io/Example/Hello' },
      { path: 'kustomization.yaml' },
    );
    expect(badRepository.refused.map((r) => r.reason).join()).toMatch(/not an image name/);
    expect(badRepository.mentions).toBe(false);
  });

  it('speaks of the event only when there is one: a promotion, a rollback and the command line have none', () => {
    const input = lines('images:', '- name: ghcr.io/example/hello', '  newTag: 1.2.3');
    const reasons = (origin: 'event' | 'promotion' | 'rollback' | 'command-line') =>
      editImages(
        input,
        { ...EVENT, tag: '-bad', digest: 'sha256:abc' },
        { path: 'kustomization.yaml', origin },
      ).refused.map((r) => r.reason);
    expect(reasons('event')).toEqual([
      'the event\'s tag "-bad" is not a valid Docker tag ([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}); Escalator writes only valid tags',
      'the event\'s digest "sha256:abc" is not a valid digest (algorithm:encoded, e.g. sha256:<64 hex>); fix the sender',
    ]);
    expect(reasons('rollback')).toEqual([
      'the tag on record to roll back to "-bad" is not a valid Docker tag ([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}); Escalator writes only valid tags (roll back by hand)',
      'the digest on record to roll back to "sha256:abc" is not a valid digest (algorithm:encoded, e.g. sha256:<64 hex>); roll back by hand',
    ]);
    for (const origin of ['promotion', 'rollback', 'command-line'] as const)
      for (const reason of reasons(origin)) {
        expect(reason).not.toMatch(/\bevent\b/);
        expect(reason).not.toContain('sender');
      }
  });

  it('refuses everything when one of several matching entries is refused', () => {
    const input = lines(
      'images:',
      '- name: ghcr.io/example/hello',
      '  newTag: 1.2.3',
      '- name: ghcr.io/example/hello',
      `  newTag: ${OLD_DIGEST}`,
    );
    expectRefusal(input, /holds a digest/);
  });

  it('refuses a block scalar image value', () => {
    expectRefusal(
      lines(
        'apiVersion: v1',
        'kind: Pod',
        'spec:',
        '  containers:',
        '  - image: >-',
        '      ghcr.io/example/hello:1.2.3',
      ),
      /block scalar/,
      { path: 'pod.yaml' },
    );
  });

  it('does not judge files that cannot mention the image', () => {
    expectUntouched(lines('images:', '- name: nginx', '  newTag: 1.2.3', '  newTag: 1.2.4'), {
      mentions: false,
      unchanged: false,
    });
    expectUntouched('not: [valid', { mentions: false, unchanged: false });
    const result = editImages('# ghcr.io/example/hello\n', EVENT, { path: 'README.md' });
    expect(result).toEqual({
      text: '# ghcr.io/example/hello\n',
      kind: 'unknown',
      mentions: false,
      changed: [],
      unchanged: false,
      refused: [],
      left: [],
    });
  });
});

describe('aliases without anchors', () => {
  it('are refused as invalid YAML instead of crashing', () => {
    expectRefusal(
      lines('a:', '  <<: *x', '  repository: ghcr.io/example/hello', '  tag: 1.0'),
      /alias \*x at line 2 has no anchor/,
      { path: 'values.yaml' },
    );
  });
});

describe('template files', () => {
  it('refuses unquoted {{ … }} actions that YAML reads as flow maps', () => {
    expectRefusal(
      lines('image: ghcr.io/example/hello:1.2.3', 'replicas: {{ .Values.replicas }}'),
      /the file is a template: line 2/,
      { path: 'values.yaml' },
    );
    expectRefusal(lines('{{ .Values.x }}: 1', 'image: ghcr.io/example/hello:1.2.3'), /the file is a template: line 1/, {
      path: 'values.yaml',
    });
  });

  it('accepts quoted tpl strings elsewhere in values', () => {
    const input = lines('fullnameOverride: "{{ .Release.Name }}-web"', 'image: ghcr.io/example/hello:1.2.3');
    expect(editImages(input, EVENT, { path: 'values.yaml' }).text).toBe(input.replace('hello:1.2.3', 'hello:1.4.0'));
  });
});
