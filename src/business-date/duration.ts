const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * Parses a duration such as `90s`, `45m`, `3h` or `1h30m` into milliseconds; undefined when it
 * is not one. Units: ms, s, m, h, d; a bare number is not accepted (seconds or minutes?).
 */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^(\d+(ms|s|m|h|d))+$/.test(trimmed)) return undefined;
  let total = 0;
  for (const [, amount, unit] of trimmed.matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
  return Number.isSafeInteger(total) ? total : undefined;
}

/** A duration for people: `45 s`, `5 min`, `1 h 5 min`, `2 d 3 h`. Rounds to whole seconds. */
export function formatDuration(ms: number): string {
  const seconds = Math.round(Math.abs(ms) / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  // Seconds matter for a few minutes; from ten minutes on, whole minutes say enough.
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes} min` : `${minutes} min ${seconds % 60} s`;
  if (minutes < 60) return `${Math.round(seconds / 60)} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days} d` : `${days} d ${hours % 24} h`;
}

/** Milliseconds as a configuration variable writes them: 10800000 → "3h", 5400000 → "1h30m". */
export function durationSetting(ms: number): string {
  const parts: string[] = [];
  let rest = Math.round(ms / 1000);
  for (const [unit, seconds] of [['d', 86_400], ['h', 3_600], ['m', 60], ['s', 1]] as const) {
    if (rest >= seconds) parts.push(`${Math.floor(rest / seconds)}${unit}`);
    rest %= seconds;
  }
  return parts.join('') || '0s';
}
