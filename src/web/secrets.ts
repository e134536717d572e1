import { createHash, timingSafeEqual } from 'node:crypto';

/** Compare a presented secret with the configured one in constant time (both hashed first, so their lengths leak nothing). */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b) && given.length === expected.length;
}
