import { afterAll, describe, expect, it } from 'vitest';
import {
  closeHostileChild,
  hostileCalls,
  hostileChildPid,
  PLANTED_CALL,
  PLANTED_EXIT,
  runHostileCase,
  type CallResult,
} from './support/hostile-content.js';

/**
 * The child process of test/fuzz/content.test.ts serves case after case; a call that hangs or
 * crashes it must still be recorded as today (`timeout`, `crashed` with its exit), and the calls
 * and cases after it must answer from a fresh process. The `planted-hang` and `planted-crash`
 * cases of the child break PLANTED_CALL (the second call) and answer the others.
 */
const BOUND_MS = 1_000;
/** A small real case, answered by every call. */
const SMALL = 'duplicate-keys';

function outcomes(results: CallResult[]): string[] {
  return results.map((result) => `${result.call}: ${result.outcome}`);
}

/** Every call of a case answered. */
const allAnswered = hostileCalls.map((call) => `${call}: answered`);

/** Every call answered except PLANTED_CALL, which came to `outcome`. */
function plantedOutcomes(outcome: CallResult['outcome']): string[] {
  return hostileCalls.map((call) => `${call}: ${call === PLANTED_CALL ? outcome : 'answered'}`);
}

describe('the hostile-content child process, reused from case to case', () => {
  afterAll(closeHostileChild);

  it('serves several cases from one process', async () => {
    const first = await runHostileCase(SMALL, BOUND_MS);
    const pid = hostileChildPid();
    const second = await runHostileCase(SMALL, BOUND_MS);
    expect(pid).toBeTypeOf('number');
    expect(hostileChildPid()).toBe(pid);
    expect(outcomes(first)).toEqual(allAnswered);
    expect(second.map(({ ms: _ms, ...rest }) => rest)).toEqual(first.map(({ ms: _ms, ...rest }) => rest));
  });

  it('records a call past the bound as timeout, then answers the rest and the next case from a fresh process', async () => {
    await runHostileCase(SMALL, BOUND_MS);
    const before = hostileChildPid();
    const hung = await runHostileCase('planted-hang', BOUND_MS);
    const after = hostileChildPid();
    expect(outcomes(hung)).toEqual(plantedOutcomes('timeout'));
    const timeout = hung.find((result) => result.call === PLANTED_CALL);
    expect(timeout?.detail).toBe(`no answer within ${BOUND_MS} ms; killed`);
    expect(timeout?.ms).toBeGreaterThanOrEqual(BOUND_MS);
    expect(after).toBeTypeOf('number');
    expect(after).not.toBe(before);

    const next = await runHostileCase(SMALL, BOUND_MS);
    expect(outcomes(next)).toEqual(allAnswered);
    expect(hostileChildPid()).toBe(after);
  });

  it('records a call that kills the process as crashed with its exit, then answers from a fresh process', async () => {
    await runHostileCase(SMALL, BOUND_MS);
    const before = hostileChildPid();
    const crashed = await runHostileCase('planted-crash', BOUND_MS);
    const after = hostileChildPid();
    expect(outcomes(crashed)).toEqual(plantedOutcomes('crashed'));
    expect(crashed.find((result) => result.call === PLANTED_CALL)?.detail).toBe(
      `process died (exit ${PLANTED_EXIT}): planted crash in ${PLANTED_CALL}`,
    );
    expect(after).toBeTypeOf('number');
    expect(after).not.toBe(before);

    const next = await runHostileCase(SMALL, BOUND_MS);
    expect(outcomes(next)).toEqual(allAnswered);
    expect(hostileChildPid()).toBe(after);
  });

  it('starts a fresh process for the first case after a hang ended the last call of a case', async () => {
    const hung = await runHostileCase('planted-hang', BOUND_MS, [PLANTED_CALL]);
    expect(outcomes(hung)).toEqual([`${PLANTED_CALL}: timeout`]);
    expect(hostileChildPid()).toBeUndefined();
    const next = await runHostileCase(SMALL, BOUND_MS);
    expect(outcomes(next)).toEqual(allAnswered);
    expect(hostileChildPid()).toBeTypeOf('number');
  });

  it('refuses a case it does not know, with what to name, and keeps serving', async () => {
    await runHostileCase(SMALL, BOUND_MS);
    const pid = hostileChildPid();
    await expect(runHostileCase('no-such-case', BOUND_MS)).rejects.toThrow(
      /knows no hostile case named "no-such-case"; name one of hostileCases/,
    );
    expect(hostileChildPid()).toBe(pid);
  });

  it('leaves no process behind once closed', async () => {
    await runHostileCase(SMALL, BOUND_MS);
    const pid = hostileChildPid();
    await closeHostileChild();
    expect(hostileChildPid()).toBeUndefined();
    expect(() => process.kill(pid!, 0)).toThrow(/ESRCH/);
  });
});
