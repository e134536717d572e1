/** YAML inside YAML strings (issue 32, cause 2): edited byte for byte in a literal block, refused with the string's line otherwise. */
import { describe, expect, it } from 'vitest';
import { editImages } from '../../../src/planners/image-edit/index.js';
import { TAG_ONLY } from './helpers.js';

const APP = { path: 'apps/hello/application.yaml' };

function application(eol: string, header: string, ...body: string[]): string {
  return [
    'apiVersion: argoproj.io/v1alpha1',
    'kind: Application',
    'spec:',
    '  source:',
    '    helm:',
    `      values: ${header}`,
    ...body,
  ]
    .map((line) => `${line}${eol}`)
    .join('');
}

describe('Helm values in an Argo CD helm.values string', () => {
  it('keeps a BOM, CRLF, blank lines, comments and |+ chomping while it edits the tag in place', () => {
    const input = `\uFEFF${application('\r\n', '|+ # kept', '        image:', '', '          repository: ghcr.io/example/hello', '          tag: "1.2.3" # x', '')}`;
    const result = editImages(input, TAG_ONLY, APP);
    expect(result.refused).toEqual([]);
    expect(result.text).toBe(input.replace('"1.2.3"', '"1.4.0"'));
    expect(result.changed).toEqual([
      { path: 'spec.source.helm.values.image.tag', line: 10, from: '1.2.3', to: '1.4.0' },
    ]);
  });

  it('refuses a block with an indentation indicator with the line of the string', () => {
    const input = application(
      '\n',
      '|2',
      '          image:',
      '            repository: ghcr.io/example/hello',
      '            tag: 1.2.3',
    );
    const result = editImages(input, TAG_ONLY, APP);
    expect(result.text).toBe(input);
    expect(result.refused).toEqual([
      {
        reason: expect.stringContaining(
          'holds YAML in a string that Escalator cannot edit byte for byte (its block header carries an indentation indicator (|2))',
        ) as string,
        line: 6,
      },
    ]);
  });

  it('refuses a value that spans lines inside the string', () => {
    const input = application(
      '\n',
      '|',
      '        image:',
      '          repository: ghcr.io/example/hello',
      '          tag: "1.2\\',
      '            .3"',
    );
    const result = editImages(input, TAG_ONLY, APP);
    expect(result.text).toBe(input);
    expect(result.refused[0]?.reason).toContain('the value spans lines inside the string spec.source.helm.values');
  });

  it('does not read a ConfigMap key that is not named like a values file', () => {
    const input =
      'apiVersion: v1\nkind: ConfigMap\ndata:\n  app.yaml: |\n    image:\n      repository: ghcr.io/example/hello\n      tag: 1.2.3\n';
    expect(editImages(input, TAG_ONLY, { path: 'cm.yaml' }).mentions).toBe(false);
  });
});
