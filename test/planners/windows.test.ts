import { describe, expect, it } from 'vitest';
import { parseCron } from '../../src/planners/cron.js';
import { planGates, type GateInput } from '../../src/planners/promotion-gates.js';
import {
  checkWindows,
  instantOf,
  planWindow,
  planWindowGate,
  type WindowSpec,
  type WindowsSpec,
} from '../../src/planners/windows.js';

const H = 3_600_000;
const D = 24 * H;
const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());
const weekdays9to17Berlin: WindowSpec = { cron: '0 9 * * 1-5', durationMs: 8 * H, zone: 'Europe/Berlin' };

describe('cron', () => {
  it.each([
    ['0 9 * * 1-5', true],
    ['*/15 9-17 * * mon-fri', true],
    ['0 0 1,15 jan,jul *', true],
    ['0 9 * * 7', true],
    ['0 9 * *', false],
    ['60 9 * * *', false],
    ['0 24 * * *', false],
    ['0 9 * * 1-', false],
    ['0 9 5-1 * *', false],
    ['0 9 * * */0', false],
    ['0 9 * foo *', false],
  ])('%s is %s', (text, ok) => {
    expect(parseCron(text).ok).toBe(ok);
  });
  it('says why a cron is refused', () => {
    expect(parseCron('0 9 * *')).toEqual({
      ok: false,
      reason: 'a cron expression has 5 fields (minute hour day-of-month month day-of-week), this one has 4',
    });
    expect(parseCron('0 25 * * *')).toEqual({ ok: false, reason: 'hour 25 is out of range (0–23)' });
  });
  it('reads 7 as Sunday, as crontab(5) does', () => {
    const parsed = parseCron('0 9 * * 7');
    expect(parsed.ok && [...parsed.schedule.weekdays]).toEqual([0]);
  });
});

describe('wall times across daylight-saving changes', () => {
  it('takes a skipped time as the instant after the gap (Berlin, spring forward)', () => {
    expect(iso(instantOf({ year: 2026, month: 3, day: 29, hour: 2, minute: 30 }, 'Europe/Berlin'))).toBe(
      '2026-03-29T01:30:00.000Z',
    );
  });
  it('takes a repeated time as its first occurrence (Berlin, fall back)', () => {
    expect(iso(instantOf({ year: 2026, month: 10, day: 25, hour: 2, minute: 30 }, 'Europe/Berlin'))).toBe(
      '2026-10-25T00:30:00.000Z',
    );
  });
  it('keeps a window on the wall clock: 09:00 Berlin is 08:00Z in winter and 07:00Z in summer', () => {
    // Friday 27 March 2026 after closing; the clocks change on Sunday the 29th.
    expect(planWindow({ allow: [weekdays9to17Berlin], deny: [] }, at('2026-03-27T17:00:00Z'))).toEqual({
      open: false,
      opensAt: at('2026-03-30T07:00:00Z'),
      opensText: 'Mon 09:00 Europe/Berlin',
    });
    expect(planWindow({ allow: [weekdays9to17Berlin], deny: [] }, at('2026-10-23T17:00:00Z'))).toEqual({
      open: false,
      opensAt: at('2026-10-26T08:00:00Z'),
      opensText: 'Mon 09:00 Europe/Berlin',
    });
  });
  it('counts a window over the night the clocks go back by the wall clock, not by hours', () => {
    // 01:00–04:00 New York on 1 November 2026 lasts 3h of duration from its start, whatever the wall says.
    const night: WindowSpec = { cron: '0 1 1 11 *', durationMs: 3 * H, zone: 'America/New_York' };
    const state = planWindow({ allow: [night], deny: [] }, at('2026-11-01T05:30:00Z'));
    expect(state).toEqual({
      open: true,
      closesAt: at('2026-11-01T08:00:00Z'),
      closesText: 'Sun 03:00 America/New_York',
    });
  });
});

