import { z } from 'zod';

/**
 * The time zones the Reports page offers: UTC, and a short list where the service's merchants are (and two
 * with daylight saving, so a day of 23 or 25 hours is handled). A day in a zone runs from its midnight to the
 * next, as the zone's clocks say.
 */
export const REPORT_ZONES = [
  'UTC',
  'Africa/Lagos',
  'Africa/Accra',
  'Africa/Nairobi',
  'Africa/Johannesburg',
  'Europe/London',
  'America/New_York',
] as const;
export type ReportZone = (typeof REPORT_ZONES)[number];

/** The longest range the page charts: a quarter, one bar per day. */
export const MAX_REPORT_DAYS = 92;

const DAY_MS = 86_400_000;
const day = z.iso.date({ error: 'Dates are YYYY-MM-DD.' });

/**
 * The Reports page's query (and its downloads'): the first and the last day, both included, and the zone the
 * days are in. Any left out (or empty, as a form sends it) is the default: the last 7 days in UTC.
 */
export const ReportQuerySchema = z.object({
  from: z.union([day, z.literal('')]).optional(),
  to: z.union([day, z.literal('')]).optional(),
  zone: z
    .union([z.enum(REPORT_ZONES, { error: 'Pick one of the offered time zones.' }), z.literal('')])
    .optional(),
});
export type ReportQuery = z.output<typeof ReportQuerySchema>;

/** A range of whole days in a zone, as the page shows it and as the ledger is read for it. */
export interface ReportRange {
  /** First and last day, both included (`YYYY-MM-DD`). */
  from: string;
  to: string;
  zone: ReportZone;
  /** Each day of the range, in order. */
  days: string[];
  /** The instant each day starts, and after the last the instant the range ends (one more than `days`). */
  bounds: number[];
}

/** The day after (or `n` days after) `date`, as a calendar date. */
export const addDays = (date: string, n: number): string =>
  new Date(Date.parse(`${date}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);

/** What the wall clock in `zone` reads at `at`, as if it were UTC (epoch ms). */
function wallClock(at: number, zone: ReportZone): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(at);
  const part = (type: string) => Number(parts.find((entry) => entry.type === type)?.value);
  return Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'), part('second'));
}

/**
 * The instant `date` begins in `zone` (its midnight; where a zone skips midnight, the first instant of the day).
 *
 * @example
 * zoneMidnight('2026-12-01', 'Africa/Lagos'); // Date.UTC(2026, 10, 30, 23) — 00:00 in Lagos is 23:00 UTC
 */
export function zoneMidnight(date: string, zone: ReportZone): number {
  const naive = Date.parse(`${date}T00:00:00Z`);
  // Two passes: the offset at a first guess, then at the instant it gives (right across a change of offset).
  let at = naive - (wallClock(naive, zone) - naive);
  at = naive - (wallClock(at, zone) - at);
  return at;
}

/**
 * The calendar date it is in `zone` at `at`.
 *
 * @example
 * dayIn(Date.UTC(2026, 10, 30, 23, 30), 'Africa/Lagos'); // '2026-12-01'
 */
export const dayIn = (at: number, zone: ReportZone): string =>
  new Date(wallClock(at, zone)).toISOString().slice(0, 10);

/** Thrown for a range the page cannot chart: its message is for the person who asked. */
export class ReportRangeError extends Error {}

/**
 * The range a query asks for, with the defaults filled in (the last 7 days, today included, in UTC).
 *
 * @example
 * reportRange({ from: '2026-12-01', to: '2026-12-07', zone: 'Africa/Lagos' }, Date.now()).bounds.length; // 8
 */
export function reportRange(query: ReportQuery, now: number): ReportRange {
  const zone = query.zone || 'UTC';
  const to = query.to || dayIn(now, zone);
  const from = query.from || addDays(to, -6);
  if (from > to) throw new ReportRangeError('The first day comes after the last.');
  const days: string[] = [];
  for (let date = from; date <= to; date = addDays(date, 1)) {
    days.push(date);
    if (days.length > MAX_REPORT_DAYS) throw new ReportRangeError(`Pick at most ${MAX_REPORT_DAYS} days.`);
  }
  return { from, to, zone, days, bounds: [...days, addDays(to, 1)].map((date) => zoneMidnight(date, zone)) };
}
