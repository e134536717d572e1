/**
 * Promotion windows: when an environment takes changes automatically. Each window opens at the
 * times of a cron expression, read in an IANA time zone, and stays open for a duration. An
 * environment with `allow` windows is open only inside one of them; a `deny` window closes it
 * whatever the allowed ones say (denials win). Pure: time comes in as `now` (milliseconds).
 *
 * Wall-clock times that a daylight-saving change skips or repeats are read as Temporal's
 * `disambiguation: 'compatible'` reads them (https://tc39.es/proposal-temporal/docs/ambiguity.html):
 * a skipped time (02:30 on the spring-forward night) starts when the clock has moved past the
 * gap, a repeated one (02:30 on the fall-back night) the first time it happens.
 */
import { cronMatchesDay, parseCron, type CronSchedule } from './cron.js';

/** One window as the configuration writes it, its duration already in milliseconds. */
export interface WindowSpec {
  cron: string;
  durationMs: number;
  /** IANA time zone name (`Europe/Berlin`); `UTC` when the configuration names none. */
  zone: string;
}

export interface WindowsSpec {
  allow: readonly WindowSpec[];
  deny: readonly WindowSpec[];
}

/** Whether the environment takes changes at `now`, and when that changes. */
export interface WindowState {
  open: boolean;
  /** When it opens next (closed), in ms; undefined: not within a year (then it never opens). */
  opensAt?: number;
  /** The wall time of `opensAt` in the zone of the window that opens it: `Mon 09:00 Europe/Berlin`. */
  opensText?: string;
  /** When it closes (open), in ms; undefined: not within a year. */
  closesAt?: number;
  closesText?: string;
  /** The denial in force, when one closes it: its cron and zone. */
  deniedBy?: WindowSpec;
}

const DAY_MS = 86_400_000;
/** How far ahead an opening is looked for; a window that does not open within it never opens. */
export const WINDOW_HORIZON_MS = 400 * DAY_MS;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      weekday: 'short',
    });
    formatters.set(zone, format);
  }
  return format;
}

/** A reason when `zone` is not an IANA time zone this runtime knows. */
export function checkTimeZone(zone: string): string | undefined {
  try {
    formatter(zone);
    return undefined;
  } catch {
    return `"${zone}" is not an IANA time zone`;
  }
}

interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: number;
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** The wall time an instant shows in a zone. */
export function wallTime(instant: number, zone: string): WallTime {
  const parts: Record<string, string> = {};
  for (const part of formatter(zone).formatToParts(new Date(instant))) parts[part.type] = part.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: WEEKDAYS.indexOf(parts.weekday ?? ''),
  };
}

/** How far the zone's wall clock is ahead of UTC at an instant, in ms. */
function offsetAt(instant: number, zone: string): number {
  const wall = wallTime(instant, zone);
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/** The instant a wall time names in a zone ('compatible': a skipped time moves forward by the gap, a repeated one is the earlier). */
export function instantOf(
  wall: { year: number; month: number; day: number; hour: number; minute: number },
  zone: string,
): number {
  const local = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute);
  // The offsets a day either side: around a change they differ, and one of the two candidates fits.
  const before = offsetAt(local - DAY_MS, zone);
  const after = offsetAt(local + DAY_MS, zone);
  const earlier = local - Math.max(before, after);
  const later = local - Math.min(before, after);
  for (const candidate of [earlier, later]) if (candidate + offsetAt(candidate, zone) === local) return candidate;
  // In a gap: no instant shows this wall time; take the one the earlier offset would name, which
  // lies after the gap (the clock skipped forward past it).
  return local - before;
}

/** The start instants of a window's occurrences whose local date lies in [from − 1 day, to + 1 day]. */
function starts(schedule: CronSchedule, zone: string, from: number, to: number): number[] {
  const result: number[] = [];
  const first = wallTime(from - DAY_MS, zone);
  let civil = Date.UTC(first.year, first.month - 1, first.day);
  const last = wallTime(to + DAY_MS, zone);
  const end = Date.UTC(last.year, last.month - 1, last.day);
  const hours = [...schedule.hours].sort((a, b) => a - b);
  const minutes = [...schedule.minutes].sort((a, b) => a - b);
  for (; civil <= end; civil += DAY_MS) {
    const date = new Date(civil);
    const [year, month, day, weekday] = [
      date.getUTCFullYear(),
      date.getUTCMonth() + 1,
      date.getUTCDate(),
      date.getUTCDay(),
    ];
    if (!cronMatchesDay(schedule, month, day, weekday)) continue;
    // Most days have one offset from midnight to midnight: then no lookup per time of day.
    const offset = offsetAt(civil - offsetAt(civil, zone), zone);
    const steady = offset === offsetAt(civil + DAY_MS - offset, zone);
    for (const hour of hours)
      for (const minute of minutes)
        result.push(
          steady
            ? civil + hour * 3_600_000 + minute * 60_000 - offset
            : instantOf({ year, month, day, hour, minute }, zone),
        );
  }
  return result;
}

