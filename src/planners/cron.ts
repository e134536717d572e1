/**
 * Five-field cron expressions (`minute hour day-of-month month day-of-week`), read as POSIX cron
 * and Vixie cron read them (https://pubs.opengroup.org/onlinepubs/9799919799/utilities/crontab.html,
 * crontab(5)): `*`, numbers, ranges `a-b`, steps `*\/n` and `a-b/n`, lists `a,b`, three-letter
 * month and day names, 0 and 7 both Sunday. When both day fields are restricted a day matches
 * either of them (crontab(5): "the command will be run when either field matches"). Pure.
 */

export interface CronSchedule {
  minutes: ReadonlySet<number>;
  hours: ReadonlySet<number>;
  days: ReadonlySet<number>;
  months: ReadonlySet<number>;
  weekdays: ReadonlySet<number>;
  /** Whether the day-of-month and day-of-week fields were `*` (then only the other one decides). */
  anyDay: boolean;
  anyWeekday: boolean;
}

export type CronParse = { ok: true; schedule: CronSchedule } | { ok: false; reason: string };

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: string[];
  /** The first name stands for this number (months start at 1). */
  nameBase?: number;
}

const FIELDS: FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES, nameBase: 1 },
  { name: 'day of week', min: 0, max: 7, names: DAY_NAMES, nameBase: 0 },
];

function parseValue(text: string, spec: FieldSpec): number | string {
  if (/^\d{1,2}$/.test(text)) {
    const value = Number(text);
    if (value < spec.min || value > spec.max) return `${spec.name} ${text} is out of range (${spec.min}–${spec.max})`;
    return value;
  }
  const named = spec.names?.indexOf(text.toLowerCase()) ?? -1;
  if (named >= 0) return named + (spec.nameBase ?? 0);
  return `"${text}" is not a ${spec.name}`;
}

function parseField(text: string, spec: FieldSpec): Set<number> | string {
  const values = new Set<number>();
  for (const part of text.split(',')) {
    const [range = '', stepText, extra] = part.split('/');
    if (extra !== undefined) return `"${part}" has two steps`;
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d{1,2}$/.test(stepText) || Number(stepText) === 0)
        return `step "${stepText}" in ${spec.name} is not a positive number`;
      step = Number(stepText);
    }
    let from: number;
    let to: number;
    if (range === '*') {
      from = spec.min;
      to = spec.max === 7 ? 6 : spec.max;
    } else {
      const [a = '', b, more] = range.split('-');
      if (more !== undefined) return `"${range}" is not a range`;
      const start = parseValue(a, spec);
      if (typeof start === 'string') return start;
      from = start;
      to = start;
      if (b !== undefined) {
        const end = parseValue(b, spec);
        if (typeof end === 'string') return end;
        if (end < start) return `range ${range} in ${spec.name} runs backwards`;
        to = end;
      } else if (stepText !== undefined) to = spec.max === 7 ? 6 : spec.max;
    }
    for (let value = from; value <= to; value += step) values.add(spec.max === 7 && value === 7 ? 0 : value);
  }
  return values;
}

/** Parses `0 9 * * 1-5`; a reason says what is wrong otherwise. */
export function parseCron(text: string): CronParse {
  const fields = text.trim().split(/\s+/);
  if (fields.length !== 5)
    return {
      ok: false,
      reason: `a cron expression has 5 fields (minute hour day-of-month month day-of-week), this one has ${text.trim() === '' ? 0 : fields.length}`,
    };
  const sets: Array<Set<number>> = [];
  for (const [i, field] of fields.entries()) {
    const parsed = parseField(field, FIELDS[i]!);
    if (typeof parsed === 'string') return { ok: false, reason: parsed };
    sets.push(parsed);
  }
  const [minutes, hours, days, months, weekdays] = sets as [
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
  ];
  return {
    ok: true,
    schedule: {
      minutes,
      hours,
      days,
      months,
      weekdays,
      anyDay: fields[2]!.startsWith('*'),
      anyWeekday: fields[4]!.startsWith('*'),
    },
  };
}

/** Whether the schedule runs on a civil date (`weekday`: 0 Sunday). */
export function cronMatchesDay(schedule: CronSchedule, month: number, day: number, weekday: number): boolean {
  if (!schedule.months.has(month)) return false;
  if (schedule.anyDay && schedule.anyWeekday) return true;
  if (schedule.anyDay) return schedule.weekdays.has(weekday);
  if (schedule.anyWeekday) return schedule.days.has(day);
  return schedule.days.has(day) || schedule.weekdays.has(weekday);
}
