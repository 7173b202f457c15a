import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import type { AppContext } from '../app-context.js';
import type { NewReconcilingItem } from '../db/reconciling-item.repository.js';
import { UsageError } from '../errors.js';
import { checkItemRequest, type ItemFieldNames } from './items-service.js';

/** The columns of an items file: those of `items add`, in snake case. */
export const ITEM_FILE_COLUMNS = ['account', 'currency', 'date', 'kind', 'amount', 'expected_clear', 'note', 'evidence'] as const;
const REQUIRED = ['account', 'currency', 'date', 'kind', 'amount', 'note'];
const COLUMN_NAMES: ItemFieldNames = { account: 'account', currency: 'currency', date: 'date', kind: 'kind', amount: 'amount', expectedClear: 'expected_clear', note: 'note' };

/** One line of the file: its number and its fields as text. */
interface ItemLine {
  line: number;
  fields: Record<string, string>;
}

function jsonLines(text: string, name: string, problems: string[]): ItemLine[] {
  const lines: ItemLine[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    if (raw.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      problems.push(`${name} line ${i + 1}: not a JSON object`);
      return;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      problems.push(`${name} line ${i + 1}: not a JSON object`);
      return;
    }
    const fields: Record<string, string> = {};
    for (const [key, v] of Object.entries(value)) {
      if (v === null || v === undefined) continue;
      // Amounts stay as written: a JSON number would lose digits in a float.
      if (typeof v === 'string' || typeof v === 'number') fields[key] = String(v);
      else problems.push(`${name} line ${i + 1}: ${key} must be text`);
    }
    lines.push({ line: i + 1, fields });
  });
  return lines;
}

function csvLines(text: string, name: string, problems: string[]): ItemLine[] {
  let records: Array<{ record: Record<string, string>; info: { lines: number } }>;
  try {
    records = parse(text.replace(/^\uFEFF/, ''), { columns: true, skip_empty_lines: true, trim: true, info: true, relax_column_count: false }) as typeof records;
  } catch (error) {
    problems.push(`${name}: ${(error as Error).message}`);
    return [];
  }
  return records.map((r) => ({ line: r.info.lines, fields: Object.fromEntries(Object.entries(r.record).filter(([, v]) => v !== '')) }));
}

/**
 * Reads an items file (`items import`): CSV with a header, or JSON lines (`.jsonl`, `.ndjson`, or a
 * first line that is an object), the columns of `items add` — account, currency, date, kind,
 * amount, expected_clear, note, evidence. Every line is checked as `items add` checks its options;
 * any bad line refuses the whole file (a UsageError naming the file and each bad line).
 */
export async function readItemsFile(ctx: AppContext, filePath: string, actor: string): Promise<NewReconcilingItem[]> {
  const name = path.basename(filePath);
  let text: string;
  try {
    text = await readFile(filePath, 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read ${filePath}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}.`);
  }
  const problems: string[] = [];
  const isJson = /\.(jsonl|ndjson)$/i.test(name) || text.replace(/^\uFEFF/, '').trimStart().startsWith('{');
  const lines = isJson ? jsonLines(text, name, problems) : csvLines(text, name, problems);
  const items: NewReconcilingItem[] = [];
  for (const { line, fields } of lines) {
    const at = `${name} line ${line}`;
    const unknown = Object.keys(fields).filter((k) => !(ITEM_FILE_COLUMNS as readonly string[]).includes(k));
    if (unknown.length > 0) {
      problems.push(`${at}: unknown column ${unknown.map((k) => `"${k}"`).join(', ')} (allowed: ${ITEM_FILE_COLUMNS.join(', ')})`);
      continue;
    }
    const missing = REQUIRED.filter((k) => fields[k] === undefined || fields[k].trim() === '');
    if (missing.length > 0) {
      problems.push(`${at}: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing`);
      continue;
    }
    try {
      items.push(
        checkItemRequest(
          ctx,
          { account: fields.account!, currency: fields.currency!, date: fields.date!, kind: fields.kind!, amount: fields.amount!, expectedClear: fields.expected_clear, note: fields.note, evidence: fields.evidence, actor },
          COLUMN_NAMES,
        ),
      );
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      problems.push(`${at}: ${error.message}`);
    }
  }
  if (problems.length > 0) throw new UsageError(`${name} was not imported (nothing written):\n  ${problems.join('\n  ')}`);
  if (items.length === 0) throw new UsageError(`${name} holds no items: expected a header ${ITEM_FILE_COLUMNS.join(',')} and at least one line.`);
  return items;
}
