/**
 * Freezes: `/escalator freeze [env|all] [for 2d | until 2027-01-04] [reason]` stops every
 * automatic merge and every `promote` command into one environment or all of them, until someone
 * unfreezes it or the time it was given runs out. Rollbacks stay allowed: a freeze stops change,
 * not the repair of a change. Pure: time comes in as `now` (milliseconds).
 */

/** The freeze gate (a `Gate` of promotion-gates.ts, spelled out here so the two files do not import each other). */
export interface FreezeGate {
  name: 'freeze';
  state: 'passed' | 'failed';
  detail: string;
}

/** One freeze as stored: where, who, when, why, until when. */
export interface Freeze {
  /** An environment name, or `*` for the whole repository. */
  scope: string;
  /** `@login` of the writer who froze. */
  by: string;
  /** When (ISO). */
  at: string;
  reason?: string;
  /** When it ends on its own (ISO); undefined: until `/escalator unfreeze`. */
  until?: string;
}

/** What `/escalator freeze` asked for, before the job knows the time. */
export interface FreezeRequest {
  /** An environment, `all`, or undefined (the whole repository). */
  environment?: string;
  /** `for 2d`: how long, in ms. */
  forMs?: number;
  /** `until 2027-01-04`: when (ISO). */
  until?: string;
  reason?: string;
}

const UNITS: Record<string, number> = { w: 7 * 86_400_000, d: 86_400_000, h: 3_600_000, m: 60_000 };

/** `2d`, `12h`, `1d12h`, `2w`, `90m`: a freeze's length; undefined when it is not one. */
export function parseFreezeLength(text: string): number | undefined {
  const match = /^(?=\d)(?:(\d{1,3})w)?(?:(\d{1,4})d)?(?:(\d{1,5})h)?(?:(\d{1,6})m)?$/.exec(text);
  if (!match) return undefined;
  const [, w, d, h, m] = match;
  const ms =
    Number(w ?? 0) * UNITS.w! + Number(d ?? 0) * UNITS.d! + Number(h ?? 0) * UNITS.h! + Number(m ?? 0) * UNITS.m!;
  return ms > 0 ? ms : undefined;
}

/**
 * `2027-01-04` (its start, UTC), `2027-01-04T09:00Z` or `2027-01-04T09:00+01:00`: when a freeze
 * ends; undefined when it is not such a time. A time without its zone is refused: "09:00" means a
 * different moment for every reader.
 */
export function parseFreezeUntil(text: string): string | undefined {
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (date) {
    const at = Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]));
    return new Date(at).toISOString().slice(0, 10) === text ? new Date(at).toISOString() : undefined;
  }
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:\d{2})$/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : new Date(at).toISOString();
}

/**
 * The words after `/escalator freeze`: `[env|all] [for <length> | until <time>] [reason…]`. The
 * first word is the scope unless it is `for` or `until`; the reason is the rest of the line.
 */
export function parseFreezeWords(
  words: readonly string[],
): { ok: true; request: FreezeRequest } | { ok: false; message: string } {
  const rest = [...words];
  const request: FreezeRequest = {};
  if (rest[0] && rest[0] !== 'for' && rest[0] !== 'until') {
    const scope = rest.shift() as string;
    if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/.test(scope))
      return { ok: false, message: `"${scope.slice(0, 40)}" is not an environment name (or all)` };
    request.environment = scope;
  }
  if (rest[0] === 'for') {
    const length = parseFreezeLength(rest[1] ?? '');
    if (length === undefined)
      return {
        ok: false,
        message: `"for" takes a length like 2d, 12h, 1d12h or 2w, not "${(rest[1] ?? '').slice(0, 40)}"`,
      };
    request.forMs = length;
    rest.splice(0, 2);
  } else if (rest[0] === 'until') {
    const until = parseFreezeUntil(rest[1] ?? '');
    if (until === undefined)
      return {
        ok: false,
        message: `"until" takes a date like 2027-01-04 (its start, UTC) or a time with its zone like 2027-01-04T09:00+01:00, not "${(rest[1] ?? '').slice(0, 40)}"`,
      };
    request.until = until;
    rest.splice(0, 2);
  }
  const reason = rest.join(' ').trim();
  if (reason.length > 200) return { ok: false, message: 'the reason of a freeze has at most 200 characters' };
  if (reason) request.reason = reason;
  return { ok: true, request };
}

/** The freezes in force at `now` on an environment: its own and the repository's, oldest first. */
export function freezesInForce(freezes: readonly Freeze[], environment: string, now: number): Freeze[] {
  return freezes
    .filter((f) => (f.scope === '*' || f.scope === environment) && (!f.until || Date.parse(f.until) > now))
    .sort((a, b) => a.at.localeCompare(b.at));
}

