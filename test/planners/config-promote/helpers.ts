import { expect } from 'vitest';
import { planConfigPromotion, type ConfigFilePlan } from '../../../src/planners/config-promote/index.js';

/** Joins lines with `\n` and a final newline. */
export function lines(...rows: string[]): string {
  return `${rows.join('\n')}\n`;
}

/** Plans one file: X's text before and after, Y's text now. */
export function plan(
  sourceBefore: string | undefined,
  sourceAfter: string | undefined,
  target: string | undefined,
  path = 'kustomization.yaml',
): ConfigFilePlan {
  const result = planConfigPromotion([{ path, sourceBefore, sourceAfter, target }]);
  expect(result.files).toHaveLength(1);
  return result.files[0] as ConfigFilePlan;
}

/** Plans and asserts Y's exact new bytes. */
export function expectEdited(
  before: string,
  after: string,
  target: string,
  expected: string,
  path?: string,
): ConfigFilePlan {
  const result = plan(before, after, target, path);
  expect(result.refusals).toEqual([]);
  expect(result.outcome).toBe('edited');
  expect(JSON.stringify(result.text)).toBe(JSON.stringify(expected));
  return result;
}

/** Plans and asserts a refusal: no text, and the reasons and lines given. */
export function expectRefused(
  before: string | undefined,
  after: string | undefined,
  target: string | undefined,
  refusals: Array<{ file?: string; line: number; reason: RegExp }>,
  path?: string,
): ConfigFilePlan {
  const result = plan(before, after, target, path);
  expect(result.outcome).toBe('refused');
  expect(result.text).toBeUndefined();
  expect(result.edits).toEqual([]);
  expect(result.refusals).toHaveLength(refusals.length);
  refusals.forEach((wanted, i) => {
    const got = result.refusals[i];
    expect(got?.line).toBe(wanted.line);
    if (wanted.file) expect(got?.file).toBe(wanted.file);
    expect(got?.reason).toMatch(wanted.reason);
  });
  return result;
}
