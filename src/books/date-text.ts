import { isCalendarDate } from '../clock.js';
import { BOOKS_DATE_FORMATS } from '../config/index.js';

/** The orders of day, month and year a books file may write its dates in (`--date-format`). */
export const DATE_FORMATS = BOOKS_DATE_FORMATS;
export type DateFormat = (typeof DATE_FORMATS)[number];

const PATTERNS: Record<DateFormat, { pattern: RegExp; order: ['y' | 'm' | 'd', 'y' | 'm' | 'd', 'y' | 'm' | 'd'] }> = {
  'YYYY-MM-DD': { pattern: /^(\d{4})-(\d{2})-(\d{2})$/, order: ['y', 'm', 'd'] },
  // Exports often drop leading zeros (1/2/2026); the separators and the year's four digits are kept strict.
  'DD/MM/YYYY': { pattern: /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/, order: ['d', 'm', 'y'] },
  'MM/DD/YYYY': { pattern: /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/, order: ['m', 'd', 'y'] },
  'YYYY/MM/DD': { pattern: /^(\d{4})\/(\d{1,2})\/(\d{1,2})$/, order: ['y', 'm', 'd'] },
  'DD.MM.YYYY': { pattern: /^(\d{1,2})\.(\d{1,2})\.(\d{4})$/, order: ['d', 'm', 'y'] },
  'DD-MM-YYYY': { pattern: /^(\d{1,2})-(\d{1,2})-(\d{4})$/, order: ['d', 'm', 'y'] },
};

/** Whether `text` names one of the supported date formats (case-insensitive: `dd/mm/yyyy` too). */
export function parseDateFormat(text: string): DateFormat | undefined {
  const upper = text.trim().toUpperCase();
  return DATE_FORMATS.find((f) => f === upper);
}

/** A date written in `format` as YYYY-MM-DD; undefined when it is not a real date in that form. */
export function readDate(text: string, format: DateFormat): string | undefined {
  const { pattern, order } = PATTERNS[format];
  const match = pattern.exec(text);
  if (!match) return undefined;
  const part = (key: 'y' | 'm' | 'd') => match[order.indexOf(key) + 1]!;
  const iso = `${part('y')}-${part('m').padStart(2, '0')}-${part('d').padStart(2, '0')}`;
  return isCalendarDate(iso) ? iso : undefined;
}
