import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDocument, visit, type Alias, type Document } from 'yaml';
import {
  checkYamlShape,
  checkYamlSize,
  checkYamlText,
  decodeUtf8,
  DEFAULT_YAML_LIMITS,
  resolveAliases,
  type YamlLimits,
} from '../../src/planners/yaml-guard.js';

const limits: YamlLimits = { maxBytes: 1_000, maxDepth: 5, maxAliases: 3, maxAliasExpansion: 50, maxNodes: 40 };

function parsed(text: string): Document.Parsed {
  const doc = parseDocument(text, { prettyErrors: false });
  expect(doc.errors).toEqual([]);
  return doc;
}

describe('checkYamlSize and checkYamlShape', () => {
  it('refuses text over maxBytes and accepts text at it, naming both sizes', () => {
    expect(checkYamlSize('a'.repeat(1_000), limits)).toBeUndefined();
    expect(checkYamlSize('a'.repeat(1_001), limits)?.reason).toBe(
      'the file is 1001 bytes, over the limit of 1000 bytes for one YAML file; split it into smaller files',
    );
    expect(checkYamlSize('a'.repeat(9 * 1024 * 1024))?.reason).toMatch(
      /^the file is 9\.0 MB, over the limit of 8\.0 MB/,
    );
  });

  it('counts UTF-8 bytes, not characters: 400 three-byte characters are 1,200 bytes', () => {
    expect(checkYamlSize('€'.repeat(333), limits)).toBeUndefined();
    expect(checkYamlSize('€'.repeat(400), limits)?.reason).toBe(
      'the file is 1.2 KB, over the limit of 1000 bytes for one YAML file; split it into smaller files',
    );
  });
});

