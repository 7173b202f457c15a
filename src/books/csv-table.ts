import { parse as parseCsv } from 'csv-parse/sync';
import type { Table } from './table.js';

const DELIMITERS = [',', ';', '\t'] as const;

/**
 * The field separator of a CSV file, from its header line: the candidate (comma, semicolon, tab)
 * that occurs most often outside quotes. The header, not a data line, decides, because a data
 * line of a semicolon file with decimal commas (`21/11/2026;EUR;1.234,56`) holds commas too.
 */
export function detectDelimiter(text: string, skipLines = 0): string {
  const firstLine = text.replace(/^\uFEFF/, '').split(/\r?\n/).slice(skipLines).find((l) => l.trim() !== '') ?? '';
  const counts = new Map<string, number>(DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const char of firstLine) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && counts.has(char)) counts.set(char, counts.get(char)! + 1);
  }
  let best: string = ',';
  for (const d of DELIMITERS) if (counts.get(d)! > counts.get(best)!) best = d;
  return best;
}

/**
 * Reads CSV text into a header and rows; a problem (with its line) when it is not valid CSV.
 * The first `skipLines` lines (a title above the header) are not read at all.
 */
export function readCsvTable(text: string, name: string, problems: string[], skipLines = 0): Table | undefined {
  let records: Array<{ record: string[]; info: { lines: number } }>;
  try {
    // csv-parse handles RFC 4180 quoting, a UTF-8 BOM and CRLF; rows of the wrong width are
    // kept (relaxed) so they can be reported with the others instead of stopping at the first.
    records = parseCsv(text, { bom: true, delimiter: detectDelimiter(text, skipLines), from_line: skipLines + 1, info: true, relax_column_count: true, skip_empty_lines: true, trim: false }) as unknown as typeof records;
  } catch (error) {
    const e = error as Error & { lines?: number };
    problems.push(`${name}${e.lines === undefined ? '' : ` line ${e.lines}`}: not valid CSV: ${e.message}`);
    return undefined;
  }
  const [header, ...data] = records;
  if (header === undefined) return undefined;
  return { header: { line: header.info.lines, cells: header.record }, rows: data.map(({ record, info }) => ({ line: info.lines, cells: record })) };
}
