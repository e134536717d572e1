import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { editImages } from '../../../src/planners/image-edit/index.js';
import { isPlainSafe, renderScalar } from '../../../src/planners/image-edit/scalar.js';
import { lines } from './helpers.js';

describe('isPlainSafe', () => {
  it.each([
    '1.10',
    '20240115',
    '553640e6',
    '0755',
    '0x1F',
    '0o17',
    '0b101',
    '1_000',
    '1:20',
    '+1',
    '.5',
    '1e3',
    '42',
    'on',
    'off',
    'On',
    'OFF',
    'y',
    'Y',
    'n',
    'yes',
    'no',
    'true',
    'False',
    '~',
    'null',
    'Null',
    '.inf',
    '-.inf',
    '.nan',
    '2024-01-15',
    '2024-01-15T10:00:00Z',
    '',
    ' x',
    'x ',
    'a: b',
    'a #b',
    '#x',
    '-',
    '- x',
    '[x]',
    '{x}',
    '*x',
    '&x',
    '!x',
    '|',
    '>',
    '%x',
    '@x',
    '`x',
    '"x',
    "'x",
    '<<',
    '=',
    'a\nb',
  ])('%j needs quotes', (value) => {
    expect(isPlainSafe(value)).toBe(false);
  });

  it.each([
    '1.2.3',
    'v1.10',
    'v2',
    'latest',
    'main-553640e',
    'sha-553640e6',
    '1.0.0-rc.1',
    '1.0.0_build.5',
    'NaN',
    'abc1e3',
    `sha256:${'a'.repeat(64)}`,
    'ghcr.io/example/hello:1.10',
    'localhost:5000/a:20240115',
    'nginx:1.25@sha256:abc',
    'hello=ghcr.io/example/hello:1.2',
    't'.repeat(128),
  ])('%j stays plain', (value) => {
    expect(isPlainSafe(value)).toBe(true);
  });

  it('never calls a value safe that does not read back as the same string (YAML 1.1 and 1.2)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_.:+-]{0,20}$/), (value) => {
        if (!isPlainSafe(value)) return;
        for (const version of ['1.1', '1.2'] as const) {
          expect(parse(`k: ${value}`, { version })).toEqual({ k: value });
          expect(parse(`[${value}]`, { version })).toEqual([value]);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('renderScalar', () => {
  it.each([
    ['1.2.3', 'plain', '1.2.3'],
    ['1.10', 'plain', '"1.10"'],
    ['1.10', 'single', "'1.10'"],
    ['1.10', 'double', '"1.10"'],
    ['v1', 'double', '"v1"'],
    ["it's", 'single', "'it''s'"],
    ['a"b\\c', 'double', '"a\\"b\\\\c"'],
  ] as const)('%s in %s style → %s', (value, style, expected) => {
    expect(renderScalar(value, style)).toBe(expected);
  });
});

describe('quoting in edits', () => {
  const entry = (tag: string) => lines('images:', '- name: ghcr.io/example/hello', `  newTag: ${tag}`);
  it.each([
    ['1.10', '"1.10"'],
    ['20240115', '"20240115"'],
    ['553640e6', '"553640e6"'],
    ['0755', '"0755"'],
    ['1_000', '"1_000"'],
    ['on', '"on"'],
    ['y', '"y"'],
    ['true', '"true"'],
    ['2024-01-15', '"2024-01-15"'],
    ['1e3', '"1e3"'],
    ['42', '"42"'],
    ['v2', 'v2'],
    ['v1.10', 'v1.10'],
    ['1.4.0', '1.4.0'],
    ['main-553640e6', 'main-553640e6'],
  ])('a plain newTag becomes %s → %s', (tag, written) => {
    const result = editImages(
      entry('v0'),
      { repository: 'ghcr.io/example/hello', tag },
      { path: 'kustomization.yaml' },
    );
    expect(result.text).toBe(entry(written));
    expect(result.changed[0]?.to).toBe(tag);
  });

  it('keeps single and double quotes for safe and unsafe values alike', () => {
    const event = { repository: 'ghcr.io/example/hello', tag: '1.10' };
    expect(editImages(entry("'v0'"), event, { path: 'kustomization.yaml' }).text).toBe(entry("'1.10'"));
    expect(editImages(entry('"v0"'), { ...event, tag: 'v2' }, { path: 'kustomization.yaml' }).text).toBe(entry('"v2"'));
  });

  it('quotes inside flow maps by the same rule', () => {
    const input = lines('images: [{name: ghcr.io/example/hello, newTag: v0}]');
    expect(
      editImages(input, { repository: 'ghcr.io/example/hello', tag: '1.10' }, { path: 'kustomization.yaml' }).text,
    ).toBe(lines('images: [{name: ghcr.io/example/hello, newTag: "1.10"}]'));
  });

  it('keeps a tag (!!str) and an anchor in front of the value', () => {
    const input = lines('images:', '- name: ghcr.io/example/hello', '  newTag: !!str &t 1.2.3 # c');
    expect(
      editImages(input, { repository: 'ghcr.io/example/hello', tag: '1.10' }, { path: 'kustomization.yaml' }).text,
    ).toBe(lines('images:', '- name: ghcr.io/example/hello', '  newTag: !!str &t "1.10" # c'));
  });

  it('writes a 128-character tag on one line', () => {
    const tag = `v${'1'.repeat(127)}`;
    expect(
      editImages(entry('v0'), { repository: 'ghcr.io/example/hello', tag }, { path: 'kustomization.yaml' }).text,
    ).toBe(entry(tag));
  });
});
