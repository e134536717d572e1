/**
 * The gates of one promotion, decided from data: whether the source environment runs the versions
 * healthy (health, when it reports it), how long it has run them (soak) and whether a person put
 * the target on hold. Pure: time comes in as `now`.
 */
import type { HealthGateDecision } from './health-gate.js';
import { freezeEndsAt, planFreezeGate, type Freeze } from './freeze.js';
import { planWindowGate, type WindowsSpec } from './windows.js';

export type GateState = 'passed' | 'pending' | 'failed';

/** Every gate a promotion may have, each posted as the check run `escalator/<name>`. */
export const gateNames = ['health', 'soak', 'hold', 'window', 'freeze'] as const;
export type GateName = (typeof gateNames)[number];

export interface Gate {
  name: GateName;
  state: GateState;
  detail: string;
}

export interface GateInput {
  /** The environment the versions come from, and the one they go to. */
  source: string;
  target: string;
  /** Milliseconds each version must have run in `source`; 0: no soak gate. */
  soakMs: number;
  /** The soak as the configuration writes it (`30m`), for the reader. */
  soakText: string;
  /** A rollback restores versions the target ran before: it waits for no soak. */
  rollback: boolean;
  /** When `source` was first seen running each promoted version (ISO time); undefined: not seen yet, counts from now. */
  firstSeen: Array<string | undefined>;
  /**
   * When the configuration changes the promotion carries landed in the source (ISO): the soak
   * counts from the last of them as well (a release travels as one; docs/configuration.md).
   */
  configLanded?: readonly string[];
  /** The reason of a hold on the target, if one is in force. */
  hold: string | undefined;
  /** Who skipped the soak of exactly these versions (`/escalator promote <env> --now`), if someone did. */
  soakSkippedBy?: string | undefined;
  /**
   * The health gate, when the source reports its health (`planHealthGate`): then soak counts from
   * when the source ran each app healthy (its `healthySince`, in the order of the apps), not from
   * `firstSeen`.
   */
  health?: HealthGateDecision | undefined;
  /** The target's promotion windows (src/planners/windows.ts); undefined: none configured. */
  windows?: WindowsSpec | undefined;
  /** Freezes recorded on the repository (src/planners/freeze.ts), in force or not. */
  freezes?: readonly Freeze[];
  /** A re-plan after an unfreeze or a freeze's end: the freeze gate reports "passed" even when none is left. */
  freezeLifted?: boolean;
  now: number;
}

export interface GateDecision {
  gates: Gate[];
  /** When the soak gate passes (`now` when it already has, or there is none). */
  readyAt: number;
  /** When a pending health gate is to be looked at again without a new report (its timeout, or a degraded spell outlasting `tolerate`). */
  healthRecheckAt?: number;
  /** When a closed window opens (the window gate is pending until then). */
  opensAt?: number;
  /** When the freezes in force on the target end on their own, if they all do. */
  freezeEndsAt?: number;
}