interface Occurrence {
  start: number;
  end: number;
  window: WindowSpec;
}

/** Every occurrence of the windows that overlaps [from, to]. */
function occurrences(windows: readonly WindowSpec[], from: number, to: number): Occurrence[] {
  const result: Occurrence[] = [];
  for (const window of windows) {
    const parsed = parseCron(window.cron);
    if (!parsed.ok || checkTimeZone(window.zone)) continue;
    for (const start of starts(parsed.schedule, window.zone, from - window.durationMs, to))
      if (start <= to && start + window.durationMs > from)
        result.push({ start, end: start + window.durationMs, window });
  }
  return result.sort((a, b) => a.start - b.start);
}

/** A stretch of time, with the zone of the window each end comes from (for the sentence). */
interface Span {
  start: number;
  end: number;
  startZone: string;
  endZone: string;
}

/** The union of occurrences as sorted, disjoint spans. */
function union(list: readonly Occurrence[]): Span[] {
  const spans: Span[] = [];
  for (const o of list) {
    const last = spans[spans.length - 1];
    if (last && o.start <= last.end) {
      if (o.end > last.end) Object.assign(last, { end: o.end, endZone: o.window.zone });
    } else spans.push({ start: o.start, end: o.end, startZone: o.window.zone, endZone: o.window.zone });
  }
  return spans;
}

/** `from` minus `minus`: both sorted and disjoint; a cut takes the zone of the span that cuts. */
function subtract(from: readonly Span[], minus: readonly Span[]): Span[] {
  const result: Span[] = [];
  let j = 0;
  for (const span of from) {
    let current: Span | undefined = { ...span };
    while (j < minus.length && minus[j]!.end <= current.start) j++;
    for (let k = j; current && k < minus.length && minus[k]!.start < current.end; k++) {
      const cut = minus[k]!;
      if (cut.start > current.start) result.push({ ...current, end: cut.start, endZone: cut.startZone });
      current = cut.end < current.end ? { ...current, start: cut.end, startZone: cut.endZone } : undefined;
    }
    if (current && current.start < current.end) result.push(current);
  }
  return result;
}

/** `Mon 09:00 Europe/Berlin`, and with the date when it is not within the coming week. */
export function describeWallTime(instant: number, zone: string, now: number): string {
  const wall = wallTime(instant, zone);
  const time = `${String(wall.hour).padStart(2, '0')}:${String(wall.minute).padStart(2, '0')}`;
  const day = WEEKDAYS[wall.weekday] ?? '';
  const date = instant - now < 6 * DAY_MS ? day : `${day} ${wall.day} ${MONTHS[wall.month - 1]} ${wall.year}`;
  return `${date} ${time} ${zone}`;
}

/**
 * Whether the environment takes changes at `now`, when it next opens (or closes). Looked for
 * within `WINDOW_HORIZON_MS`, a week at a time, in time linear in the occurrences.
 */
export function planWindow(spec: WindowsSpec, now: number): WindowState {
  if (spec.allow.length === 0 && spec.deny.length === 0) return { open: true };
  const longest = Math.max(0, ...[...spec.allow, ...spec.deny].map((w) => w.durationMs));
  const step = 7 * DAY_MS;
  let openNow: boolean | undefined;
  let deniedBy: WindowSpec | undefined;
  for (let from = now; from < now + WINDOW_HORIZON_MS; from += step) {
    const to = Math.min(from + step, now + WINDOW_HORIZON_MS);
    const deny = occurrences(spec.deny, from - longest, to);
    const allowed =
      spec.allow.length === 0
        ? [{ start: from - longest, end: to + longest, startZone: 'UTC', endZone: 'UTC' }]
        : union(occurrences(spec.allow, from - longest, to));
    const open = subtract(allowed, union(deny));
    const at = open.find((span) => span.start <= from && from < span.end);
    if (openNow === undefined) {
      openNow = at !== undefined;
      deniedBy = deny.find((o) => o.start <= now && now < o.end)?.window;
    }
    if (openNow) {
      if (!at) return { open: true, closesAt: from, closesText: describeWallTime(from, 'UTC', now) };
      if (at.end < to) return { open: true, closesAt: at.end, closesText: describeWallTime(at.end, at.endZone, now) };
    } else {
      const next = at ?? open.find((span) => span.start >= from && span.start < to);
      if (next) {
        const opensAt = Math.max(next.start, from);
        return {
          open: false,
          opensAt,
          opensText: describeWallTime(opensAt, next.startZone, now),
          ...(deniedBy ? { deniedBy } : {}),
        };
      }
    }
  }
  return { open: openNow ?? true, ...(deniedBy ? { deniedBy } : {}) };
}

