import { createHash } from 'node:crypto';
import path from 'node:path';
import { sql, type Transaction } from 'kysely';
import type { AppContext } from '../app-context.js';
import { allAccountNames } from '../config/index.js';
import type { BooksFormatName, Database } from '../db/database.types.js';
import { recordBooksOrigin, type BooksOrigin } from '../db/books-origin.repository.js';
import { activeMatchesOf, undoMatches } from '../db/entry-match.repository.js';
import { InputFileError, UsageError } from '../errors.js';
import { runMatching, MATCHED_BY_RULES, type RuleMatch } from '../matching/index.js';
import { currencyDecimals } from '../money/format-amount.js';
import { todayOf } from '../reconciliation/business-dates.js';
import { reconcileOwedDates, resolveAccountNames } from '../reconciliation/reconciliation-service.js';
import { findLocks, lockedDateError } from '../signoff/date-lock.js';
import type { TextEncodingName } from '../text-encoding.js';
import { openRawRows, readBalance, readCurrency, readDateField, resolveAccount, show, type BalanceFileOptions, type ProblemList, type RawRow } from './books-file.js';
import { ENTRY_FIELD_SET, ENTRY_FIELDS, type ColumnMap } from './column-map.js';
import type { DateFormat } from './date-text.js';
import { loadImportProfile, resolveBooksFormat } from './import-profile.js';
import type { SkippedRow } from './table.js';

export interface EntriesImportOptions {
  account?: string;
  amounts?: 'major' | 'minor';
  decimalMark?: 'comma' | 'point';
  dateFormat?: DateFormat;
  map?: ColumnMap;
  skipRows?: number;
  skipFooter?: number;
  /** The text encoding of a CSV or JSON lines file without a byte order mark (as for balances). */
  encoding?: TextEncodingName;
  dryRun?: boolean;
}

/** One validated line of a books entries file. */
export interface EntryRow {
  line: number;
  account: string;
  currency: string;
  bookingDate: string;
  valueDate: string | null;
  /** Signed minor units. */
  amount: bigint;
  reference: string | null;
  description: string | null;
  entryId: string | null;
  /** The ledger's line id, else a hash of the line's fields and its occurrence number in the file. */
  entryKey: string;
}

/** A roll-forward of the books: previous closing + the entries of the date = the date's closing. */
export interface BooksRollForward {
  account: string;
  currency: string;
  businessDate: string;
  previousDate: string;
  previousClosing: bigint;
  entries: bigint;
  closing: bigint;
  /** closing − (previous closing + entries): zero when the books roll forward. */
  residual: bigint;
}

export interface EntriesImportResult {
  source: string;
  format: BooksFormatName;
  dryRun: boolean;
  rows: number;
  inserted: number;
  changed: number;
  unchanged: number;
  accounts: string[];
  firstDate: string;
  lastDate: string;
  importId: number | null;
  skipped: SkippedRow[];
  /** The books' roll-forward over the dates of the file where balances exist on both ends. */
  rollForward: BooksRollForward[];
  /** The matches the rules made with the new entries (or would make). */
  matches: RuleMatch[];
  reconciledDates: number;
  reconcileFailure?: string;
}

class DryRunEnded {
  constructor(readonly result: EntriesImportResult) {}
}

/** The stable key of a line without a ledger id: its fields, and how many identical lines came before it. */
export function entryKeyOf(row: Omit<EntryRow, 'entryKey' | 'line'>, occurrence: number): string {
  if (row.entryId !== null) return `id:${row.entryId}`;
  const fields = [row.account, row.currency, row.bookingDate, row.valueDate ?? '', row.amount.toString(), row.reference ?? '', row.description ?? ''];
  return `h:${createHash('sha256').update(JSON.stringify(fields)).digest('hex').slice(0, 32)}:${occurrence}`;
}

function text(value: unknown, field: string, at: string, problems: string[]): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value === 'string') return value.trim() === '' ? null : value.trim();
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'object' && value !== null && 'value' in value && typeof (value as { value: unknown }).value === 'string') return (value as { value: string }).value;
  problems.push(`${at}: ${field} ${show(value)} must be text`);
  return null;
}