describe('decodeUtf8', () => {
  it('keeps a BOM and every byte of valid UTF-8', () => {
    const bytes = Buffer.from('\uFEFFimages: [] # café €\r\n', 'utf8');
    expect(decodeUtf8(bytes)).toEqual({ text: '\uFEFFimages: [] # café €\r\n' });
  });

  it.each([
    ['a Latin-1 byte', Buffer.concat([Buffer.from('# caf'), Buffer.from([0xe9, 0x0a])]), 5],
    ['a truncated sequence at the end', Buffer.concat([Buffer.from('ab'), Buffer.from([0xe2, 0x82])]), 2],
    ['an overlong encoding', Buffer.from([0x61, 0xc0, 0xaf]), 1],
    ['a UTF-16 surrogate encoded as UTF-8', Buffer.from([0xed, 0xa0, 0x80]), 0],
  ])('refuses %s, saying near which byte', (_name, bytes, at) => {
    expect(decodeUtf8(bytes)).toEqual({
      problem: `the file is not UTF-8 text (an invalid byte near byte ${at}); Escalator reads and rewrites only UTF-8 files, as rewriting it would change bytes it does not own. Save it as UTF-8`,
    });
  });

  it('counts flow depth as the parser reads it: brackets in quotes and comments do not count', () => {
    expect(checkYamlShape('a: [[[[[1]]]]]\n', limits)).toBeUndefined();
    expect(checkYamlShape('a: 1\nb: [[[[[[1]]]]]]\n', limits)).toEqual({
      line: 2,
      reason: expect.stringMatching(/^the file nests flow collections \(\[ or \{\) more than 5 levels deep at line 2;/),
    });
    expect(checkYamlShape('a: "[[[[[[[[["\nb: \'{{{{{{{{\'\n# [[[[[[[[[[\n', limits)).toBeUndefined();
    // Closing brackets inside quotes do not hide real opening ones.
    expect(checkYamlShape('a: [[[ "]]]", [[[ 1 ]]] ]]]\n', limits)?.reason).toMatch(/more than 5 levels deep/);
  });

  it('refuses deep block nesting: indentation past twice the depth, or more compact dashes than the depth', () => {
    const nested = (levels: number) =>
      Array.from({ length: levels }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + ' x\n';
    expect(checkYamlShape(nested(11), limits)).toBeUndefined();
    expect(checkYamlShape(nested(12), limits)).toEqual({
      line: 12,
      reason:
        'line 12 is indented 11 columns, deeper than the limit of 5 nesting levels; no manifest needs that many, flatten it',
    });
    expect(checkYamlShape('- - - - - x\n', limits)).toBeUndefined();
    expect(checkYamlShape('a:\n  - - - - - - x\n', limits)?.reason).toBe(
      'line 2 opens 6 nested sequences, deeper than the limit of 5 nesting levels; no manifest needs that many, flatten it',
    );
  });

  it('refuses more lines and flow items than maxNodes', () => {
    expect(checkYamlShape(`a: [${Array(20).fill('1').join(',')}]\n${'b: 1\n'.repeat(20)}`, limits)).toBeUndefined();
    expect(checkYamlShape(`a: [${Array(30).fill('1').join(',')}]\n${'b: 1\n'.repeat(20)}`, limits)?.reason).toBe(
      'the file has 50 lines and list items to read at once, over the limit of 40; split it into smaller files (or into several YAML documents)',
    );
  });

  it('accepts every ordinary file within the default limits', () => {
    const kustomization =
      'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nimages:\n- name: ghcr.io/example/hello\n  newTag: 1.0.0\n';
    expect(checkYamlText(kustomization)).toBeUndefined();
    expect(checkYamlText(kustomization.repeat(10_000).replaceAll('apiVersion', '---\napiVersion'))).toBeUndefined();
  });
});

describe('resolveAliases', () => {
  it('finds the same anchor as the yaml package for every alias (the last one of that name before it)', () => {
    const name = fc.constantFrom('a', 'b');
    const value: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
      node: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.constantFrom('1', 'x'),
        name.map((n) => `*${n}`),
        fc.tuple(name, tie('node')).map(([n, v]) => `&${n} ${v.startsWith('*') ? '1' : v}`),
        fc.array(tie('node'), { maxLength: 3 }).map((items) => `[${items.join(', ')}]`),
      ),
    })).node;
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 6 }), (items) => {
        const doc = parseDocument(`[${items.join(', ')}]`, { prettyErrors: false });
        fc.pre(doc.errors.length === 0);
        const { targets } = resolveAliases(doc, '', 0, DEFAULT_YAML_LIMITS);
        const aliases: Alias[] = [];
        visit(doc, { Alias: (_key, node) => void aliases.push(node) });
        expect(targets.size).toBe(aliases.length);
        for (const alias of aliases) expect(targets.get(alias)).toBe(alias.resolve(doc));
      }),
      { numRuns: 300 },
    );
  });

  it('refuses more aliases, or more anchors, than the limit, at the first one past it', () => {
    expect(resolveAliases(parsed('a: &x 1\nb: [*x, *x, *x]\n'), '', 0, limits).problem).toBeUndefined();
    const text = 'a: &x 1\nb:\n- *x\n- *x\n- *x\n- *x\n';
    expect(resolveAliases(parsed(text), text, 0, limits).problem).toEqual({
      line: 6,
      reason: 'the file has more than 3 aliases (*name, here at line 6); write the values out instead of aliasing them',
    });
    const anchors = 'a: [&a 1, &b 2, &c 3, &d 4]\n';
    expect(resolveAliases(parsed(anchors), anchors, 0, limits).problem?.reason).toBe(
      'the file has more than 3 anchors (&name, here at line 1); write the values out instead',
    );
  });

  it('counts what aliases add when read: a bomb and an alias inside its own anchor are refused', () => {
    const limits: YamlLimits = { ...DEFAULT_YAML_LIMITS, maxAliasExpansion: 50 };
    // 3 aliases to a list of 10 scalars add 3 × 11 = 33 nodes: within 50.
    expect(
      resolveAliases(parsed(`a: &a [${Array(10).fill('x').join(', ')}]\nb: [*a, *a, *a]\n`), '', 0, limits).problem,
    ).toBeUndefined();
    const bomb = 'a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: [*b, *b]\n';
    // *a adds 4 each (12); *b adds 1 + 3 × 4 = 13 each (26): 38 ≤ 50. One more *b goes past it.
    expect(resolveAliases(parsed(bomb), '', 0, limits).problem).toBeUndefined();
    expect(
      resolveAliases(parsed(bomb.replace('c: [*b, *b]', 'c: [*b, *b, *b]')), '', 0, limits).problem?.reason,
    ).toMatch(/^the file's aliases expand to more than 50 values when read/);
    const loop = parseDocument('a: &a [1, *a]\n', { prettyErrors: false });
    expect(resolveAliases(loop, '', 0, limits).problem?.reason).toMatch(/an alias inside the value it names/);
  });
});
