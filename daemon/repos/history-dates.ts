// The `since` and `until` bounds of a commit log (docs/http-api.md section 13): an ISO 8601
// date or date-time, or one of the relative forms clients written for Sourcebot send
// ("30 days ago", "yesterday", "last week"), read the way Sourcebot reads them: counted
// back from now, calendar units (months, years) on the calendar, in UTC.

import { ServiceError } from '../errors.ts';

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;
const AGO = /^(\d{1,9})\s+(second|minute|hour|day|week|month|year)s?\s+ago$/i;
const LAST = /^last\s+(week|month|year)$/i;

type Unit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'year';
const FIXED_MS: Partial<Record<Unit, number>> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000 };

/**
 * A bound as epoch milliseconds (`name` is the parameter, for the message). A date alone
 * ("2024-05-01") is its first millisecond for either bound: `until=2024-05-01` ends at the
 * start of that day, as in Sourcebot. A date-time without a zone is UTC. `now` is the
 * instant relative forms count back from.
 */
export function parseHistoryDate(text: string, name: string, now: number): number {
  const t = text.trim();
  const bad = (): ServiceError =>
    new ServiceError(
      'INVALID_QUERY_PARAMS',
      `${name} must be an ISO 8601 date such as 2024-05-01 or 2024-05-01T12:30:00Z, "N <unit>s ago" (second to year), "yesterday" or "last week|month|year" (got ${JSON.stringify(text.slice(0, 100))})`,
    );
  const relative = relativeDate(t, now);
  if (relative !== undefined) {
    if (Number.isNaN(relative)) throw bad();
    return relative;
  }
  const m = ISO_DATE.exec(t);
  if (m === null) throw bad();
  const [year, month, day, hour = 0, minute = 0, second = 0] = m.slice(1, 7).map((v) => (v === undefined ? undefined : Number(v))) as number[];
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  let at = Date.UTC(year!, month! - 1, day!, hour, minute, second, ms);
  const check = new Date(at);
  // Date.UTC rolls over (Feb 31 is Mar 2) and reads years below 100 as 19xx: the fields
  // must survive unchanged.
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month! - 1 || check.getUTCDate() !== day! || hour > 23 || minute > 59 || second > 59)
    throw bad();
  const zone = m[8];
  if (zone !== undefined && zone.toUpperCase() !== 'Z') {
    const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
    const offset = (Number(z[2]) * 60 + Number(z[3])) * 60_000;
    at -= z[1] === '+' ? offset : -offset;
  }
  return at;
}

/** A relative form's instant; NaN when it names one Date cannot hold; undefined when `t` is not a relative form. */
function relativeDate(t: string, now: number): number | undefined {
  if (/^yesterday$/i.test(t)) return back(now, 1, 'day');
  const last = LAST.exec(t);
  if (last) return back(now, 1, last[1]!.toLowerCase() as Unit);
  const ago = AGO.exec(t);
  if (ago) return back(now, Number(ago[1]), ago[2]!.toLowerCase() as Unit);
  return undefined;
}

function back(now: number, n: number, unit: Unit): number {
  const fixed = FIXED_MS[unit];
  if (fixed !== undefined) return new Date(now - n * fixed).getTime();
  // On the calendar, like Date#setMonth: a month before March 31 is March 2 (February 31 rolls over).
  const d = new Date(now);
  if (unit === 'month') d.setUTCMonth(d.getUTCMonth() - n);
  else d.setUTCFullYear(d.getUTCFullYear() - n);
  return d.getTime();
}
