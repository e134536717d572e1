import fc from 'fast-check';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseYamlDocuments } from '../../src/planners/yaml-parse.js';

/** What a caller sees of a parse: each document's errors (code, message, where) and its data. */
function observed(
  docs: Iterable<{ errors: Array<{ code: string; message: string; pos: [number, number] }>; toJS(): unknown }>,
) {
  return [...docs].map((doc) => ({
    errors: doc.errors.map((error) => ({ code: error.code, message: error.message, at: error.pos[0] })),
    data: doc.errors.length === 0 ? doc.toJS() : undefined,
  }));
}

const CASES: Record<string, string> = {
  'no duplicates': 'a: 1\nb: 2\nc: {d: 3, e: 4}\n',
  'a repeated block key': 'a: 1\nb: 2\na: 3\n',
  'a repeated flow key': 'x: {a: 1, a: 2}\n',
  'nested and in a sequence': 'a:\n  b: 1\n  b: 2\nlist:\n  - k: 1\n    k: 2\n',
  'quoted and plain spellings of one key': 'a: 1\n"a": 2\n\'a\': 3\n',
  'numbers and strings are different keys': '1: a\n"1": b\n',
  'numbers written two ways': '1: a\n0x1: b\n',
  'empty keys': ': a\n: b\n',
  'anchored and tagged keys': '&k a: 1\n!!str a: 2\n',
  'collection keys': '? [a]\n: 1\n? [a]\n: 2\n',
  'several documents': 'a: 1\na: 2\n---\nb: 1\n---\nc: 1\nc: 2\nc: 3\n',
  'three of one key': 'a: 1\na: 2\na: 3\n',
};

describe('parseYamlDocuments', () => {
  for (const [name, text] of Object.entries(CASES)) {
    it(`reports what the yaml package reports: ${name}`, () => {
      expect(observed(parseYamlDocuments(text, { prettyErrors: false }))).toEqual(
        observed(parseAllDocuments(text, { prettyErrors: false, uniqueKeys: true })),
      );
    });
  }

  it('reports what the yaml package reports for generated mappings with repeated keys', () => {
    const key = fc.constantFrom('a', 'b', '"a"', "'b'", '1', '"1"', '0x1', 'true', 'null', '~', '');
    const mapping = fc.array(fc.tuple(key, fc.integer({ min: 0, max: 9 })), { maxLength: 8 });
    const text = fc.oneof(
      mapping.map((pairs) => pairs.map(([k, v]) => `${k}: ${v}`).join('\n') + '\n'),
      mapping.map((pairs) => `{${pairs.map(([k, v]) => `${k}: ${v}`).join(', ')}}\n`),
      fc
        .tuple(mapping, mapping)
        .map(
          ([outer, inner]) =>
            `top:\n${inner.map(([k, v]) => `  ${k}: ${v}`).join('\n')}\n${outer.map(([k, v]) => `${k}: ${v}`).join('\n')}\n`,
        ),
    );
    fc.assert(
      fc.property(text, (source) => {
        expect(observed(parseYamlDocuments(source, { prettyErrors: false }))).toEqual(
          observed(parseAllDocuments(source, { prettyErrors: false, uniqueKeys: true })),
        );
      }),
      { numRuns: 3000 },
    );
  });

  it('leaves duplicates alone when asked to, as the package does', () => {
    expect(observed(parseYamlDocuments('a: 1\na: 2\n', { uniqueKeys: false }))).toEqual(
      observed(parseAllDocuments('a: 1\na: 2\n', { uniqueKeys: false })),
    );
  });
});
