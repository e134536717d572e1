/**
 * `/escalator promote <env> --now` skips a soak that has not passed, and says so; a soak that had
 * already passed when the promotion was planned reads as passed, not as "not waited for".
 */
import { describe, expect, it } from 'vitest';
import { planGates } from '../../src/planners/promotion-gates.js';

const hour = 3_600_000;
const base = {
  source: 'staging',
  target: 'prod',
  soakMs: hour,
  soakText: '1h',
  rollback: false,
  hold: undefined,
  soakSkippedBy: '@alice',
};

describe('the soak gate of a promotion asked for with --now', () => {
  it('says the soak passed when it had, whoever asked for --now', () => {
    const now = Date.parse('2026-12-05T12:00:00Z');
    const decision = planGates({ ...base, firstSeen: [new Date(now - 2 * hour).toISOString()], now });
    expect(decision.gates[0]).toEqual({ name: 'soak', state: 'passed', detail: 'ran in staging for at least 1h' });
    expect(decision.readyAt).toBe(now);
  });

  it('says the soak was skipped when it had not passed', () => {
    const now = Date.parse('2026-12-05T12:00:00Z');
    const decision = planGates({ ...base, firstSeen: [new Date(now - hour / 2).toISOString()], now });
    expect(decision.gates[0]).toEqual({
      name: 'soak',
      state: 'passed',
      detail: 'skipped by @alice with /escalator promote prod --now (the 1h soak in staging was not waited for)',
    });
    expect(decision.readyAt).toBe(now);
  });
});
