/** A cell holding a number or a formatted amount ("-1,234.56", "1,500 minor units"): right-aligned. */
const NUMERIC_CELL = /^-?\d[\d,]*(\.\d+)?( minor units)?$/;

/** Pads columns of a plain-text table; numbers (amounts) are right-aligned. */
export function formatTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => NUMERIC_CELL.test(r[i] ?? '') || (r[i] ?? '') === ''));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