/** A reason when a window cannot work: a bad cron or zone. */
export function checkWindow(window: { cron: string; zone: string }): string | undefined {
  const parsed = parseCron(window.cron);
  if (!parsed.ok) return `invalid cron "${window.cron}": ${parsed.reason}`;
  return checkTimeZone(window.zone);
}

/**
 * What is wrong with a set of windows as a whole, judged from `now` over a year: an allowed
 * window that never opens (a date that does not exist, like 30 February), or denials that leave no
 * allowed moment at all.
 */
export function checkWindows(spec: WindowsSpec, now: number, horizonMs = WINDOW_HORIZON_MS): string[] {
  const problems: string[] = [];
  if ([...spec.allow, ...spec.deny].some((w) => checkWindow(w) !== undefined)) return problems;
  const occurs = (window: WindowSpec): boolean => {
    for (let from = now; from < now + horizonMs; from += 30 * DAY_MS)
      if (occurrences([window], from, from + 30 * DAY_MS).length > 0) return true;
    return false;
  };
  for (const [i, window] of spec.allow.entries())
    if (!occurs(window)) problems.push(`allow[${i}] (${window.cron}) never opens: no date matches it`);
  for (const [i, window] of spec.deny.entries())
    if (!occurs(window)) problems.push(`deny[${i}] (${window.cron}) never closes anything: no date matches it`);
  if (problems.length === 0 && spec.allow.length > 0) {
    // Judged from `now` and from a year later, so that a window opening only on 29 February is
    // seen within one of the two (each looks WINDOW_HORIZON_MS ahead).
    const never = [now, now + 366 * DAY_MS].every((from) => {
      const state = planWindow(spec, from);
      return !state.open && state.opensAt === undefined;
    });
    if (never) problems.push('the deny windows cover every allowed window: the environment never opens');
  }
  return problems;
}

/** The window gate's sentence: why a promotion waits, or until when it may merge. */
export function windowSentence(environment: string, state: WindowState): string {
  if (state.open)
    return state.closesText
      ? `${environment} is inside an allowed window until ${state.closesText}`
      : `${environment} is inside an allowed window`;
  const why = state.deniedBy
    ? `a deny window (${state.deniedBy.cron}, ${state.deniedBy.zone}) is in force`
    : 'it is outside every allowed window';
  return state.opensText
    ? `${environment} takes no automatic merge now: ${why}; opens ${state.opensText}`
    : `${environment} takes no automatic merge now: ${why}, and no window opens within a year; fix windows in .github/escalator.yml`;
}

/** The window gate (a `Gate` of promotion-gates.ts, spelled out so the two files do not import each other). */
export interface WindowGate {
  name: 'window';
  state: 'passed' | 'pending';
  detail: string;
}

/**
 * The window gate of a promotion into `target`: none when the environment has no windows;
 * pending outside them, with when it opens (`opensAt`, for the delayed re-plan); passed inside.
 * A rollback passes: windows pace change, they do not stop a repair.
 */
export function planWindowGate(input: {
  target: string;
  windows: WindowsSpec | undefined;
  rollback: boolean;
  now: number;
}): { gates: WindowGate[]; opensAt?: number } {
  if (!input.windows || (input.windows.allow.length === 0 && input.windows.deny.length === 0)) return { gates: [] };
  const state = planWindow(input.windows, input.now);
  if (state.open) return { gates: [{ name: 'window', state: 'passed', detail: windowSentence(input.target, state) }] };
  if (input.rollback)
    return {
      gates: [
        {
          name: 'window',
          state: 'passed',
          detail: `${windowSentence(input.target, state)}; rollbacks merge outside windows`,
        },
      ],
    };
  return {
    gates: [{ name: 'window', state: 'pending', detail: windowSentence(input.target, state) }],
    ...(state.opensAt !== undefined ? { opensAt: state.opensAt } : {}),
  };
}
