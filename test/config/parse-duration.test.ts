import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/config/repo-config.js';

describe('parseDuration', () => {
  const valid: [text: string, ms: number][] = [
    ['0s', 0],
    ['30s', 30_000],
    ['10m', 600_000],
    ['90m', 5_400_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['1h30m', 5_400_000],
    ['1d2h3m4s', 93_784_000],
    ['007m', 420_000],
  ];
  it.each(valid)('reads %s as %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  const invalid = ['', '30', '1.5h', '-1m', '1h 30m', '30m1h', '1H', '10ms', 'm', '1w', ' 1m', '99999999999999999999d'];
  it.each(invalid)('refuses %j and says how to write a duration', (text) => {
    expect(() => parseDuration(text)).toThrow(/^Invalid duration ".*": /);
  });

  it('says what to write', () => {
    expect(() => parseDuration('1h 30m')).toThrow(
      'Invalid duration "1h 30m": write a whole number and a unit: 30s, 10m, 2h, 1d, or combined like 1h30m.',
    );
  });
});
