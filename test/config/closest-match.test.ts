import { describe, expect, it } from 'vitest';
import { closestMatch, editDistance } from '../../src/config/repo-config.schema.js';

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
});
