import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { parse as parseCsvStream } from 'csv-parse';
import { FileEncodingError } from '../errors.js';
import { parse as parseCsv } from 'csv-parse/sync';
import type { TableRow } from './table.js';
import { decodeFileStream, decodeHead, type TextEncodingName } from '../text-encoding.js';

const DELIMITERS = [',', ';', '\t'] as const;

// Enough of a file's start to hold its title rows and its header line.
const HEAD_BYTES = 64 * 1024;

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

// csv-parse handles RFC 4180 quoting, a UTF-8 BOM and CRLF; rows of the wrong width are kept
// (relaxed) so they can be reported with the others instead of stopping at the first.
const csvOptions = (delimiter: string, skipLines: number) => ({ bom: true, delimiter, from_line: skipLines + 1, info: true, relax_column_count: true, skip_empty_lines: true, trim: false }) as const;

type CsvRecord = { record: string[]; info: { lines: number } };

function csvProblem(name: string, error: unknown): string {
  const e = error as Error & { lines?: number };
  return `${name}${e.lines === undefined ? '' : ` line ${e.lines}`}: not valid CSV: ${e.message}`;
}

/**
 * Reads CSV text into records (header first), each with the line it ends on; a problem (with
 * its line) when it is not valid CSV. The first `skipLines` lines (a title) are not read at all.
 */
export function readCsvRecords(text: string, name: string, problem: (text: string) => void, skipLines = 0): TableRow[] {
  try {
    const records = parseCsv(text, csvOptions(detectDelimiter(text, skipLines), skipLines)) as unknown as CsvRecord[];
    return records.map(({ record, info }) => ({ line: info.lines, cells: record }));
  } catch (error) {
    problem(csvProblem(name, error));
    return [];
  }
}

/**
 * Streams a CSV file's records (header first) without holding the file: memory is one record
 * plus the parser's buffer. Invalid CSV ends the records with a problem naming its line.
 */
export async function* streamCsvRecords(filePath: string, name: string, problem: (text: string) => void, skipLines = 0, encoding?: TextEncodingName): AsyncGenerator<TableRow> {
  const head = await readHead(filePath);
  const parser = parseCsvStream(csvOptions(detectDelimiter(decodeHead(head, encoding), skipLines), skipLines));
  // Bytes are decoded before the parser sees them; a file that is not UTF-8 ends the records with its refusal.
  const text = Readable.from(decodeFileStream(filePath, name, head, encoding));
  text.on('error', (error) => parser.destroy(error));
  text.pipe(parser);
  try {
    for await (const { record, info } of parser as AsyncIterable<CsvRecord>) yield { line: info.lines, cells: record };
  } catch (error) {
    if (error instanceof FileEncodingError) throw error;
    problem(csvProblem(name, error));
  } finally {
    parser.destroy();
    text.destroy();
  }
}

async function readHead(filePath: string): Promise<Buffer> {
  const handle = await open(filePath, 'r');
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEAD_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