/** Validates one raw line of an entries file. */
export function validateEntryRow({ line, unit, fields, balanceColumn }: RawRow, name: string, options: BalanceFileOptions): { row: Omit<EntryRow, 'entryKey'> } | { problems: string[] } {
  const at = `${name} ${unit} ${line}`;
  const problems: string[] = [];
  const unknown = Object.keys(fields).filter((f) => !(ENTRY_FIELDS as readonly string[]).includes(f));
  if (unknown.length > 0) problems.push(`${at}: unknown field ${unknown.map((f) => `"${f}"`).join(', ')} (allowed: ${ENTRY_FIELDS.join(', ')})`);
  for (const field of ENTRY_FIELD_SET.required) if (fields[field] === undefined || fields[field] === '' || fields[field] === null) problems.push(`${at}: ${field} is missing`);
  const format = options.dateFormat ?? 'YYYY-MM-DD';
  const bookingDate = readDateField(fields.booking_date, format, at, problems, 'booking_date');
  const valueDate = readDateField(fields.value_date, format, at, problems, 'value_date') ?? null;
  if (bookingDate !== undefined && options.notAfter !== undefined && bookingDate > options.notAfter.date) {
    problems.push(`${at}: booking_date ${bookingDate} is after the current business date (${options.notAfter.date} in ${options.notAfter.timezone}); books cannot hold a day that has not begun`);
  }
  const currency = readCurrency(fields.currency, at, problems);
  const amount = readBalance(fields.amount, currency, options, at, problems, balanceColumn ?? 'amount', 'amount');
  const account = resolveAccount(fields.account, options, at, problems);
  const reference = text(fields.reference, 'reference', at, problems);
  const description = text(fields.description, 'description', at, problems);
  const entryId = text(fields.entry_id, 'entry_id', at, problems);
  if (problems.length > 0 || account === undefined || bookingDate === undefined || currency === undefined || amount === undefined) return { problems };
  return { row: { line, account, currency, bookingDate, valueDate, amount, reference, description, entryId } };
}

/**
 * Imports a books entries file (`ledger import FILE --entries`): every line validated first, then
 * in one transaction the new lines stored (a line already stored under its key is unchanged, or
 * changed when its ledger id comes with other fields), the matches of changed lines undone and
 * the matching run again over the accounts. All or nothing. The dates are reconciled after.
 */
export async function importEntriesFile(ctx: AppContext, filePath: string, options: EntriesImportOptions = {}): Promise<EntriesImportResult> {
  if (options.account !== undefined) resolveAccountNames(ctx.config, options.account);
  const accountName = options.account ?? (ctx.config.accounts.length === 1 && ctx.config.bankAccounts.length === 0 ? ctx.config.accounts[0]!.name : undefined);
  const saved = accountName === undefined ? undefined : await loadImportProfile(ctx, accountName);
  // A saved profile's column map names balance columns: entries take only its number and date settings.
  const format = resolveBooksFormat(ctx.config, { ...options, map: undefined }, saved === undefined ? undefined : { ...saved.profile, map: undefined });
  const known = allAccountNames(ctx.config);
  const fileOptions: BalanceFileOptions = { ...format, map: options.map, account: options.account, knownAccounts: known, notAfter: todayOf(ctx) };
  const opened = await openRawRows(filePath, fileOptions, ENTRY_FIELD_SET);
  const rows = await validEntryRows(opened.rows, opened.name, opened.unit, fileOptions, opened.problems);
  if (rows.length === 0) throw new InputFileError(`${opened.name} holds no entries: expected a header booking_date,currency,amount[,account,value_date,reference,description,entry_id] and at least one line.`, [`${opened.name}: no rows`]);
  for (const r of rows) if (currencyDecimals(r.currency) === null && format.amounts === 'major') throw new UsageError(`${r.currency} has no ISO 4217 decimals: import its entries with --amounts minor.`);
  return storeEntryRows(ctx, rows, { source: path.basename(filePath), format: opened.format, amounts: format.amounts, skipped: opened.skipped, dryRun: options.dryRun === true });
}

/**
 * Validates every raw line of an entries file or query (all of them: one problem per bad line,
 * thrown together) and gives each its stable key; a ledger id given twice for an account is refused.
 */
export async function validEntryRows(raw: AsyncIterable<RawRow> | Iterable<RawRow>, name: string, unit: 'line' | 'row', options: BalanceFileOptions, problems: ProblemList): Promise<EntryRow[]> {
  const rows: EntryRow[] = [];
  const occurrences = new Map<string, number>();
  const idLines = new Map<string, number>();
  for await (const one of raw) {
    const checked = validateEntryRow(one, name, options);
    if ('problems' in checked) {
      for (const p of checked.problems) problems.add(p);
      continue;
    }
    const r = checked.row;
    if (r.entryId !== null) {
      const idKey = `${r.account}\u0000${r.entryId}`;
      const first = idLines.get(idKey);
      if (first !== undefined) {
        problems.add(`${name} ${unit} ${r.line}: duplicate of ${unit} ${first} (account ${r.account}, entry_id ${r.entryId})`);
        continue;
      }
      idLines.set(idKey, r.line);
    }
    const base = entryKeyOf(r, 0);
    const n = occurrences.get(base) ?? 0;
    occurrences.set(base, n + 1);
    rows.push({ ...r, entryKey: r.entryId === null ? entryKeyOf(r, n) : base });
  }
  problems.throwIfAny(name);
  return rows;
}