export function planGates(input: GateInput): GateDecision {
  const gates: Gate[] = [];
  let readyAt = input.now;
  const health = input.rollback ? undefined : input.health;
  if (health) gates.push(health.gate);
  if (input.soakMs > 0 && !input.rollback) {
    const from = [...(health ? health.healthySince : input.firstSeen), ...(input.configLanded ?? [])];
    let soakedAt = input.now;
    for (const seen of from) soakedAt = Math.max(soakedAt, (seen ? Date.parse(seen) : input.now) + input.soakMs);
    const healthy = health ? ' healthy' : '';
    // `--now` skips only a soak that has not passed: one that has passed says so, whoever asked.
    if (soakedAt > input.now && input.soakSkippedBy)
      gates.push({
        name: 'soak',
        state: 'passed',
        detail: `skipped by ${input.soakSkippedBy} with /escalator promote ${input.target} --now (the ${input.soakText} soak in ${input.source} was not waited for)`,
      });
    else {
      readyAt = soakedAt;
      gates.push(
        readyAt <= input.now
          ? { name: 'soak', state: 'passed', detail: `ran${healthy} in ${input.source} for at least ${input.soakText}` }
          : health && health.healthySince.some((since) => since === undefined)
            ? {
                name: 'soak',
                state: 'pending',
                detail: `${input.source} must run these versions healthy for ${input.soakText}, counted from when it reports them healthy`,
              }
            : {
                name: 'soak',
                state: 'pending',
                detail: `${input.source} must run these versions${healthy} for ${input.soakText}; ready at ${new Date(readyAt).toISOString()}`,
              },
      );
    }
  }
  gates.push(
    input.hold
      ? {
          name: 'hold',
          state: 'failed',
          detail: `promotion into ${input.target} is on hold (${input.hold}); comment /escalator release to lift it`,
        }
      : { name: 'hold', state: 'passed', detail: 'no hold' },
  );
  // Windows and freezes (docs/controls.md): each adds its gate only where it applies.
  const window = planWindowGate({
    target: input.target,
    windows: input.windows,
    rollback: input.rollback,
    now: input.now,
  });
  const freezes = input.freezes ?? [];
  gates.push(
    ...window.gates,
    ...planFreezeGate({
      target: input.target,
      freezes,
      rollback: input.rollback,
      lifted: input.freezeLifted ?? false,
      now: input.now,
    }),
  );
  const freezeEnd = freezeEndsAt(freezes, input.target, input.now);
  return {
    gates,
    readyAt,
    ...(health?.recheckAt !== undefined ? { healthRecheckAt: health.recheckAt } : {}),
    ...(window.opensAt !== undefined ? { opensAt: window.opensAt } : {}),
    ...(freezeEnd !== undefined ? { freezeEndsAt: freezeEnd } : {}),
  };
}

/** Whether GitHub holds a merge to the gates: the gate checks the base branch does not require. */
export interface GateEnforcement {
  branch: string;
  /** Gate check names (`escalator/soak`) the branch does not require. */
  unrequired: string[];
  /** Why the required checks could not be read (then `unrequired` may be wrong), if they could not. */
  unreadable?: string;
  /** Classic protection lets administrators merge past its required checks. */
  adminsExempt?: boolean;
}

/**
 * The gate checks a promotion into a target carries now, read from the configuration and the
 * freezes (not from a plan): health when the source reports health, soak when the target has
 * one, hold always, window when the target has windows, freeze while one is in force on it. The
 * promotion's body (from its planned gates, `enforcedGates`) and the diff comment (this) name
 * the same checks as not required.
 */
export function gateChecks(input: {
  sourceReportsHealth: boolean;
  soakMs: number;
  windows: WindowsSpec | undefined;
  freezeInForce: boolean;
}): Array<Pick<Gate, 'name'>> {
  return [
    ...(input.sourceReportsHealth ? [{ name: 'health' as const }] : []),
    ...(input.soakMs > 0 ? [{ name: 'soak' as const }] : []),
    { name: 'hold' as const },
    ...(input.windows && (input.windows.allow.length > 0 || input.windows.deny.length > 0)
      ? [{ name: 'window' as const }]
      : []),
    ...(input.freezeInForce ? [{ name: 'freeze' as const }] : []),
  ];
}

/**
 * The planned gates whose check a branch should be told to require: all but a freeze check that
 * says no freeze is in force (posted once when a freeze ends; see {@link gateChecks}).
 */
export function enforcedGates<T extends Pick<Gate, 'name' | 'state'>>(gates: readonly T[]): T[] {
  return gates.filter((gate) => gate.name !== 'freeze' || gate.state !== 'passed');
}

/** Which of `gates` the branch's required checks leave out (`contexts` as GitHub lists them). */
export function gateEnforcement(
  required: { contexts: readonly string[]; readable: boolean; reason: string | null; adminsExempt: boolean },
  branch: string,
  gates: ReadonlyArray<Pick<Gate, 'name'>>,
): GateEnforcement {
  return {
    branch,
    unrequired: gates.map((gate) => `escalator/${gate.name}`).filter((name) => !required.contexts.includes(name)),
    ...(required.readable ? {} : { unreadable: required.reason ?? 'GitHub did not say' }),
    ...(required.adminsExempt ? { adminsExempt: true } : {}),
  };
}
