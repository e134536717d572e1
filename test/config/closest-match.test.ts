import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  clipValue,
  closestMatch,
  editDistance,
  MAX_SUGGESTION_LENGTH,
  quoteValue,
} from '../../src/config/repo-config.schema.js';

describe('editDistance', () => {
  it.each([
    ['', '', 0],
    ['dev', 'dev', 0],
    ['dev', 'dve', 1],
    ['stagin', 'staging', 1],
    ['kitten', 'sitting', 3],
    ['', 'abc', 3],
  ] as const)('%j → %j is %i', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });

  it.each([
    ['kitten', 'sitting', 2, 3],
    ['kitten', 'sitting', 3, 3],
    ['dev', 'dve', 0, 1],
    ['abc', 'abcdefgh', 2, 3],
    ['', 'abc', 1, 2],
  ] as const)('%j → %j with max %i is %i (max + 1 when over it)', (a, b, max, distance) => {
    expect(editDistance(a, b, max)).toBe(distance);
    expect(editDistance(b, a, max)).toBe(distance);
  });

  it('agrees with the unbounded distance whenever that is within max', () => {
    const words = [
      '',
      'a',
      'ab',
      'ba',
      'abc',
      'acb',
      'bca',
      'staging',
      'stagign',
      'satging',
      'prod',
      'porduction',
      'production',
    ];
    for (const a of words) {
      for (const b of words) {
        const full = editDistance(a, b);
        for (const max of [0, 1, 2, 3, 5]) expect(editDistance(a, b, max)).toBe(full <= max ? full : max + 1);
      }
    }
  });

  it('agrees with the unbounded distance on any short strings and any max', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'b', 'c'), maxLength: 12 });
    fc.assert(
      fc.property(text, text, fc.nat(8), (a, b, max) => {
        const full = editDistance(a, b);
        expect(editDistance(a, b, max)).toBe(full <= max ? full : max + 1);
      }),
      { numRuns: 2_000 },
    );
  });

  it('compares two 20,000-character names within max: over it, or the exact distance', () => {
    const a = 'a'.repeat(20_000);
    expect(editDistance(a, 'b'.repeat(20_000), 3)).toBe(4);
    expect(editDistance(a, `b${a.slice(2)}b`, 3)).toBe(2);
    expect(editDistance(a, `${a.slice(0, 10_000)}bb${a.slice(10_002)}`, 3)).toBe(2);
    expect(
      editDistance(`${a.slice(0, 10_000)}ab${a.slice(10_002)}`, `${a.slice(0, 10_000)}ba${a.slice(10_002)}`, 3),
    ).toBe(1);
  });
});

describe('closestMatch', () => {
  const keys = ['name', 'paths', 'from', 'autoMerge', 'soak', 'reviewers', 'group'];
  it.each([
    ['automerge', keys, 'autoMerge'],
    ['auto_merge', keys, 'autoMerge'],
    ['auto-merge', keys, 'autoMerge'],
    ['path', keys, 'paths'],
    ['reviewer', keys, 'reviewers'],
    ['soka', keys, 'soak'],
    ['dve', ['registry', 'staging', 'dev'], 'dev'],
    ['regisry', ['registry', 'staging', 'dev'], 'registry'],
  ] as const)('suggests %j for %j', (text, candidates, expected) => {
    expect(closestMatch(text, candidates)).toBe(expected);
  });

  it.each(['colour', 'approvers', 'x'])('suggests nothing for %j', (text) => {
    expect(closestMatch(text, keys)).toBeUndefined();
  });

  it(`suggests nothing for text longer than ${MAX_SUGGESTION_LENGTH} characters, and never a candidate that long`, () => {
    expect(closestMatch('a'.repeat(MAX_SUGGESTION_LENGTH), ['a'.repeat(MAX_SUGGESTION_LENGTH - 1)])).toBe(
      'a'.repeat(MAX_SUGGESTION_LENGTH - 1),
    );
    expect(closestMatch('a'.repeat(MAX_SUGGESTION_LENGTH + 1), ['a'.repeat(MAX_SUGGESTION_LENGTH)])).toBeUndefined();
    expect(closestMatch('k'.repeat(1 << 20), keys)).toBeUndefined();
    expect(closestMatch('c'.repeat(20_000), ['registry', 'a'.repeat(20_000), 'b'.repeat(20_000)])).toBeUndefined();
    expect(closestMatch('dev', ['d'.repeat(65), 'dve'])).toBe('dve');
  });

  it('prefers the first of equally close candidates, and a folded match over a closer one listed first', () => {
    expect(closestMatch('stagin', ['stagind', 'staging'])).toBe('stagind');
    expect(closestMatch('auto_merge', ['automerg', 'autoMerge'])).toBe('autoMerge');
  });
});

describe('quoteValue', () => {
  it('quotes short values whole', () => {
    expect(quoteValue('dev')).toBe('"dev"');
    expect(quoteValue('x'.repeat(80))).toBe(`"${'x'.repeat(80)}"`);
  });

  it('cuts long values to 80 characters, with an ellipsis and the length', () => {
    expect(quoteValue('a'.repeat(20_000))).toBe(`"${'a'.repeat(80)}…" (20,000 characters)`);
    expect(clipValue('b'.repeat(81))).toBe(`${'b'.repeat(80)}…`);
  });

  it('never cuts inside a surrogate pair', () => {
    const text = `${'a'.repeat(79)}🚀${'a'.repeat(10)}`;
    expect(clipValue(text)).toBe(`${'a'.repeat(79)}…`);
    expect(quoteValue(text)).toBe(`"${'a'.repeat(79)}…" (91 characters)`);
  });
});
