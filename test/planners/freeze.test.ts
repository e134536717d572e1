import { describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/planners/commands.js';
import {
  describeFreeze,
  describeWhoMayLift,
  freezeEndsAt,
  mayLiftFreeze,
  freezesInForce,
  parseFreezeUntil,
  planFreezeGate,
  planUnfreeze,
  type Freeze,
} from '../../src/planners/freeze.js';
import { planGates } from '../../src/planners/promotion-gates.js';

const now = Date.parse('2026-12-20T10:00:00Z');
const repoWide: Freeze = {
  scope: '*',
  by: '@alice',
  at: '2026-12-19T08:00:00.000Z',
  reason: 'winter holidays',
  until: '2027-01-04T00:00:00.000Z',
};
const prodOnly: Freeze = { scope: 'prod', by: '@bob', at: '2026-12-20T09:00:00.000Z' };

describe('/escalator freeze', () => {
  it.each([
    ['/escalator freeze', { name: 'freeze', request: {} }],
    ['/escalator freeze all', { name: 'freeze', request: { environment: 'all' } }],
    [
      '/escalator freeze prod for 2d incident 4711',
      { name: 'freeze', request: { environment: 'prod', forMs: 2 * 86_400_000, reason: 'incident 4711' } },
    ],
    [
      '/escalator freeze all until 2027-01-04 winter holidays',
      { name: 'freeze', request: { environment: 'all', until: '2027-01-04T00:00:00.000Z', reason: 'winter holidays' } },
    ],
    [
      '/escalator freeze until 2027-01-04T09:00+01:00',
      { name: 'freeze', request: { until: '2027-01-04T08:00:00.000Z' } },
    ],
    ['/escalator unfreeze', { name: 'unfreeze' }],
    ['/escalator unfreeze prod', { name: 'unfreeze', environment: 'prod' }],
  ])('reads %s', (body, command) => {
    expect(parseCommand(body)).toEqual({ ok: true, command });
  });

  it.each([
    ['/escalator freeze prod for two days', '"for" takes a length like 2d, 12h, 1d12h or 2w, not "two"'],
    [
      '/escalator freeze prod until 2027-02-30',
      '"until" takes a date like 2027-01-04 (its start, UTC) or a time with its zone like 2027-01-04T09:00+01:00, not "2027-02-30"',
    ],
    [
      '/escalator freeze prod until 2027-01-04T09:00',
      '"until" takes a date like 2027-01-04 (its start, UTC) or a time with its zone like 2027-01-04T09:00+01:00, not "2027-01-04T09:00"',
    ],
    ['/escalator freeze pr*d', '"pr*d" is not an environment name (or all)'],
    ['/escalator unfreeze prod staging', '/escalator unfreeze takes at most an environment (or all)'],
  ])('refuses %s', (body, message) => {
    expect(parseCommand(body)).toEqual({ ok: false, message });
  });

  it('keeps a time without a zone out: 09:00 is a different moment for every reader', () => {
    expect(parseFreezeUntil('2027-01-04T09:00')).toBeUndefined();
    expect(parseFreezeUntil('2027-01-04T09:00Z')).toBe('2027-01-04T09:00:00.000Z');
  });
});

describe('freezes in force', () => {
  it('applies a repository-wide freeze to every environment and an environment freeze to its own', () => {
    expect(freezesInForce([repoWide, prodOnly], 'prod', now)).toEqual([repoWide, prodOnly]);
    expect(freezesInForce([repoWide, prodOnly], 'staging', now)).toEqual([repoWide]);
  });
  it('expires on its own: at its end it holds nothing back', () => {
    const end = Date.parse(repoWide.until!);
    expect(freezesInForce([repoWide], 'staging', end - 1)).toEqual([repoWide]);
    expect(freezesInForce([repoWide], 'staging', end)).toEqual([]);
  });
  it('ends when the last of its freezes ends, and never while one has no end', () => {
    expect(freezeEndsAt([repoWide], 'staging', now)).toBe(Date.parse('2027-01-04T00:00:00Z'));
    expect(freezeEndsAt([repoWide, prodOnly], 'prod', now)).toBeUndefined();
    expect(freezeEndsAt([], 'prod', now)).toBeUndefined();
  });
  it('says who, when, why and until when', () => {
    expect(describeFreeze(repoWide)).toBe(
      'the repository frozen by @alice on 2026-12-19 08:00 UTC until 2027-01-04 00:00 UTC: winter holidays',
    );
    expect(describeFreeze(prodOnly)).toBe('prod frozen by @bob on 2026-12-20 09:00 UTC until /escalator unfreeze');
  });
});

describe('the freeze gate', () => {
  it('fails while frozen and says how to lift it', () => {
    expect(planFreezeGate({ target: 'prod', freezes: [prodOnly], rollback: false, now })).toEqual([
      {
        name: 'freeze',
        state: 'failed',
        detail:
          'prod frozen by @bob on 2026-12-20 09:00 UTC until /escalator unfreeze. Nothing merges into prod automatically and /escalator promote is refused; comment /escalator unfreeze prod to lift it',
      },
    ]);
  });
  it('lets a rollback through', () => {
    expect(planFreezeGate({ target: 'prod', freezes: [repoWide], rollback: true, now })[0]).toMatchObject({
      state: 'passed',
    });
  });
  it('is absent where nothing was frozen, and passes on the re-plan after a freeze ended', () => {
    expect(planFreezeGate({ target: 'prod', freezes: [], rollback: false, now })).toEqual([]);
    expect(
      planFreezeGate({
        target: 'prod',
        freezes: [repoWide],
        rollback: false,
        lifted: true,
        now: Date.parse(repoWide.until!),
      }),
    ).toEqual([{ name: 'freeze', state: 'passed', detail: 'no freeze on prod' }]);
  });
  it('goes with the other gates, with the end for the delayed re-plan', () => {
    const decision = planGates({
      source: 'staging',
      target: 'prod',
      soakMs: 0,
      soakText: '0s',
      rollback: false,
      firstSeen: [],
      hold: undefined,
      freezes: [repoWide],
      now,
    });
    expect(decision.gates.map((g) => `${g.name}:${g.state}`)).toEqual(['hold:passed', 'freeze:failed']);
    expect(decision.freezeEndsAt).toBe(Date.parse('2027-01-04T00:00:00Z'));
  });
});

describe('who may lift a freeze', () => {
  const writer = (login: string) => ({ login, maintainer: false });
  const ended: Freeze = {
    scope: 'staging',
    by: '@carol',
    at: '2026-12-01T00:00:00.000Z',
    until: '2026-12-02T00:00:00.000Z',
  };

  it.each([
    ['the writer who set it', prodOnly, writer('bob'), true],
    ['the writer who set it, whatever the case of the login', prodOnly, writer('Bob'), true],
    ['another writer', prodOnly, writer('carol'), false],
    ['a writer whose login only starts the same', prodOnly, writer('bo'), false],
    ['a maintainer or admin', prodOnly, { login: 'mia', maintainer: true }, true],
    ['anyone, once it has ended', ended, writer('dave'), true],
  ])('%s: %s', (_who, freeze, actor, may) => {
    expect(mayLiftFreeze(freeze, actor, now)).toBe(may);
  });

  it('unfreeze all lifts what the writer may lift and keeps the others', () => {
    const freezes = [repoWide, prodOnly, ended];
    expect(planUnfreeze(freezes, { scope: '*', all: true }, writer('bob'), now)).toEqual({
      lift: [prodOnly, ended],
      kept: [repoWide],
    });
    expect(planUnfreeze(freezes, { scope: 'prod', all: false }, writer('alice'), now)).toEqual({
      lift: [],
      kept: [prodOnly],
    });
    expect(planUnfreeze(freezes, { scope: 'prod', all: false }, { login: 'mia', maintainer: true }, now)).toEqual({
      lift: [prodOnly],
      kept: [],
    });
  });

  it('says who may lift it, and when it ends on its own', () => {
    expect(describeWhoMayLift([repoWide], 'example/gitops')).toBe(
      'A freeze is lifted or changed only by the person who set it (@alice) or by someone with maintain or admin permission on example/gitops; ask one of them. Otherwise it ends on 2027-01-04 00:00 UTC.',
    );
    expect(describeWhoMayLift([repoWide, prodOnly], 'example/gitops')).toBe(
      'A freeze is lifted or changed only by the person who set it (@alice, @bob) or by someone with maintain or admin permission on example/gitops; ask one of them.',
    );
  });
});
