import { describe, expect, it } from 'vitest';
import { planGates, type GateInput } from '../../src/planners/promotion-gates.js';

const now = Date.parse('2026-12-04T12:00:00Z');
const base: GateInput = {
  source: 'staging',
  target: 'prod',
  soakMs: 30 * 60_000,
  soakText: '30m',
  rollback: false,
  firstSeen: [],
  hold: undefined,
  now,
};
const minutesAgo = (minutes: number): string => new Date(now - minutes * 60_000).toISOString();

describe('planGates', () => {
  const cases: Array<[string, Partial<GateInput>, ReturnType<typeof planGates>]> = [
    [
      'every version ran long enough: soak passes, ready now',
      { firstSeen: [minutesAgo(45), minutesAgo(31)] },
      {
        gates: [
          { name: 'soak', state: 'passed', detail: 'ran in staging for at least 30m' },
          { name: 'hold', state: 'passed', detail: 'no hold' },
        ],
        readyAt: now,
      },
    ],
    [
      'the youngest version decides when soak passes',
      { firstSeen: [minutesAgo(45), minutesAgo(10)] },
      {
        gates: [
          {
            name: 'soak',
            state: 'pending',
            detail: 'staging must run these versions for 30m; ready at 2026-12-04T12:20:00.000Z',
          },
          { name: 'hold', state: 'passed', detail: 'no hold' },
        ],
        readyAt: now + 20 * 60_000,
      },
    ],
    [
      'a version not seen yet counts from now',
      { firstSeen: [undefined] },
      {
        gates: [
          {
            name: 'soak',
            state: 'pending',
            detail: 'staging must run these versions for 30m; ready at 2026-12-04T12:30:00.000Z',
          },
          { name: 'hold', state: 'passed', detail: 'no hold' },
        ],
        readyAt: now + 30 * 60_000,
      },
    ],
    [
      'no soak configured: only the hold gate',
      { soakMs: 0, soakText: '0s', firstSeen: [undefined] },
      { gates: [{ name: 'hold', state: 'passed', detail: 'no hold' }], readyAt: now },
    ],
    [
      'a rollback waits for no soak',
      { rollback: true, firstSeen: [undefined] },
      { gates: [{ name: 'hold', state: 'passed', detail: 'no hold' }], readyAt: now },
    ],
    [
      'a hold fails the hold gate and says how to lift it',
      { firstSeen: [minutesAgo(60)], hold: 'held by @release-managers' },
      {
        gates: [
          { name: 'soak', state: 'passed', detail: 'ran in staging for at least 30m' },
          {
            name: 'hold',
            state: 'failed',
            detail: 'promotion into prod is on hold (held by @release-managers); comment /escalator release to lift it',
          },
        ],
        readyAt: now,
      },
    ],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => {
      expect(planGates({ ...base, ...input })).toEqual(expected);
    });
  }
});