/** When the freezes in force on an environment all end on their own (ms); undefined: one has no end, or none is in force. */
export function freezeEndsAt(freezes: readonly Freeze[], environment: string, now: number): number | undefined {
  const active = freezesInForce(freezes, environment, now);
  if (active.length === 0 || active.some((f) => !f.until)) return undefined;
  return Math.max(...active.map((f) => Date.parse(f.until as string)));
}

/** `2027-01-04 00:00 UTC` (to the second when the seconds are not 00). */
function freezeTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, iso.slice(17, 19) === '00' ? 16 : 19)} UTC`;
}

/** `the repository` or `prod`, frozen by @alice on 2026-12-05 10:00 UTC until 2027-01-04 00:00 UTC: winter holidays. */
export function describeFreeze(freeze: Freeze): string {
  const when = freezeTime;
  const where = freeze.scope === '*' ? 'the repository' : freeze.scope;
  return `${where} frozen by ${freeze.by} on ${when(freeze.at)}${freeze.until ? ` until ${when(freeze.until)}` : ' until /escalator unfreeze'}${freeze.reason ? `: ${freeze.reason}` : ''}`;
}

/**
 * The freeze gate of a promotion into `target`: failed while a freeze is in force (a rollback
 * passes, and says so); passed when `lifted` (the re-plan after an unfreeze or an expiry, so a
 * failing check turns green); absent otherwise, so repositories that never freeze see no new check.
 */
export function planFreezeGate(input: {
  target: string;
  freezes: readonly Freeze[];
  rollback: boolean;
  lifted?: boolean;
  now: number;
}): FreezeGate[] {
  const active = freezesInForce(input.freezes, input.target, input.now);
  if (active.length === 0)
    return input.lifted ? [{ name: 'freeze', state: 'passed', detail: `no freeze on ${input.target}` }] : [];
  const what = active.map(describeFreeze).join('; ');
  if (input.rollback)
    return [{ name: 'freeze', state: 'passed', detail: `${what}; rollbacks are allowed during a freeze` }];
  return [
    {
      name: 'freeze',
      state: 'failed',
      detail: `${what}. Nothing merges into ${input.target} automatically and /escalator promote is refused; comment /escalator unfreeze ${active.some((f) => f.scope === '*') ? 'all' : input.target} to lift it`,
    },
  ];
}

/**
 * Who is asking to lift or replace freezes: their login, and whether they may lift anyone's
 * (GitHub's `maintain` or `admin` role on the repository).
 */
export interface FreezeActor {
  login: string;
  maintainer: boolean;
}

/**
 * Who may lift a freeze someone else set. A freeze is a release manager's statement that nothing
 * should change; another writer lifting it silently would undo that. As GitLab keeps deploy
 * freezes to the Maintainer role and Atlantis's `unlock` comment releases the locks of the pull
 * request it is written on, a freeze is lifted (or replaced, which could shorten it) by the
 * person who set it, or by someone with `maintain` or `admin` on the repository, who can change
 * its branch protection anyway. Everyone else waits for its end or asks one of them. A freeze
 * that has ended is anyone's to clear.
 */
export function mayLiftFreeze(freeze: Freeze, actor: FreezeActor, now: number): boolean {
  if (actor.maintainer) return true;
  if (freeze.until && Date.parse(freeze.until) <= now) return true;
  return freeze.by.toLowerCase() === `@${actor.login}`.toLowerCase();
}

/**
 * `/escalator unfreeze <scope>` (`*` with `all`: every freeze): which freezes `actor` lifts, and
 * which stay because someone else set them.
 */
export function planUnfreeze(
  freezes: readonly Freeze[],
  request: { scope: string; all: boolean },
  actor: FreezeActor,
  now: number,
): { lift: Freeze[]; kept: Freeze[] } {
  const named = freezes.filter((f) => request.all || f.scope === request.scope);
  return {
    lift: named.filter((f) => mayLiftFreeze(f, actor, now)),
    kept: named.filter((f) => !mayLiftFreeze(f, actor, now)),
  };
}

/** The sentence that tells someone who may not lift `kept` who can: the people who set them, or a maintainer or admin. */
export function describeWhoMayLift(kept: readonly Freeze[], repository: string): string {
  const setters = [...new Set(kept.map((f) => f.by))];
  const last = kept.every((f) => f.until)
    ? kept
        .map((f) => f.until as string)
        .sort()
        .at(-1)
    : undefined;
  const ends = last ? ` Otherwise ${kept.length === 1 ? 'it ends' : 'they end'} on ${freezeTime(last)}.` : '';
  return `A freeze is lifted or changed only by the person who set it (${setters.join(', ')}) or by someone with maintain or admin permission on ${repository}; ask one of them.${ends}`;
}
