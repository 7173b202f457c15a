/** A header and its data rows, as the CSV and spreadsheet readers give them. */
export interface Table {
  header: { line: number; cells: string[] };
  rows: TableRow[];
}

/** One data row: the 1-based line (or spreadsheet row) and its cells as read. */
export interface TableRow {
  line: number;
  cells: unknown[];
}

/** A row left out on purpose (a title above the header, a footer, a total row), said in the summary. */
export interface SkippedRow {
  line: number;
  unit: 'line' | 'row';
  why: string;
}

// Words that open a total row in the exports finance teams send (German, English, French, Italian,
// Dutch, Spanish, Nordic): "Summe", "Total EUR", "Gesamt:", "Grand total".
const TOTAL_WORDS = /^(summe|gesamtsumme|zwischensumme|gesamt|insgesamt|total|totals|grand total|subtotal|sum|somme|totale|totaal|suma|summa|i alt)\b/iu;

/** The text that marks a row as a total row: its first non-empty cell, when it opens with a total word. */
export function totalRowLabel(cells: readonly unknown[]): string | undefined {
  const first = cells.find((c) => !(typeof c === 'string' && c.trim() === '') && c !== null && c !== undefined);
  return typeof first === 'string' && TOTAL_WORDS.test(first.trim()) ? first.trim() : undefined;
}

/**
 * Takes the footer off a table's rows: the last `skipFooter` rows (`--skip-footer N`), then any
 * total rows left at the end ("Summe", "Total"), each recorded as skipped. A total word in the
 * middle of the data is not a footer and stays, to be refused as the bad row it is.
 */
export function dropFooter(rows: TableRow[], skipFooter: number, unit: 'line' | 'row', skipped: SkippedRow[]): TableRow[] {
  const kept = rows.slice(0, Math.max(0, rows.length - skipFooter));
  const footer: SkippedRow[] = rows.slice(kept.length).map((r) => ({ line: r.line, unit, why: 'footer (--skip-footer)' }));
  const totals: SkippedRow[] = [];
  for (let label = kept.length > 0 ? totalRowLabel(kept[kept.length - 1]!.cells) : undefined; label !== undefined; label = kept.length > 0 ? totalRowLabel(kept[kept.length - 1]!.cells) : undefined) {
    totals.unshift({ line: kept.pop()!.line, unit, why: `a total row (${JSON.stringify(label)})` });
  }
  skipped.push(...totals, ...footer);
  return kept;
}
