/**
 * What Escalator remembers after rolling an (environment, app) back, and what it decides from it.
 * Pure: the record comes in as data, time as `now`.
 *
 * A rollback sticks: the versions it took out (V) are not proposed to that environment again on
 * Escalator's own (a push, a health report, a soak's end, a window opening) until a different
 * version runs in the source environment, or a person comments `/escalator promote`. An
 * environment that stays degraded on the versions it was rolled back to is not rolled back again
 * and again: Escalator halts it (a hold on that app, which `/escalator release` lifts) and says so
 * once.
 */
import type { PinnedVersion } from './versions.js';

/** The record of the last rollback of one (environment, app), kept in Redis (`RollbackStore`). */
export interface RollbackRecord {
  environment: string;
  app: string;
  /** The versions the environment ran when it was rolled back (V): what is not proposed again on its own. */
  from: PinnedVersion[];
  /** The versions it goes back to. */
  to: PinnedVersion[];
  /** Why: the degradation report (automatic) or who asked (`/escalator rollback`). */
  because: string;
  /** The degraded spell it answers (ISO), for an automatic rollback. */
  spell?: string;
  /** When Escalator decided it (ISO). */
  at: string;
  /**
   * - `proposed`: the rollback pull request is written (open, or merged since)
   * - `refused`: it could not be written (`refused` says why)
   * - `halted`: the environment stayed degraded on `to`; promotions of this app into it are held
   */
  state: 'proposed' | 'refused' | 'halted';
  /** The commit that last brought `to` into the environment, and the pull requests behind it when known. */
  restores?: { sha: string; sources: string[] };
  /** The rollback pull request, once opened. */
  pull?: number;
  /** Why the rollback could not be written, in a sentence that says what to do. */
  refused?: string;
  /** The halt's sentence, once halted. */
  halted?: string;
}

/** Whether two sets of versions are the same: same images and tags, and the same digest where both name one. */
export function sameVersions(a: readonly PinnedVersion[], b: readonly PinnedVersion[]): boolean {
  if (a.length === 0 || a.length !== b.length) return false;
  const byName = new Map(b.map((version) => [version.name, version]));
  return a.every((version) => {
    const other = byName.get(version.name);
    return (
      other !== undefined &&
      other.tag === version.tag &&
      (version.digest === undefined || other.digest === undefined || other.digest === version.digest)
    );
  });
}

/** `1.2.0` (one image), `1.2.0, 0.3.1` (several). */
export function tagsText(versions: readonly PinnedVersion[]): string {
  return [...new Set(versions.map((version) => version.tag))].join(', ');
}

/** "Roll back hello in staging: 1.2.0 → 1.1.0": the title of a rollback pull request and the first line of its commit. */
export function renderRollbackTitle(
  environment: string,
  app: string,
  rows: ReadonlyArray<{ app: string; from?: string; to: string }>,
): string {
  const apps = [...new Set(rows.map((row) => row.app))];
  const who = app || (apps.length === 1 ? apps[0] : `${apps.length} apps`);
  const from = [...new Set(rows.map((row) => row.from ?? '(unset)'))];
  const to = [...new Set(rows.map((row) => row.to))];
  if (from.length === 1 && to.length === 1) return `Roll back ${who} in ${environment}: ${from[0]} → ${to[0]}`;
  return `Roll back ${who} in ${environment}`;
}

/** What a promotion that Escalator did not open for a person does about the last rollback of its app. */
export type RollbackGuard =
  /** No rollback on record, or nothing proposed: go on. */
  | { kind: 'none' }
  /** The source runs the versions rolled back from: do not propose them; `reason` for the log and the plan. */
  | { kind: 'block'; reason: string }
  /** The record no longer holds (a person asked, or the source runs other versions): forget it and go on. */
  | { kind: 'lift'; reason: string };

/**
 * Whether a promotion into `record.environment` may carry `proposed` (what the source runs now).
 * `person`: who commented `/escalator promote`, when a person asked.
 */
