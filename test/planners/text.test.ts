import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { applySplices, firstEol, lineAt, lineEndOf, splitDocuments } from '../../src/planners/text.js';

describe('splitDocuments', () => {
  it('cuts at --- lines and counts documents like parseAllDocuments', () => {
    const text = '# head\n---\na: 1\n--- # c\nb: 2\n---\n---\n';
    const chunks = splitDocuments(text);
    expect(chunks?.map((c) => text.slice(c.start, c.end))).toEqual([
      '# head\n---\na: 1\n',
      '--- # c\nb: 2\n',
      '---\n',
      '---\n',
    ]);
    expect(chunks?.length).toBe(parseAllDocuments(text).length);
  });

  it('gives content before the first --- its own document', () => {
    expect(splitDocuments('a: 1\n---\nb: 2\n')?.map((c) => c.index)).toEqual([0, 1]);
  });

  it('returns one chunk for a stream without markers and gives up on directives and ... markers', () => {
    expect(splitDocuments('a: 1\n')).toEqual([{ index: 0, start: 0, end: 5 }]);
    expect(splitDocuments('%YAML 1.2\n---\na: 1\n')).toBeUndefined();
    expect(splitDocuments('a: 1\n...\n---\nb: 2\n')).toBeUndefined();
  });

  it('ignores --- that is indented or followed by other characters', () => {
    expect(splitDocuments('a: |\n  ---\nb: ---x\n----\n')?.length).toBe(1);
  });

  it('agrees with parseAllDocuments on the number of documents (property)', () => {
    const line = fc.constantFrom(
      'a: 1',
      'b: [1, 2]',
      '# comment',
      '',
      '  ',
      '---',
      '--- # c',
      '---\t',
      '--- a: 1',
      '--- |',
      '- x',
      'k: |',
      '  text',
      'q: "a',
      '  b"',
      '\uFEFF# bom',
      '? k',
      ': v',
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.constantFrom('\n', '\r\n'), (rows, eol) => {
        const text = rows.join(eol);
        const docs = parseAllDocuments(text);
        if (!Array.isArray(docs) || docs.some((doc) => doc.errors.length > 0) || docs.length === 0) return;
        if (text.slice(1).includes('\uFEFF')) return;
        expect(splitDocuments(text)?.length).toBe(docs.length);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('line helpers', () => {
  it('finds lines, line ends and the first line ending', () => {
    const text = 'a\r\nb\nc';
    expect([lineAt(text, 0), lineAt(text, 3), lineAt(text, 5), lineAt(text, 6)]).toEqual([1, 2, 3, 3]);
    expect(lineEndOf(text, 0)).toEqual({ end: 1, eol: '\r\n' });
    expect(lineEndOf(text, 3)).toEqual({ end: 4, eol: '\n' });
    expect(lineEndOf(text, 5)).toEqual({ end: 6, eol: '' });
    expect(firstEol(text)).toBe('\r\n');
    expect(firstEol('x')).toBe('\n');
  });
});

describe('applySplices', () => {
  it('applies replacements and ordered insertions and reports where each landed', () => {
    const result = applySplices('abcdef', [
      { start: 4, end: 4, text: 'X' },
      { start: 1, end: 3, text: '123' },
      { start: 4, end: 4, text: 'Y' },
    ]);
    expect(result).toEqual({ text: 'a123dXYef', starts: [5, 1, 6] });
  });
});
