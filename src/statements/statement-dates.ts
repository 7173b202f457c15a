/** `YYYY-MM-DD` when it names a day of the calendar (no 31 November, 29 February only in leap years), else undefined. */
export function calendarDate(iso: string): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  if (match === null) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (month < 1 || month > 12 || day < 1) return undefined;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day <= days ? iso : undefined;
}
