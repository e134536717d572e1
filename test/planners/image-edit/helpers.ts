import { expect } from 'vitest';
import { editImages, type EditResult, type ImageEvent } from '../../../src/planners/image-edit/index.js';

export const OLD_DIGEST = `sha256:${'a'.repeat(64)}`;
export const NEW_DIGEST = `sha256:${'b'.repeat(64)}`;

/** The usual event: ghcr.io/example/hello:1.4.0 with a digest. */
export const EVENT: ImageEvent = { repository: 'ghcr.io/example/hello', tag: '1.4.0', digest: NEW_DIGEST };
/** The same without a digest. */
export const TAG_ONLY: ImageEvent = { repository: 'ghcr.io/example/hello', tag: '1.4.0' };

/** Joins lines with `\n` and a final newline: keeps multi-line YAML literals readable. */
export function lines(...rows: string[]): string {
  return `${rows.join('\n')}\n`;
}

/** Edits and asserts the exact output bytes; returns the result for further checks. */
export function expectEdit(
  input: string,
  expected: string,
  options: { path?: string; pinDigest?: boolean; event?: ImageEvent } = {},
): EditResult {
  const result = editImages(input, options.event ?? EVENT, {
    path: options.path ?? 'kustomization.yaml',
    pinDigest: options.pinDigest ?? false,
  });
  expect(result.refused).toEqual([]);
  expect(JSON.stringify(result.text)).toBe(JSON.stringify(expected));
  expect(result.unchanged).toBe(false);
  expect(result.changed.length).toBeGreaterThan(0);
  return result;
}

/** Edits and asserts a refusal whose reason matches `reason`, with the text untouched. */
export function expectRefusal(
  input: string,
  reason: RegExp,
  options: { path?: string; pinDigest?: boolean; event?: ImageEvent } = {},
): EditResult {
  const result = editImages(input, options.event ?? EVENT, {
    path: options.path ?? 'kustomization.yaml',
    pinDigest: options.pinDigest ?? false,
  });
  expect(result.text).toBe(input);
  expect(result.changed).toEqual([]);
  expect(result.unchanged).toBe(false);
  expect(result.refused.map((r) => r.reason).join('\n')).toMatch(reason);
  return result;
}

/** Edits and asserts that nothing changed and nothing was refused. */
export function expectUntouched(
  input: string,
  outcome: { mentions: boolean; unchanged: boolean },
  options: { path?: string; pinDigest?: boolean; event?: ImageEvent } = {},
): EditResult {
  const result = editImages(input, options.event ?? EVENT, {
    path: options.path ?? 'kustomization.yaml',
    pinDigest: options.pinDigest ?? false,
  });
  expect(result.refused).toEqual([]);
  expect(result.text).toBe(input);
  expect(result.changed).toEqual([]);
  expect({ mentions: result.mentions, unchanged: result.unchanged }).toEqual(outcome);
  return result;
}