/**
 * Stores validated entries as one books import, whether they came from a file or the ledger's
 * query: in one transaction, refused whole on a signed-off date, new lines stored (a line already
 * stored under its key is unchanged, or changed when its ledger id comes with other fields), the
 * matches of changed lines undone and the matching run again. The dates are reconciled after.
 */
export async function storeEntryRows(
  ctx: AppContext,
  rows: readonly EntryRow[],
  how: { source: string; format: BooksFormatName; amounts: 'major' | 'minor'; skipped?: SkippedRow[]; dryRun: boolean; origin?: BooksOrigin },
): Promise<EntriesImportResult> {
  const { source, dryRun } = how;
  const now = ctx.clock.now();
  const accounts = [...new Set(rows.map((r) => r.account))].sort();
  const dates = rows.map((r) => r.bookingDate).sort();
  let result: EntriesImportResult;
  try {
    result = await ctx.database.db.transaction().execute(async (trx) => {
      // A signed-off date takes no new entries: refused whole, before anything is written.
      const days = [...new Map(rows.map((r) => [`${r.account}|${r.bookingDate}`, { account: r.account, businessDate: r.bookingDate }])).values()];
      for (const lock of await findLocks(trx, days)) throw lockedDateError(lock, 'this import would add books entries to it', ctx.config.timezone);
      const { id: importId } = await trx
        .insertInto('books_imports')
        .values({ source, imported_at: now, rows: rows.length, format: how.format, amounts: how.amounts })
        .returning('id')
        .executeTakeFirstOrThrow();
      if (how.origin !== undefined) await recordBooksOrigin(trx, importId, how.origin, now);
      const { inserted, changedIds } = await storeEntries(trx, rows, importId, now);
      // A line the ledger changed is matched again: the match made with its old fields is undone.
      if (changedIds.length > 0) {
        await undoMatches(trx, await activeMatchesOf(trx, { books: changedIds }), MATCHED_BY_RULES, now, 'books entry changed by a later import');
      }
      const matches = await runMatching(trx, ctx.config, accounts, { now });
      // A later date without its own closing has the entries since the last closing as its books,
      // and its items follow the matches: every later date with results is reconciled again too.
      await oweLaterResultDates(trx, rows);
      const rollForward = await booksRollForward(trx, accounts, dates[0]!, dates[dates.length - 1]!);
      const done: EntriesImportResult = {
        source,
        format: how.format,
        dryRun,
        rows: rows.length,
        inserted,
        changed: changedIds.length,
        unchanged: rows.length - inserted - changedIds.length,
        accounts,
        firstDate: dates[0]!,
        lastDate: dates[dates.length - 1]!,
        importId: dryRun ? null : importId,
        skipped: how.skipped ?? [],
        rollForward,
        matches,
        reconciledDates: 0,
      };
      if (dryRun) throw new DryRunEnded(done);
      return done;
    });
  } catch (error) {
    if (error instanceof DryRunEnded) return error.result;
    throw error;
  }
  if (result.inserted + result.changed > 0) {
    try {
      const settled = await reconcileOwedDates(ctx, accounts);
      result.reconciledDates = new Set(settled.reconciled.map((p) => p.businessDate)).size;
      if (settled.failed.length > 0) result.reconcileFailure = settled.failed.map((f) => `${f.account} ${f.businessDate}: ${f.reason.replace(/\.?$/, '.')}`).join(' ');
    } catch (error) {
      result.reconcileFailure = `${(error as Error).message}`;
      ctx.logger.error({ err: error, source }, 'books entries imported, but reconciling their dates again failed');
    }
  }
  ctx.logger.info({ source, rows: result.rows, inserted: result.inserted, changed: result.changed, matches: result.matches.length }, 'books entries imported');
  return result;
}

