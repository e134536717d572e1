import { describe, expect, it } from 'vitest';
import { editImages } from '../../../src/planners/image-edit/index.js';
import {
  EVENT,
  NEW_DIGEST,
  OLD_DIGEST,
  TAG_ONLY,
  expectEdit,
  expectRefusal,
  expectUntouched,
  lines,
} from './helpers.js';

describe('kustomize images', () => {
  describe('when an entry names the image', () => {
    it('rewrites newTag in place and reports path, line, from and to', () => {
      const result = expectEdit(
        lines(
          'apiVersion: kustomize.config.k8s.io/v1beta1',
          'kind: Kustomization',
          'images:',
          '  - name: ghcr.io/example/hello',
          '    newTag: 1.2.3',
        ),
        lines(
          'apiVersion: kustomize.config.k8s.io/v1beta1',
          'kind: Kustomization',
          'images:',
          '  - name: ghcr.io/example/hello',
          '    newTag: 1.4.0',
        ),
      );
      expect(result.kind).toBe('kustomize');
      expect(result.mentions).toBe(true);
      expect(result.changed).toEqual([{ path: 'images[0].newTag', line: 5, from: '1.2.3', to: '1.4.0' }]);
    });

    it('matches newName when present and never rewrites name', () => {
      expectEdit(
        lines('images:', '- name: hello', '  newName: ghcr.io/example/hello', '  newTag: 1.2.3'),
        lines('images:', '- name: hello', '  newName: ghcr.io/example/hello', '  newTag: 1.4.0'),
      );
    });

    it('ignores an entry whose name matches but whose newName points elsewhere', () => {
      expectUntouched(
        lines('images:', '- name: ghcr.io/example/hello', '  newName: ghcr.io/example/hello-canary', '  newTag: 1.2.3'),
        { mentions: false, unchanged: false },
      );
    });

    it('compares names normalized (nginx ≡ docker.io/library/nginx ≡ index.docker.io/library/nginx)', () => {
      const event = { repository: 'index.docker.io/library/nginx', tag: '1.27.1' };
      expectEdit(
        lines(
          'images:',
          '- name: nginx',
          '  newTag: 1.25.3',
          '- name: docker.io/library/nginx',
          '  newTag: "1.25.3"',
          '- name: docker.io/nginx',
          '  newTag: 1.25.3',
        ),
        lines(
          'images:',
          '- name: nginx',
          '  newTag: 1.27.1',
          '- name: docker.io/library/nginx',
          '  newTag: "1.27.1"',
          '- name: docker.io/nginx',
          '  newTag: 1.27.1',
        ),
        { event },
      );
    });

    it('keeps registry ports out of the tag', () => {
      expectEdit(
        lines('images:', '- name: localhost:5000/example/hello', '  newTag: 1.2.3'),
        lines('images:', '- name: localhost:5000/example/hello', '  newTag: 1.4.0'),
        { event: { repository: 'localhost:5000/example/hello', tag: '1.4.0' } },
      );
    });

    it('updates every matching entry, in images: and the deprecated imageTags:', () => {
      const result = expectEdit(
        lines(
          'images:',
          '- name: ghcr.io/example/hello',
          '  newTag: 1.0.0',
          '- name: other',
          '  newName: ghcr.io/example/hello',
          '  newTag: 1.0.0',
          'imageTags:',
          '- name: ghcr.io/example/hello',
          '  newTag: 1.0.0',
        ),
        lines(
          'images:',
          '- name: ghcr.io/example/hello',
          '  newTag: 1.4.0',
          '- name: other',
          '  newName: ghcr.io/example/hello',
          '  newTag: 1.4.0',
          'imageTags:',
          '- name: ghcr.io/example/hello',
          '  newTag: 1.4.0',
        ),
      );
      expect(result.changed.map((c) => c.path)).toEqual([
        'images[0].newTag',
        'images[1].newTag',
        'imageTags[0].newTag',
      ]);
    });

    it('leaves entries with tagSuffix alone', () => {
      expectEdit(
        lines(
          'images:',
          '- name: ghcr.io/example/hello',
          '  tagSuffix: -debug',
          '  newTag: 1.0.0',
          '- name: ghcr.io/example/hello',
          '  newTag: 1.0.0',
        ),
        lines(
          'images:',
          '- name: ghcr.io/example/hello',
          '  tagSuffix: -debug',
          '  newTag: 1.0.0',
          '- name: ghcr.io/example/hello',
          '  newTag: 1.4.0',
        ),
      );
    });

    it('reads a Component and content-detected kustomizations', () => {
      expectEdit(
        lines(
          'apiVersion: kustomize.config.k8s.io/v1alpha1',
          'kind: Component',
          'images:',
          '- name: ghcr.io/example/hello',
          '  newTag: 1.0.0',
        ),
        lines(
          'apiVersion: kustomize.config.k8s.io/v1alpha1',
          'kind: Component',
          'images:',
          '- name: ghcr.io/example/hello',
          '  newTag: 1.4.0',
        ),
        { path: 'components/hello/component.yaml' },
      );
      for (const path of ['kustomization.yml', 'a/b/Kustomization', 'overlays/dev/kustomization.yaml']) {
        const result = editImages(lines('images:', '- name: ghcr.io/example/hello', '  newTag: 1.0.0'), EVENT, {
          path,
        });
        expect(result.kind).toBe('kustomize');
        expect(result.changed).toHaveLength(1);
      }
    });

    it('edits Helm values inlined under helmCharts[].valuesInline', () => {
      expectEdit(
        lines(
          'helmCharts:',
          '- name: hello',
          '  valuesInline:',
          '    image:',
          '      repository: ghcr.io/example/hello',
          '      tag: 1.0.0',
        ),
        lines(
          'helmCharts:',
          '- name: hello',
          '  valuesInline:',
          '    image:',
          '      repository: ghcr.io/example/hello',
          '      tag: 1.4.0',
        ),
      );
    });
  });

  describe('flow entries', () => {
    it('edits only the tag scalar and keeps padding', () => {
      expectEdit(
        lines('images:', '- { name: ghcr.io/example/hello, newTag: 1.2.3 }', '- {name: nginx, newTag: 1.2.3}'),
        lines('images:', '- { name: ghcr.io/example/hello, newTag: 1.4.0 }', '- {name: nginx, newTag: 1.2.3}'),
      );
    });

    it('edits multi-line flow sequences with comments and a trailing comma', () => {
      expectEdit(
        lines(
          'images: [',
          '  {name: nginx, newTag: "1.25"}, # web',
          '  {',
          '    name: ghcr.io/example/hello,',
          '    newTag: 1.2.3, # app',
          '  },',
          ']',
        ),
        lines(
          'images: [',
          '  {name: nginx, newTag: "1.25"}, # web',
          '  {',
          '    name: ghcr.io/example/hello,',
          '    newTag: 1.4.0, # app',
          '  },',
          ']',
        ),
      );
    });
  });

  describe('when the entry has no newTag yet', () => {
    it('adds one on a new line with the entry indentation, after newName', () => {
      const result = expectEdit(
        lines('images:', '  - name: hello # base name', '    newName: ghcr.io/example/hello', 'replicas: []'),
        lines(
          'images:',
          '  - name: hello # base name',
          '    newName: ghcr.io/example/hello',
          '    newTag: 1.4.0',
          'replicas: []',
        ),
      );
      expect(result.changed).toEqual([{ path: 'images[0].newTag', line: 4, from: '', to: '1.4.0' }]);
    });

    it("appends it as the entry's last key, before blank lines and comments that follow", () => {
      expectEdit(
        lines('images:', '- name: hello', '  newName: ghcr.io/example/hello # mirror', '', '# next', '- name: nginx'),
        lines(
          'images:',
          '- name: hello',
          '  newName: ghcr.io/example/hello # mirror',
          '  newTag: 1.4.0',
          '',
          '# next',
          '- name: nginx',
        ),
      );
    });

    it('keeps a digest-only entry digest-only: only the digest changes, no newTag is added', () => {
      const result = expectEdit(
        lines('images:', '- name: ghcr.io/example/hello', `  digest: ${OLD_DIGEST} # pinned`, '', '- name: nginx'),
        lines('images:', '- name: ghcr.io/example/hello', `  digest: ${NEW_DIGEST} # pinned`, '', '- name: nginx'),
      );
      expect(result.changed).toEqual([{ path: 'images[0].digest', line: 3, from: OLD_DIGEST, to: NEW_DIGEST }]);
      // An empty newTag is no tag to kustomize either.
      expectEdit(
        lines('images:', '- name: ghcr.io/example/hello', '  newTag: ""', `  digest: ${OLD_DIGEST}`),
        lines('images:', '- name: ghcr.io/example/hello', '  newTag: ""', `  digest: ${NEW_DIGEST}`),
      );
    });

    it('writes nothing for a redelivered event whose digest a digest-only entry already has', () => {
      expectUntouched(lines('images:', '- name: ghcr.io/example/hello', `  digest: ${NEW_DIGEST}`), {
        mentions: true,
        unchanged: true,
      });
      expectUntouched(
        lines('images:', '- name: ghcr.io/example/hello', `  digest: ${NEW_DIGEST}`),
        { mentions: true, unchanged: true },
        { pinDigest: true },
      );
    });

    it('adds one inside flow braces, keeping the padding', () => {
      expectEdit(
        lines('images:', '- { name: ghcr.io/example/hello }'),
        lines('images:', '- { name: ghcr.io/example/hello, newTag: 1.4.0 }'),
      );
      expectEdit(
        lines('images: [{name: ghcr.io/example/hello}]'),
        lines('images: [{name: ghcr.io/example/hello, newTag: 1.4.0}]'),
      );
    });

    it('quotes an added tag by the same rule and copies the quote style of the entry', () => {
      const event = { repository: 'ghcr.io/example/hello', tag: '1.10' };
      expectEdit(
        lines('images:', '- name: ghcr.io/example/hello'),
        lines('images:', '- name: ghcr.io/example/hello', '  newTag: "1.10"'),
        { event },
      );
      expectEdit(
        lines('images:', "- name: 'ghcr.io/example/hello'"),
        lines('images:', "- name: 'ghcr.io/example/hello'", "  newTag: '1.10'"),
        { event },
      );
    });

    it('adds it at the end of a file without a final newline, keeping it without one', () => {
      expectEdit(
        'images:\r\n- name: ghcr.io/example/hello',
        'images:\r\n- name: ghcr.io/example/hello\r\n  newTag: 1.4.0',
      );
    });

    it('writes the tag into an empty newTag (null, ~ or "")', () => {
      const base = ['images:', '- name: ghcr.io/example/hello'];
      expectEdit(lines(...base, '  newTag:'), lines(...base, '  newTag: 1.4.0'));
      expectEdit(`${base.join('\r\n')}\r\n  newTag:`, `${base.join('\r\n')}\r\n  newTag: 1.4.0`);
      expectEdit(lines(...base, '  newTag:   # set by CI'), lines(...base, '  newTag:   1.4.0 # set by CI'));
      expectEdit(lines(...base, '  newTag: ~'), lines(...base, '  newTag: 1.4.0'));
      expectEdit(lines(...base, '  newTag: ""'), lines(...base, '  newTag: "1.4.0"'));
      expectEdit(
        lines('images: [{name: ghcr.io/example/hello, newTag:}]'),
        lines('images: [{name: ghcr.io/example/hello, newTag: 1.4.0}]'),
      );
      const result = expectEdit(lines(...base, '  newTag: !!str'), lines(...base, '  newTag: !!str 1.4.0'));
      expect(result.changed).toEqual([{ path: 'images[0].newTag', line: 3, from: '', to: '1.4.0' }]);
    });

    it("reads names through a merge key and edits the entry's own newTag", () => {
      expectEdit(
        lines('x-hello: &hello', '  name: ghcr.io/example/hello', 'images:', '- <<: *hello', '  newTag: 1.2.3'),
        lines('x-hello: &hello', '  name: ghcr.io/example/hello', 'images:', '- <<: *hello', '  newTag: 1.4.0'),
      );
    });
  });

  describe('digests', () => {
    it('replaces a pinned digest: key and the tag', () => {
      const result = expectEdit(
        lines('images:', '- name: ghcr.io/example/hello', '  newTag: 1.2.3', `  digest: ${OLD_DIGEST}`),
        lines('images:', '- name: ghcr.io/example/hello', '  newTag: 1.4.0', `  digest: ${NEW_DIGEST}`),
      );
      expect(result.changed.map((c) => c.path)).toEqual(['images[0].newTag', 'images[0].digest']);
    });

    it('rewrites `newTag: tag@digest` as one scalar', () => {
      expectEdit(
        lines('images:', '- name: ghcr.io/example/hello', `  newTag: 1.2.3@${OLD_DIGEST}`),
        lines('images:', '- name: ghcr.io/example/hello', `  newTag: 1.4.0@${NEW_DIGEST}`),
      );
    });

    it('changes only the digest for a re-pushed tag', () => {
      const result = expectEdit(
        lines('images:', '- name: ghcr.io/example/hello', '  newTag: 1.4.0', `  digest: ${OLD_DIGEST}`),
        lines('images:', '- name: ghcr.io/example/hello', '  newTag: 1.4.0', `  digest: ${NEW_DIGEST}`),
      );
      expect(result.changed).toEqual([{ path: 'images[0].digest', line: 4, from: OLD_DIGEST, to: NEW_DIGEST }]);
    });

    it('does not write a digest the file does not pin (pinDigest off)', () => {
      expectEdit(
        lines('images:', '- name: ghcr.io/example/hello', '  newTag: 1.2.3'),
        lines('images:', '- name: ghcr.io/example/hello', '  newTag: 1.4.0'),
      );
    });

    it('with pinDigest adds a digest: line right after newTag', () => {
      expectEdit(
        lines('images:', '  - name: ghcr.io/example/hello', '    newTag: 1.2.3', '    # keep', 'resources: []'),
        lines(
          'images:',
          '  - name: ghcr.io/example/hello',
          '    newTag: 1.4.0',
          `    digest: ${NEW_DIGEST}`,
          '    # keep',
          'resources: []',
        ),
        { pinDigest: true },
      );
    });

    it('with pinDigest adds newTag and digest together when both are missing', () => {
      const result = expectEdit(
        lines('images:', '- name: hello', '  newName: ghcr.io/example/hello'),
        lines(
          'images:',
          '- name: hello',
          '  newName: ghcr.io/example/hello',
          '  newTag: 1.4.0',
          `  digest: ${NEW_DIGEST}`,
        ),
        { pinDigest: true },
      );
      expect(result.changed.map((c) => [c.path, c.line])).toEqual([
        ['images[0].newTag', 4],
        ['images[0].digest', 5],
      ]);
    });

    it('with pinDigest appends `, digest: …` inside flow braces', () => {
      expectEdit(
        lines('images:', '- {name: ghcr.io/example/hello, newTag: 1.2.3}'),
        lines('images:', `- {name: ghcr.io/example/hello, newTag: 1.4.0, digest: ${NEW_DIGEST}}`),
        { pinDigest: true },
      );
    });

    it('with pinDigest and a current tag adds only the digest line (CRLF kept)', () => {
      const result = expectEdit(
        'images:\r\n- name: ghcr.io/example/hello\r\n  newTag: 1.4.0\r\n',
        `images:\r\n- name: ghcr.io/example/hello\r\n  newTag: 1.4.0\r\n  digest: ${NEW_DIGEST}\r\n`,
        { pinDigest: true },
      );
      expect(result.changed).toEqual([{ path: 'images[0].digest', line: 4, from: '', to: NEW_DIGEST }]);
    });

    it('is unchanged when tag and digest are current', () => {
      expectUntouched(
        lines('images:', '- name: ghcr.io/example/hello', '  newTag: 1.4.0', `  digest: ${NEW_DIGEST}`),
        { mentions: true, unchanged: true },
        { pinDigest: true },
      );
    });

    it('is unchanged when the tag is current and nothing is pinned', () => {
      expectUntouched(lines('images:', '- name: ghcr.io/example/hello', '  newTag: "1.4.0"'), {
        mentions: true,
        unchanged: true,
      });
    });

    it('refuses a pinned entry when the event has no digest', () => {
      expectRefusal(
        lines('images:', '- name: ghcr.io/example/hello', '  newTag: 1.2.3', `  digest: ${OLD_DIGEST}`),
        /pins a digest but the event carries none/,
        { event: TAG_ONLY },
      );
      expectRefusal(
        lines('images:', '- name: ghcr.io/example/hello', `  newTag: 1.2.3@${OLD_DIGEST}`),
        /pins a digest but the event carries none/,
        { event: TAG_ONLY },
      );
    });

    it('refuses a digest stored in newTag', () => {
      const result = expectRefusal(
        lines('images:', '- name: ghcr.io/example/hello', `  newTag: ${OLD_DIGEST}`),
        /holds a digest .*not a tag/,
      );
      expect(result.refused[0]?.line).toBe(3);
    });

    it('pins nothing when pinDigest is on but the event has no digest', () => {
      expectEdit(
        lines('images:', '- name: ghcr.io/example/hello', '  newTag: 1.2.3'),
        lines('images:', '- name: ghcr.io/example/hello', '  newTag: 1.4.0'),
        { pinDigest: true, event: TAG_ONLY },
      );
    });
  });

  describe('what it does not read', () => {
    it('edits the image an inline patch sets, inside the block scalar (issue 32, cause 5)', () => {
      const patch = (tag: string) =>
        lines(
          'patches:',
          '- patch: |-',
          '    - op: replace',
          '      path: /spec/template/spec/containers/0/image',
          `      value: ghcr.io/example/hello:${tag}`,
          '  target: {kind: Deployment}',
        );
      const result = expectEdit(patch('1.2.3'), patch('1.4.0'), { event: TAG_ONLY });
      expect(result.changed).toEqual([
        {
          path: 'patches[0].patch[0].value',
          line: 5,
          from: 'ghcr.io/example/hello:1.2.3',
          to: 'ghcr.io/example/hello:1.4.0',
        },
      ]);
    });

    it('edits the image of a container an inline JSON 6902 patch adds', () => {
      const patch = (tag: string) =>
        lines(
          'patches:',
          '- target: {kind: Deployment}',
          '  patch: |',
          '    - op: add',
          '      path: /spec/template/spec/containers/-',
          '      value:',
          '        name: sidecar',
          `        image: ghcr.io/example/hello:${tag}`,
        );
      expectEdit(patch('1.2.3'), patch('1.4.0'), { event: TAG_ONLY });
    });

    it('refuses an image inside a folded string with the line of the string', () => {
      const result = expectRefusal(
        lines(
          'patches:',
          '- patch: >-',
          '    - {op: replace, path: /spec/template/spec/containers/0/image,',
          '       value: "ghcr.io/example/hello:1.2.3"}',
        ),
        /holds YAML in a string that Escalator cannot edit byte for byte/,
      );
      expect(result.refused[0]?.line).toBe(2);
    });

    it('ignores prefixes of the repository name and other registries', () => {
      expectUntouched(
        lines(
          'images:',
          '- name: ghcr.io/example/hello-web',
          '  newTag: 1.0.0',
          '- name: docker.io/example/hello',
          '  newTag: 1.0.0',
        ),
        { mentions: false, unchanged: false },
      );
    });

    it('does not let a placeholder in another entry block the edit', () => {
      expectEdit(
        lines('images:', '- name: other', '  newTag: ${TAG}', '- name: ghcr.io/example/hello', '  newTag: 1.0.0'),
        lines('images:', '- name: other', '  newTag: ${TAG}', '- name: ghcr.io/example/hello', '  newTag: 1.4.0'),
      );
    });
  });

  describe('what kustomize renders', () => {
    it('rewrites the version inside a newName that carries one, and adds no newTag', () => {
      expectEdit(
        lines('images:', '- name: postgres', '  newName: ghcr.io/example/hello:1.2.3'),
        lines('images:', '- name: postgres', '  newName: ghcr.io/example/hello:1.4.0'),
      );
      expectEdit(
        lines('images:', '- name: postgres', `  newName: "ghcr.io/example/hello:1.2.3@${OLD_DIGEST}"`),
        lines('images:', '- name: postgres', `  newName: "ghcr.io/example/hello:1.4.0@${NEW_DIGEST}"`),
      );
      expectEdit(
        lines('images:', '- name: postgres', `  newName: ghcr.io/example/hello@${OLD_DIGEST}`),
        lines('images:', '- name: postgres', `  newName: ghcr.io/example/hello@${NEW_DIGEST}`),
      );
    });

    it('refuses a newName that carries a version next to a newTag or digest', () => {
      expectRefusal(
        lines('images:', '- name: postgres', '  newName: ghcr.io/example/hello:1.2.3', '  newTag: "9"'),
        /carries a version and the entry also sets newTag, so kustomize renders "ghcr.io\/example\/hello:1.2.3:9"/,
      );
    });

    it('quotes an unquoted numeric newTag it touches, even when the text already matches', () => {
      const event = { repository: 'ghcr.io/example/hello', tag: '1234' };
      const result = expectEdit(
        lines('images:', '- name: ghcr.io/example/hello', '  newTag: 1234'),
        lines('images:', '- name: ghcr.io/example/hello', '  newTag: "1234"'),
        { event },
      );
      expect(result.changed).toEqual([{ path: 'images[0].newTag', line: 3, from: '1234', to: '1234' }]);
      expectEdit(
        lines('images:', '- name: ghcr.io/example/hello', '  newTag: 1.10'),
        lines('images:', '- name: ghcr.io/example/hello', '  newTag: 1.4.0'),
      );
    });

    it('refuses an edit of a file whose other entry kustomize cannot build (numeric newTag), naming it', () => {
      const result = expectRefusal(
        lines('images:', '- name: ghcr.io/example/hello', '  newTag: 1.2.3', '- name: nginx', '  newTag: 1.10'),
        /images\[1\]\.newTag is written 1\.10 without quotes.*number.*quote it \("1\.10"\)/,
      );
      expect(result.refused[0]?.line).toBe(5);
    });

    it('refuses two entries of one repository at different tags, in any spelling', () => {
      const event = { repository: 'nginx', tag: '1.27.1' };
      const result = expectRefusal(
        lines('images:', '- name: nginx', '  newTag: 1.25.3', '- name: docker.io/library/nginx', '  newTag: "1.24.0"'),
        /images\[0\] \(nginx at 1\.25\.3\), images\[1\] \(docker\.io\/library\/nginx at 1\.24\.0\) name the same repository at different tags/,
        { event },
      );
      expect(result.refused[0]?.line).toBe(3);
      expectRefusal(
        lines('images:', '- name: nginx', '  newTag: "2"', '- name: nginx', '  newTag: "3"'),
        /different tags/,
        { event },
      );
    });
  });
});
