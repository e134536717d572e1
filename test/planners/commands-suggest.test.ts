/**
 * A mistyped command is answered with the command it was most likely meant as, and the help a
 * person reads names every option a command takes.
 */
import { describe, expect, it } from 'vitest';
import { commandHelp, nearestCommand, parseCommand } from '../../src/planners/commands.js';

describe('a mistyped /escalator command', () => {
  it.each([
    ['/escalator frezze', 'unknown command "frezze"; did you mean /escalator freeze?'],
    ['/escalator unfrezee all', 'unknown command "unfrezee"; did you mean /escalator unfreeze?'],
    ['/escalator promot staging', 'unknown command "promot"; did you mean /escalator promote?'],
    ['/escalator Rollbak prod', 'unknown command "Rollbak"; did you mean /escalator rollback?'],
    ['/escalator hodl', 'unknown command "hodl"; did you mean /escalator hold?'],
    ['/escalator frobnicate', 'unknown command "frobnicate"'],
    ['/escalator deploy', 'unknown command "deploy"'],
  ])('%s → %s', (body, message) => {
    expect(parseCommand(body)).toEqual({ ok: false, message });
  });

  it('suggests nothing when two commands are as near, or a short name is far', () => {
    expect(nearestCommand('dif')).toBe('diff');
    expect(nearestCommand('pln')).toBe('plan');
    expect(nearestCommand('hep')).toBe('help');
    expect(nearestCommand('xx')).toBeUndefined();
    expect(nearestCommand('freeze')).toBeUndefined();
    expect(nearestCommand('a'.repeat(500))).toBeUndefined();
  });

  it('lists --now in the help, with what it does', () => {
    expect(commandHelp).toContain(
      '`/escalator promote <env> [app] [--now]` — open or refresh the promotion into `env` now; `--now` also skips its soak',
    );
  });
});