export function planRollbackGuard(input: {
  record: RollbackRecord | undefined;
  source: string;
  proposed: readonly PinnedVersion[];
  person?: string | undefined;
}): RollbackGuard {
  const { record } = input;
  if (!record) return { kind: 'none' };
  const app = record.app || record.environment;
  if (input.person)
    return {
      kind: 'lift',
      reason: `@${input.person} asked for this promotion; the rollback of ${app} in ${record.environment} from ${tagsText(record.from)} no longer holds it back`,
    };
  if (input.proposed.length === 0) return { kind: 'none' };
  if (sameVersions(input.proposed, record.from))
    return {
      kind: 'block',
      reason: `${record.environment} was rolled back from ${app} ${tagsText(record.from)} at ${record.at.slice(0, 16).replace('T', ' ')} UTC; Escalator proposes ${tagsText(record.from)} again only when ${input.source} runs another version, or when a person comments /escalator promote ${record.environment}${record.app ? ` ${record.app}` : ''}`,
    };
  return {
    kind: 'lift',
    reason: `${input.source} runs ${app} ${tagsText(input.proposed)} now, not the ${tagsText(record.from)} ${record.environment} was rolled back from`,
  };
}

/** What an automatic rollback does, once its degraded spell has outlasted `tolerate`. */
export type AutomaticRollback =
  /** Roll back (again, when the record is about older versions). */
  | { kind: 'rollback' }
  /** The environment stays degraded on the versions it was rolled back to: halt, and say `message` once. */
  | { kind: 'halt'; message: string; hold: string }
  /** Halted already: nothing more is said or done. */
  | { kind: 'halted' };

/**
 * An environment degraded on the versions Escalator rolled it back to is halted, not rolled back
 * further: the cause is not the version (a node, a quota, a shared config), and rolling back again
 * and again would only move versions around while it lasts.
 */
export function planAutomaticRollback(input: {
  record: RollbackRecord | undefined;
  /** What the environment runs now (the newest landing recorded). */
  running: readonly PinnedVersion[];
  /** The degradation in one sentence (`rollbackReason`'s first half, or the agent's words). */
  degradation: string;
}): AutomaticRollback {
  const { record } = input;
  if (!record || !sameVersions(input.running, record.to)) return { kind: 'rollback' };
  if (record.state === 'halted') return { kind: 'halted' };
  const app = record.app || record.environment;
  const command = `/escalator release ${record.environment}${record.app ? ` ${record.app}` : ''}`;
  return {
    kind: 'halt',
    hold: `Escalator: ${app} stayed degraded in ${record.environment} after the rollback from ${tagsText(record.from)} to ${tagsText(record.to)}`,
    message: `${app} ${tagsText(record.to)} is degraded in ${record.environment} too, after the rollback from ${tagsText(record.from)} (${input.degradation}). The cause is not the version, so Escalator does not roll back again: promotions of ${app} into ${record.environment} are halted until a person looks. Comment \`${command}\` to lift the halt; ${tagsText(record.from)} is proposed again only when a person comments \`/escalator promote ${record.environment}${record.app ? ` ${record.app}` : ''}\` or another version runs in the environment it comes from.`,
  };
}

/**
 * The sentence a promotion out of the rolled-back environment adds to its failed health gate,
 * so the person looking at the halted pull request sees what became of the rollback.
 */
export function rollbackNote(
  record: RollbackRecord | undefined,
  running: readonly PinnedVersion[],
): string | undefined {
  if (!record) return undefined;
  const app = record.app || record.environment;
  if (record.state === 'refused' && sameVersions(running, record.from))
    return `the automatic rollback to ${app} ${tagsText(record.to)} could not be written: ${record.refused ?? 'no reason was recorded'}`;
  if (record.state === 'halted' && sameVersions(running, record.to))
    return `halted after rolling back from ${tagsText(record.from)}: comment /escalator release ${record.environment}${record.app ? ` ${record.app}` : ''} to lift it`;
  return undefined;
}
