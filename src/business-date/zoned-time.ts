// Local wall-clock time is represented as the milliseconds of that wall time read as if it were
// UTC ("wall ms"): 2026-03-29 02:30 in Berlin is Date.UTC(2026, 2, 29, 2, 30). It makes calendar
// arithmetic on local times plain integer arithmetic, and keeps the one rule below about DST
// gaps and repeats in a single place.

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The local wall-clock time of an instant in an IANA zone, as wall ms. */
export function wallClockOf(instantMs: number, timeZone: string): number {
  const parts = formatterFor(timeZone).formatToParts(new Date(instantMs));
  const field = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)!.value);
  const wholeSeconds = Date.UTC(field('year'), field('month') - 1, field('day'), field('hour'), field('minute'), field('second'));
  // Intl stops at seconds; zone offsets are whole seconds, so the milliseconds carry over unchanged.
  return wholeSeconds + (((instantMs % 1000) + 1000) % 1000);
}

/** The zone's offset from UTC at an instant, in ms (Berlin in winter: 3,600,000). */
export function offsetAt(instantMs: number, timeZone: string): number {
  return wallClockOf(instantMs, timeZone) - instantMs;
}

const DAY_MS = 86_400_000;

/**
 * The instant at which a zone's clocks show a wall time. Where that wall time does not exist
 * (the clocks jump over it: a DST gap) it is the first instant after the gap; where it occurs
 * twice (the clocks go back) it is the first occurrence. Cut-offs and schedule slots both
 * follow this rule, so a slot and the cut-off it serves never disagree about a DST night.
 */
export function instantOfWall(wallMs: number, timeZone: string): number {
  // Transitions are months apart: the offsets a day either side are the only ones in play.
  const earlier = offsetAt(wallMs - DAY_MS, timeZone);
  const later = offsetAt(wallMs + DAY_MS, timeZone);
  // The larger offset gives the earlier instant: where the wall time occurs twice, its first occurrence.
  for (const offset of earlier >= later ? [earlier, later] : [later, earlier]) {
    const candidate = wallMs - offset;
    if (wallClockOf(candidate, timeZone) === wallMs) return candidate;
  }
  // A gap: the clocks jumped forward (from `earlier` to the larger `later`) over this wall time.
  // Under the new offset the wall time would lie before the jump, under the old one after it.
  let stillOld = wallMs - later;
  let alreadyNew = wallMs - earlier;
  while (alreadyNew - stillOld > 1) {
    const middle = Math.floor((stillOld + alreadyNew) / 2);
    if (offsetAt(middle, timeZone) === earlier) stillOld = middle;
    else alreadyNew = middle;
  }
  return alreadyNew;
}

/** Wall ms of 00:00 on a YYYY-MM-DD date. */
export function wallOfDate(date: string): number {
  return Date.parse(`${date}T00:00:00Z`);
}

/** The YYYY-MM-DD date of wall ms. */
export function dateOfWall(wallMs: number): string {
  return new Date(wallMs).toISOString().slice(0, 10);
}

/** The calendar date (YYYY-MM-DD) an instant falls on in a zone. */
export function localDateOf(instantMs: number, timeZone: string): string {
  return dateOfWall(wallClockOf(instantMs, timeZone));
}

/** A YYYY-MM-DD date moved by whole days. */
export function addDays(date: string, days: number): string {
  return dateOfWall(wallOfDate(date) + days * DAY_MS);
}