/** Marks owed every date with results after the earliest entry of each account the file holds. */
async function oweLaterResultDates(trx: Transaction<Database>, rows: readonly EntryRow[]): Promise<void> {
  const earliest = new Map<string, string>();
  for (const r of rows) if ((earliest.get(r.account) ?? '9999-12-31') > r.bookingDate) earliest.set(r.account, r.bookingDate);
  for (const [account, from] of earliest) {
    await sql`
      select owe_reconciliation(d.account, d.business_date, 'books entries changed')
      from (select distinct account, business_date from reconciliation_results where account = ${account} and business_date > ${from}::date) d`.execute(trx);
  }
}

// Lines written per statement.
const ENTRY_BATCH = 2_000;

/** Inserts new lines; a stored key with other fields is updated. Returns the count inserted and the ids changed. */
async function storeEntries(trx: Transaction<Database>, rows: readonly EntryRow[], importId: number, importedAt: Date): Promise<{ inserted: number; changedIds: string[] }> {
  let inserted = 0;
  const changedIds: string[] = [];
  for (let start = 0; start < rows.length; start += ENTRY_BATCH) {
    const batch = rows.slice(start, start + ENTRY_BATCH);
    const written = await sql<{ id: string; inserted: boolean }>`
      insert into books_entries (account, currency, booking_date, value_date, amount, scale, reference, description, entry_key, import_id, imported_at)
      select account, currency, booking_date, value_date, amount, scale, reference, description, entry_key, ${importId}, ${importedAt}
      from unnest(${batch.map((r) => r.account)}::text[], ${batch.map((r) => r.currency)}::text[], ${batch.map((r) => r.bookingDate)}::date[],
        ${batch.map((r) => r.valueDate)}::date[], ${batch.map((r) => r.amount.toString())}::numeric[], ${batch.map((r) => currencyDecimals(r.currency) ?? 0)}::integer[],
        ${batch.map((r) => r.reference)}::text[], ${batch.map((r) => r.description)}::text[], ${batch.map((r) => r.entryKey)}::text[])
        as t(account, currency, booking_date, value_date, amount, scale, reference, description, entry_key)
      on conflict (account, entry_key) do update set
        currency = excluded.currency, booking_date = excluded.booking_date, value_date = excluded.value_date, amount = excluded.amount,
        scale = excluded.scale, reference = excluded.reference, description = excluded.description, import_id = excluded.import_id, imported_at = excluded.imported_at
      where (books_entries.currency, books_entries.booking_date, books_entries.value_date, books_entries.amount, books_entries.reference, books_entries.description)
        is distinct from (excluded.currency, excluded.booking_date, excluded.value_date, excluded.amount, excluded.reference, excluded.description)
      returning id::text as id, (xmax = 0) as inserted`.execute(trx);
    for (const r of written.rows) {
      if (r.inserted) inserted++;
      else changedIds.push(r.id);
    }
  }
  return { inserted, changedIds };
}

/**
 * The books' roll-forward for each account, currency and date from `from` to `to` that has a
 * closing balance and an earlier one: the earlier closing plus the entries booked after it up to
 * the date must give the date's closing. Only where entries of those dates exist.
 */
export async function booksRollForward(db: Transaction<Database> | AppContext['database']['db'], accounts: readonly string[], from: string, to: string): Promise<BooksRollForward[]> {
  const rows = await sql<{ account: string; currency: string; business_date: string; previous_date: string; previous_closing: string; entries: string; closing: string }>`
    with closings as (
      select b.account, b.currency, b.business_date, b.balance,
        lag(b.business_date) over w as previous_date, lag(b.balance) over w as previous_closing
      from expected_balances b
      where b.account = any(${[...accounts]}::text[])
      window w as (partition by b.account, b.currency order by b.business_date)
    )
    select c.account, c.currency, c.business_date::text as business_date, c.previous_date::text as previous_date,
      c.previous_closing::text as previous_closing, e.total::text as entries, c.balance::text as closing
    from closings c
    join lateral (
      select sum(e.amount) as total, count(*) as n from books_entries e
      where e.account = c.account and e.currency = c.currency and e.booking_date > c.previous_date and e.booking_date <= c.business_date
    ) e on e.n > 0
    where c.previous_date is not null and c.business_date between ${from}::date and ${to}::date
    order by c.account, c.currency, c.business_date`.execute(db);
  return rows.rows.map((r) => {
    const previousClosing = BigInt(r.previous_closing);
    const entries = BigInt(r.entries);
    const closing = BigInt(r.closing);
    return { account: r.account, currency: r.currency, businessDate: r.business_date, previousDate: r.previous_date, previousClosing, entries, closing, residual: closing - previousClosing - entries };
  });
}
