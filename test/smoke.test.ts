import { describe, expect, it } from 'vitest';
describe('toolchain', () => {
  it('runs TypeScript tests', () => {
    expect([1, 2].map((n) => n * 2)).toEqual([2, 4]);
  });
});
