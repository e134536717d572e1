import { describe, expect, it } from 'vitest';
import { acceptsTag, type TagPolicy } from '../../src/planners/tag-policy.js';

const withTags = (tags: string): TagPolicy => ({ policy: 'newest', pinDigest: false, tags });

describe('acceptsTag with a tags pattern (RE2)', () => {
  it.each([
    ['^\\d+\\.\\d+\\.\\d+$', '1.2.3', true],
    ['^\\d+\\.\\d+\\.\\d+$', '1.2.3-rc1', false],
    // Unanchored, like RegExp.test: a pattern without ^ and $ matches anywhere in the tag.
    ['rc', '1.2.3-rc1', true],
    ['(?i)^v\\d+$', 'V12', true],
    ['^(?P<major>\\d+)\\.(?<minor>\\d+)$', '1.2', true],
    ['^[[:alpha:]]+$', 'latest', true],
    ['^(a|a)+$', 'a'.repeat(128), true],
    ['^(a|a)+$', `${'a'.repeat(127)}b`, false],
  ])('%s on %s: %s', (tags, tag, ok) => {
    expect(acceptsTag(withTags(tags), tag).ok).toBe(ok);
  });

  it('refuses every tag, with a reason, for a pattern RE2 cannot compile (a configuration indexed before patterns were RE2)', () => {
    expect(acceptsTag(withTags('^(?!latest$)'), '1.0.0')).toEqual({
      ok: false,
      reason: 'the tags pattern ^(?!latest$) is not an RE2 regular expression; fix it in .github/escalator.yml',
    });
    // The same answer again, from the cache of compiled patterns.
    expect(acceptsTag(withTags('^(?!latest$)'), '1.0.0').ok).toBe(false);
  });

  it('gives the same answers once more than the cached number of patterns went through it', () => {
    for (let i = 0; i < 300; i++) expect(acceptsTag(withTags(`^${i}-`), `${i}-x`).ok).toBe(true);
    expect(acceptsTag(withTags('^0-'), '0-x').ok).toBe(true);
    expect(acceptsTag(withTags('^0-'), '1-x').ok).toBe(false);
  });
});
