/**
 * The diff comment and the promotion's body name the same gate checks as "not required": the
 * body from the gates it planned (enforcedGates), the comment from the configuration and the
 * freezes (gateChecks). Table: every combination of health, soak, windows, a hold, a freeze in
 * force or just lifted, at a moment the window is open and one it is closed.
 */
import { describe, expect, it } from 'vitest';
import { enforcedGates, gateChecks, planGates } from '../../src/planners/promotion-gates.js';

const NOW = Date.parse('2026-12-05T12:00:00Z');
const windows = { allow: [{ cron: '0 9 * * 1-5', durationMs: 8 * 3600_000, zone: 'UTC' }], deny: [] };
const health = {
  gate: { name: 'health' as const, state: 'passed' as const, detail: 'healthy' },
  healthySince: ['2026-12-05T11:00:00Z'],
  lines: [],
};
const freeze = { scope: 'prod', by: '@release-manager', at: '2026-12-05T10:00:00Z' };

describe('gateChecks and enforcedGates agree', () => {
  for (const reportsHealth of [false, true])
    for (const soakMs of [0, 600_000])
      for (const windowed of [false, true])
        for (const hold of [undefined, 'incident'])
          for (const frozen of ['no', 'in force', 'lifted'] as const)
            for (const now of [NOW, NOW + 12 * 3600_000])
              it(`health ${reportsHealth}, soak ${soakMs}, windows ${windowed}, hold ${String(hold)}, freeze ${frozen}, ${new Date(now).toISOString()}`, () => {
                const planned = planGates({
                  source: 'staging',
                  target: 'prod',
                  soakMs,
                  soakText: '10m',
                  rollback: false,
                  firstSeen: ['2026-12-05T11:00:00Z'],
                  hold,
                  ...(reportsHealth ? { health } : {}),
                  ...(windowed ? { windows } : {}),
                  freezes: frozen === 'in force' ? [freeze] : [],
                  freezeLifted: frozen === 'lifted',
                  now,
                }).gates;
                const fromConfig = gateChecks({
                  sourceReportsHealth: reportsHealth,
                  soakMs,
                  windows: windowed ? windows : undefined,
                  freezeInForce: frozen === 'in force',
                });
                expect(enforcedGates(planned).map((gate) => gate.name)).toEqual(fromConfig.map((gate) => gate.name));
                // a freeze is named while it is in force, not after it was lifted
                expect(fromConfig.some((gate) => gate.name === 'freeze')).toBe(frozen === 'in force');
              });
});