describe('planWindow with a simulated clock', () => {
  const spec: WindowsSpec = { allow: [weekdays9to17Berlin], deny: [] };
  const table: Array<[string, string, ReturnType<typeof planWindow>]> = [
    [
      'Saturday night',
      '2026-12-05T03:40:00Z',
      { open: false, opensAt: at('2026-12-07T08:00:00Z'), opensText: 'Mon 09:00 Europe/Berlin' },
    ],
    [
      'Monday 08:59 Berlin',
      '2026-12-07T07:59:00Z',
      { open: false, opensAt: at('2026-12-07T08:00:00Z'), opensText: 'Mon 09:00 Europe/Berlin' },
    ],
    [
      'Monday 09:00 Berlin',
      '2026-12-07T08:00:00Z',
      { open: true, closesAt: at('2026-12-07T16:00:00Z'), closesText: 'Mon 17:00 Europe/Berlin' },
    ],
    [
      'Friday 16:59 Berlin',
      '2026-12-11T15:59:00Z',
      { open: true, closesAt: at('2026-12-11T16:00:00Z'), closesText: 'Fri 17:00 Europe/Berlin' },
    ],
    [
      'Friday 17:00 Berlin',
      '2026-12-11T16:00:00Z',
      { open: false, opensAt: at('2026-12-14T08:00:00Z'), opensText: 'Mon 09:00 Europe/Berlin' },
    ],
  ];
  it.each(table)('%s', (_name, now, expected) => {
    expect(planWindow(spec, at(now))).toEqual(expected);
  });

  it('lets denials win, and names the day when the opening is more than a week away', () => {
    const holidays: WindowSpec = { cron: '0 0 19 12 *', durationMs: 16 * D, zone: 'Europe/Berlin' };
    const state = planWindow({ allow: [weekdays9to17Berlin], deny: [holidays] }, at('2026-12-21T10:00:00Z'));
    expect(state).toEqual({
      open: false,
      opensAt: at('2027-01-04T08:00:00Z'),
      opensText: 'Mon 4 Jan 2027 09:00 Europe/Berlin',
      deniedBy: holidays,
    });
  });

  it('with deny windows only, is open outside them', () => {
    const friday: WindowSpec = { cron: '0 15 * * fri', durationMs: 63 * H, zone: 'UTC' };
    expect(planWindow({ allow: [], deny: [friday] }, at('2026-12-10T12:00:00Z'))).toEqual({
      open: true,
      closesAt: at('2026-12-11T15:00:00Z'),
      closesText: 'Fri 15:00 UTC',
    });
    expect(planWindow({ allow: [], deny: [friday] }, at('2026-12-12T12:00:00Z'))).toEqual({
      open: false,
      opensAt: at('2026-12-14T06:00:00Z'),
      opensText: 'Mon 06:00 UTC',
      deniedBy: friday,
    });
  });

  it('joins windows in different zones', () => {
    const tokyo: WindowSpec = { cron: '0 9 * * 1-5', durationMs: 2 * H, zone: 'Asia/Tokyo' };
    // Monday 00:00Z is 09:00 in Tokyo: Tokyo's window opens before Berlin's.
    expect(planWindow({ allow: [weekdays9to17Berlin, tokyo], deny: [] }, at('2026-12-06T12:00:00Z'))).toEqual({
      open: false,
      opensAt: at('2026-12-07T00:00:00Z'),
      opensText: 'Mon 09:00 Asia/Tokyo',
    });
  });
});

describe('checkWindows', () => {
  const from = at('2027-01-01T00:00:00Z');
  it('finds a window that never opens', () => {
    expect(checkWindows({ allow: [{ cron: '0 9 30 2 *', durationMs: H, zone: 'UTC' }], deny: [] }, from)).toEqual([
      'allow[0] (0 9 30 2 *) never opens: no date matches it',
    ]);
  });
  it('finds denials that cover every allowed window', () => {
    expect(
      checkWindows(
        {
          allow: [{ cron: '0 9 * * 1-5', durationMs: H, zone: 'UTC' }],
          deny: [{ cron: '0 0 * * *', durationMs: D, zone: 'UTC' }],
        },
        from,
      ),
    ).toEqual(['the deny windows cover every allowed window: the environment never opens']);
  });
  it('accepts 29 February (it comes in leap years) and a sound set', () => {
    expect(
      checkWindows(
        { allow: [{ cron: '0 9 29 2 *', durationMs: H, zone: 'UTC' }], deny: [] },
        at('2027-06-01T00:00:00Z'),
      ),
    ).toEqual([]);
    expect(checkWindows({ allow: [weekdays9to17Berlin], deny: [] }, from)).toEqual([]);
  });
});

describe('the window gate', () => {
  const base: GateInput = {
    source: 'staging',
    target: 'prod',
    soakMs: 0,
    soakText: '0s',
    rollback: false,
    firstSeen: [],
    hold: undefined,
    now: at('2026-12-05T03:40:00Z'),
  };
  it('adds no gate where no window is configured', () => {
    expect(planGates(base).gates.map((g) => g.name)).toEqual(['hold']);
  });
  it('is pending outside the windows, with the opening for the delayed re-plan', () => {
    const decision = planGates({ ...base, windows: { allow: [weekdays9to17Berlin], deny: [] } });
    expect(decision.gates[1]).toEqual({
      name: 'window',
      state: 'pending',
      detail: 'prod takes no automatic merge now: it is outside every allowed window; opens Mon 09:00 Europe/Berlin',
    });
    expect(iso(decision.opensAt)).toBe('2026-12-07T08:00:00.000Z');
  });
  it('lets a rollback through', () => {
    expect(
      planWindowGate({
        target: 'prod',
        windows: { allow: [weekdays9to17Berlin], deny: [] },
        rollback: true,
        now: base.now,
      }),
    ).toEqual({
      gates: [
        {
          name: 'window',
          state: 'passed',
          detail:
            'prod takes no automatic merge now: it is outside every allowed window; opens Mon 09:00 Europe/Berlin; rollbacks merge outside windows',
        },
      ],
    });
  });
});
