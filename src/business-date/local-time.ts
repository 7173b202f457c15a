import { offsetAt, wallClockOf } from './zoned-time.js';

// Every time a person reads (console, CLI messages, e-mail, digests, the lockout message) is
// written by this one helper, in RECON_TIMEZONE with its zone, so nobody has to convert UTC in
// their head. Machines (JSON, logs, the database) keep UTC ISO instants.

const abbreviations = new Map<string, Intl.DateTimeFormat[]>();

function abbreviationFormatters(timeZone: string): Intl.DateTimeFormat[] {
  let list = abbreviations.get(timeZone);
  if (list === undefined) {
    // en-US knows the American abbreviations (EST), en-GB the European ones (CET, BST); where
    // neither has a name ("GMT+9"), the numeric offset is written instead.
    list = ['en-US', 'en-GB'].map((locale) => new Intl.DateTimeFormat(locale, { timeZone, timeZoneName: 'short' }));
    abbreviations.set(timeZone, list);
  }
  return list;
}

/** The zone's offset at an instant as "+01:00" / "-05:00" ("+00:00" for UTC). */
export function offsetText(instant: Date, timeZone: string): string {
  const minutes = Math.round(offsetAt(instant.getTime(), timeZone) / 60_000);
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** The zone's short name at an instant ("CET", "CEST", "EST", "UTC"), or its offset where it has none ("+09:00"). */
export function zoneLabel(instant: Date, timeZone: string): string {
  if (timeZone === 'UTC' || timeZone === 'Etc/UTC') return 'UTC';
  for (const formatter of abbreviationFormatters(timeZone)) {
    const name = formatter.formatToParts(instant).find((p) => p.type === 'timeZoneName')?.value;
    if (name !== undefined && /^[A-Z]{2,5}$/.test(name)) return name;
  }
  return offsetText(instant, timeZone);
}

export interface LocalTimeOptions {
  /** Include seconds (an audit trail); minutes otherwise. */
  seconds?: boolean;
  /** Leave the date out (a time on the date the sentence already names). */
  timeOnly?: boolean;
}

/**
 * An instant as a person in `timeZone` reads it, with its zone:
 * formatLocalTime(new Date('2026-11-27T05:29:00Z'), 'Europe/Berlin') → "2026-11-27 06:29 CET".
 */
export function formatLocalTime(instant: Date, timeZone: string, options: LocalTimeOptions = {}): string {
  const wall = new Date(wallClockOf(instant.getTime(), timeZone)).toISOString();
  const time = wall.slice(11, options.seconds === true ? 19 : 16);
  return `${options.timeOnly === true ? '' : `${wall.slice(0, 10)} `}${time} ${zoneLabel(instant, timeZone)}`;
}

/** formatLocalTime for an ISO instant carried as text (an event's JSON); text that is no instant is returned as it was. */
export function formatLocalTimeText(iso: string, timeZone: string, options?: LocalTimeOptions): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : formatLocalTime(new Date(ms), timeZone, options);
}
