import { describe, expect, it } from 'vitest';
import { parseRepoConfig } from '../../src/config/repo-config.js';

const config = (...windowLines: string[]): string =>
  [
    'environments:',
    '  - name: staging',
    '    paths: ["apps/*/staging"]',
    '    from: registry',
    '  - name: prod',
    '    paths: ["apps/*/prod"]',
    '    from: staging',
    '    windows:',
    ...windowLines,
    '',
  ].join('\n');

describe('windows in .github/escalator.yml', () => {
  it('accepts allow and deny windows, the zone defaulting to UTC', () => {
    const result = parseRepoConfig(
      config(
        '      allow:',
        '        - { cron: "0 9 * * 1-5", duration: 8h, zone: Europe/Berlin }',
        '      deny:',
        '        - { cron: "0 0 19 12 *", duration: 16d }',
      ),
    );
    expect(result.ok && result.config.environments[1]?.windows).toEqual({
      allow: [{ cron: '0 9 * * 1-5', duration: '8h', zone: 'Europe/Berlin' }],
      deny: [{ cron: '0 0 19 12 *', duration: '16d', zone: 'UTC' }],
    });
  });

  it('accepts a window on 29 February, which opens in leap years only', () => {
    expect(parseRepoConfig(config('      allow:', '        - { cron: "0 9 29 2 *", duration: 8h }')).ok).toBe(true);
  });

  it('reports each problem with its line: unknown zone, bad cron, a window that never opens, a repeat, denials covering all', () => {
    const result = parseRepoConfig(
      config(
        '      allow:',
        '        - cron: "0 9 * * 1-5"',
        '          duration: 8h',
        '          zone: Europe/Berlinn',
        '        - cron: "0 9 * *"',
        '          duration: 8h',
        '        - cron: "0 9 30 2 *"',
        '          duration: 1h',
      ),
    );
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problems.map((p) => `${p.line}: ${p.message}`)).toEqual([
      '12: "Europe/Berlinn" is not an IANA time zone',
      '13: invalid cron "0 9 * *": a cron expression has 5 fields (minute hour day-of-month month day-of-week), this one has 4',
    ]);
    const never = parseRepoConfig(
      config(
        '      allow:',
        '        - cron: "0 9 * * 1-5"',
        '          duration: 8h',
        '        - cron: "0 9 30 2 *"',
        '          duration: 1h',
        '        - cron: "0 9 * * 1-5"',
        '          duration: 8h',
      ),
    );
    expect(!never.ok && never.problems.map((p) => `${p.line}: ${p.message}`)).toEqual([
      '12: allow[1] (0 9 30 2 *) never opens: no date matches it',
      '14: this window repeats allow[0]',
    ]);
    const covered = parseRepoConfig(
      config(
        '      allow:',
        '        - { cron: "0 9 * * 1-5", duration: 8h }',
        '      deny:',
        '        - { cron: "0 0 * * *", duration: 1d }',
      ),
    );
    expect(!covered.ok && covered.problems.map((p) => `${p.line}: ${p.message} (${p.hint})`)).toEqual([
      '11: the deny windows cover every allowed window: the environment never opens (shorten or remove a deny window, or add an allow window outside them)',
    ]);
  });
});
