import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { editImages } from '../../../src/planners/image-edit/index.js';
import { EVENT, expectEdit } from './helpers.js';

/** Every byte but the tag must survive: the expected text is the input with one substring replaced. */
function expectOnly(
  input: string,
  from: string,
  to: string,
  options: { path?: string; pinDigest?: boolean } = {},
): void {
  const at = input.indexOf(from);
  expect(at).toBeGreaterThanOrEqual(0);
  expect(input.indexOf(from, at + 1)).toBe(-1);
  expectEdit(input, input.slice(0, at) + to + input.slice(at + from.length), options);
}

describe('byte preservation', () => {
  it('keeps comments everywhere, including non-ASCII ones and one at the end without a newline', () => {
    const input = [
      '# Überschrift — 日本語 🚀',
      'images:  # trailing on a key',
      '  # above the entry',
      '  - name: ghcr.io/example/hello   # same line ✓',
      '    newTag:',
      '      # between key and value',
      '      1.2.3 # after the value ☃',
      '',
      '# last line without newline 🎉',
    ].join('\n');
    expectOnly(input, '      1.2.3 #', '      1.4.0 #');
  });

  it('keeps key order, blank lines, whitespace-only lines, trailing spaces and tabs', () => {
    const input =
      'images:\n\n  - newTag: 1.2.3 \t\n   \n    name: ghcr.io/example/hello\t\n\n\nresources:   \n  - a.yaml\n';
    expectOnly(input, 'newTag: 1.2.3', 'newTag: 1.4.0');
  });

  it('keeps CRLF, mixed line endings, a BOM and a missing final newline', () => {
    expectOnly(
      '\uFEFFimages:\r\n- name: ghcr.io/example/hello\n  newTag: 1.2.3\r\n# end\n  \r\n',
      'newTag: 1.2.3',
      'newTag: 1.4.0',
    );
    expectOnly('\uFEFFimages:\r\n- name: ghcr.io/example/hello\r\n  newTag: 1.2.3', 'newTag: 1.2.3', 'newTag: 1.4.0');
  });

  it('keeps 4-space indentation and non-indented sequences', () => {
    expectOnly('images:\n- name: ghcr.io/example/hello\n  newTag: 1.2.3\n', 'newTag: 1.2.3', 'newTag: 1.4.0');
    expectOnly(
      'images:\n    -   name: ghcr.io/example/hello\n        newTag: 1.2.3\n',
      'newTag: 1.2.3',
      'newTag: 1.4.0',
    );
  });

  it('adds keys with the indentation of unusual entries', () => {
    expectEdit(
      'images:\n    -   name: ghcr.io/example/hello\nx: 1\n',
      'images:\n    -   name: ghcr.io/example/hello\n        newTag: 1.4.0\nx: 1\n',
    );
  });

  it('does not fold long lines', () => {
    const comment = `# ${'x'.repeat(200)}`;
    expectOnly(
      `images:\n- name: ghcr.io/example/hello ${comment}\n  newTag: 1.2.3 ${comment}\n`,
      'newTag: 1.2.3',
      'newTag: 1.4.0',
    );
  });

  it('keeps %YAML directives, --- and ... markers, and other documents', () => {
    const input = '%YAML 1.2\n--- # the kustomization\nimages:\n- name: ghcr.io/example/hello\n  newTag: 1.2.3\n...\n';
    expectOnly(input, 'newTag: 1.2.3', 'newTag: 1.4.0');
  });

  it('keeps unreferenced anchors, aliases elsewhere and block scalars elsewhere', () => {
    const input = [
      'commonLabels: &labels',
      '  app: hello',
      'images:',
      '- &entry',
      '  name: ghcr.io/example/hello',
      '  newTag: &t 1.2.3',
      'labels:',
      '- pairs: *labels',
      'patches:',
      '- patch: |-',
      '    - op: replace',
      '      value: ghcr.io/example/hello:1.2.3',
      '  target: >',
      '    folded',
      '    text',
      '',
    ].join('\n');
    expectOnly(input, '&t 1.2.3', '&t 1.4.0');
  });

  it('keeps flow-map padding and quote styles of untouched values', () => {
    expectOnly('images: [ { name: \'ghcr.io/example/hello\' ,  newTag:  "1.2.3"  } ]\n', '"1.2.3"', '"1.4.0"');
  });

  it('changes nothing but the tag for arbitrary comments and blank lines around the entry (property)', () => {
    const junk = fc.array(
      fc.oneof(
        fc.constant(''),
        fc.constant('   '),
        fc.constant('\t'),
        fc.string({ maxLength: 30 }).map((text) => `# ${text.replace(/[\r\n]/g, ' ')}`),
      ),
      { maxLength: 3 },
    );
    fc.assert(
      fc.property(junk, junk, fc.constantFrom('\n', '\r\n'), (before, after, eol) => {
        const input = ['images:', ...before, '- name: ghcr.io/example/hello', '  newTag: 1.2.3', ...after, ''].join(
          eol,
        );
        const result = editImages(input, EVENT, { path: 'kustomization.yaml' });
        expect(result.refused).toEqual([]);
        expect(result.text).toBe(input.replace('newTag: 1.2.3', 'newTag: 1.4.0'));
      }),
      { numRuns: 200 },
    );
  });
});
