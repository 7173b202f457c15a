import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { AppContext } from '../app-context.js';
import type { Config } from '../config/index.js';
import { ConfigError, DatabaseError, InputFileError } from '../errors.js';
import { maskUrlPasswords } from '../logger.js';
import { maskSecretValues } from '../secret.js';
import { todayOf } from '../reconciliation/business-dates.js';
import { allAccountNames } from '../config/index.js';
import { ProblemList, validateRows, type BalanceFileOptions, type RawRow } from './books-file.js';
import { storeEntryRows, validEntryRows, type EntriesImportResult } from './entries-import.js';
import { storeBooks, type BooksImportResult } from './books-import.js';

/** Where one account's books are pulled from, when it has a source. */
export interface BooksSqlSource {
  account: string;
  /** The query file (absolute path): the account's own, else RECON_BOOKS_SQL_FILE. */
  sqlFile: string;
  /** `sql:<file name>`, recorded as the books import's source. */
  source: string;
  /** Closing balances (the books query) or detail lines (the entries query). */
  kind?: 'balances' | 'entries';
}

/** What pulling one account's books for one date came to. */
export type BooksPullOutcome = 'imported' | 'unchanged' | 'no-rows' | 'not-configured' | { failed: string };

/** The account's books source, or undefined when neither the accounts file nor RECON_BOOKS_SQL_FILE gives it a query. */
export function booksSqlSourceOf(config: Config, account: string): BooksSqlSource | undefined {
  const sqlFile = config.accounts.find((a) => a.name === account)?.books?.sqlFile ?? config.books.sqlFile;
  if (sqlFile === undefined) return undefined;
  return { account, sqlFile, source: `sql:${path.basename(sqlFile)}` };
}

/** The account's entries source, or undefined when neither the accounts file nor RECON_BOOKS_ENTRIES_SQL_FILE gives it an entries query. */
export function entriesSqlSourceOf(config: Config, account: string): BooksSqlSource | undefined {
  const configured = [...config.accounts, ...config.bankAccounts].find((a) => a.name === account)?.books?.entriesSqlFile;
  const sqlFile = configured ?? config.books.entriesSqlFile;
  if (sqlFile === undefined) return undefined;
  return { account, sqlFile, source: `sql:${path.basename(sqlFile)}`, kind: 'entries' };
}

/** What each kind of query is called in messages and the columns it must return. */
const QUERY_KINDS = {
  balances: { what: 'books query', required: ['currency', 'balance'] },
  entries: { what: 'books entries query', required: ['booking_date', 'currency', 'amount'] },
} as const;

/**
 * Runs an account's books query against the merchant's ledger database for one business date
 * and returns its rows, validated as a books file's would be. The query gets the business date
 * as $1 (text in the form YYYY-MM-DD: cast it, `$1::date`) and the account name as $2, and must
 * return the columns `currency` and `balance` (numeric, major units).
 */
export async function queryLedgerBooks(ctx: AppContext, source: BooksSqlSource, businessDate: string): Promise<RawRow[]> {
  return (await runLedgerQuery(ctx, source, businessDate)).rows;
}

/** queryLedgerBooks with the query text as it was run and a SHA-256 of the rows it returned: what a pull keeps as its origin. */
export async function runLedgerQuery(ctx: AppContext, source: BooksSqlSource, businessDate: string): Promise<{ rows: RawRow[]; queryText: string; rowsSha256: string }> {
  const kind = QUERY_KINDS[source.kind ?? 'balances'];
  const url = ctx.config.books.databaseUrl;
  if (url === undefined) throw new ConfigError(`Account "${source.account}" has a ${kind.what} (${source.sqlFile}) but RECON_BOOKS_DATABASE_URL is not set.`, ['RECON_BOOKS_DATABASE_URL is not set']);
  let text: string;
  try {
    text = await readFile(source.sqlFile, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(`The ${kind.what} ${source.sqlFile} could not be read: ${code === 'ENOENT' ? 'there is no such file' : (error as Error).message}.`, [`${kind.what} ${source.sqlFile} unreadable`], { cause: error });
  }
  // PostgreSQL refuses a parameter the statement does not use, so only those it names are sent.
  const used = Math.max(0, ...[...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
  if (used > 2) throw new ConfigError(`The ${kind.what} ${source.sqlFile} uses $${used}; it is given only $1 (the business date) and $2 (the account).`, [`${kind.what} uses $${used}`]);

  const timeoutMs = ctx.config.books.statementTimeoutMs;
  const client = new pg.Client({
    connectionString: url.reveal(),
    connectionTimeoutMillis: timeoutMs,
    // Read only and time-limited from the connection's start: session defaults given as startup
    // options, which no statement of the query runs before (a `set local` could be lifted by a
    // `commit;` in front of it). The extended protocol below runs one statement only anyway.
    options: `-c default_transaction_read_only=on -c statement_timeout=${timeoutMs} -c idle_in_transaction_session_timeout=${timeoutMs + 5_000}`,
    // A second net should the server not honour statement_timeout: the client gives up a little
    // later and then cancels the query on the server itself.
    query_timeout: timeoutMs + 5_000,
    application_name: 'wallet-recon books',
    // Every value as PostgreSQL's text: a numeric balance keeps its exact digits, never a float.
    types: { getTypeParser: () => (value: string) => value },
  });
  client.on('error', () => {
    // A connection dropped between queries surfaces in the next query; this only keeps the process alive.
  });
  let running = false;
  try {
    await client.connect();
    await client.query('begin transaction isolation level repeatable read, read only');
    running = true;
    // The extended query protocol always (even without parameters): one statement, or PostgreSQL refuses it.
    const query: pg.QueryConfig & { queryMode: 'extended' } = { text, values: [businessDate, source.account].slice(0, used), queryMode: 'extended' };
    const result = await client.query<Record<string, unknown>>(query);
    running = false;
    await client.query('rollback');
    const columns = result.fields.map((f) => f.name);
    const missing = kind.required.filter((c) => !columns.includes(c));
    if (missing.length > 0) {
      throw new InputFileError(
        `The ${kind.what} ${path.basename(source.sqlFile)} returned the columns ${columns.join(', ') || '(none)'}; it must return ${kind.required.join(', ').replace(/, (\w+)$/, ' and $1')} (missing ${missing.join(', ')}).`,
        [`${kind.what} lacks ${missing.join(', ')}`],
      );
    }
    // A balances row is of the date and account asked for; an entries row has its own booking date,
    // and its account column (when the query returns one) is checked against the account asked for.
    const rows = result.rows.map((row, index) => ({
      line: index + 1,
      unit: 'row' as const,
      fields: source.kind === 'entries' ? { ...row, account: row.account ?? source.account } : { ...row, business_date: businessDate, account: source.account },
    }));
    return { rows, queryText: text, rowsSha256: createHash('sha256').update(JSON.stringify(rows.map((r) => r.fields))).digest('hex') };
  } catch (error) {
    // An answer from the server (a refused or failed statement) means the statement has ended;
    // only when the client gave up (its query_timeout, a dropped connection) may it still run there.
    if (running && !(error instanceof pg.DatabaseError)) await cancelOnServer(url.reveal(), client);
    if (error instanceof InputFileError) throw error;
    if ((error as { code?: string }).code === '42601' && /multiple commands/i.test((error as Error).message)) {
      throw new ConfigError(
        `The ${kind.what} ${source.sqlFile} holds more than one SQL statement: it must be a single select (no ";" between statements, no "commit" or "set"). Nothing was run.`,
        [`${kind.what} ${path.basename(source.sqlFile)} has several statements`],
        { cause: error },
      );
    }
    throw new DatabaseError(`The ${kind.what} ${path.basename(source.sqlFile)} failed against RECON_BOOKS_DATABASE_URL for account "${source.account}", ${businessDate}: ${secretFree((error as Error).message, url.reveal())}`, { cause: error });
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Pulls one account's books for one business date from its ledger query and stores them as a
 * books import (source `sql:<file name>`), through the same validation and import as a file.
 * Books identical to those stored are not imported again. Throws like a file import does.
 */
export async function pullBooks(
  ctx: AppContext,
  request: { account: string; businessDate: string; dryRun?: boolean; reconcile?: boolean },
): Promise<{ outcome: 'imported' | 'unchanged' | 'no-rows' | 'not-configured'; result?: BooksImportResult }> {
  const source = booksSqlSourceOf(ctx.config, request.account);
  if (source === undefined) return { outcome: 'not-configured' };
  const { rows: raw, queryText, rowsSha256 } = await runLedgerQuery(ctx, source, request.businessDate);
  if (raw.length === 0) return { outcome: 'no-rows' };
  const rows = validateRows(raw, source.source, { amounts: 'major', account: request.account, knownAccounts: ctx.config.accounts.map((a) => a.name), notAfter: todayOf(ctx) });
  const preview = await storeBooks(ctx, rows, { source: source.source, format: 'sql', amounts: 'major', dryRun: true, reconcile: false });
  // A pull repeats every few minutes until the books deadline: the same books are no new import.
  if (request.dryRun === true || preview.changes.length === 0) return { outcome: preview.changes.length === 0 ? 'unchanged' : 'imported', result: preview };
  const result = await storeBooks(ctx, rows, { source: source.source, format: 'sql', amounts: 'major', dryRun: false, reconcile: request.reconcile === true, origin: { sqlQuery: queryText, rowsSha256 } });
  return { outcome: 'imported', result };
}

/**
 * Pulls one account's books entries for one business date from its entries query and imports
 * them as `ledger import --entries` does (same validation, locks, matching, all or nothing), with
 * source `sql:<file name>`. When every line is already stored as it is, nothing is imported.
 */
export async function pullEntries(
  ctx: AppContext,
  request: { account: string; businessDate: string; dryRun?: boolean },
): Promise<{ outcome: 'imported' | 'unchanged' | 'no-rows' | 'not-configured'; result?: EntriesImportResult }> {
  const source = entriesSqlSourceOf(ctx.config, request.account);
  if (source === undefined) return { outcome: 'not-configured' };
  const { rows: raw, queryText, rowsSha256 } = await runLedgerQuery(ctx, source, request.businessDate);
  if (raw.length === 0) return { outcome: 'no-rows' };
  const options: BalanceFileOptions = { amounts: 'major', account: request.account, knownAccounts: allAccountNames(ctx.config), notAfter: todayOf(ctx) };
  const rows = await validEntryRows(raw, source.source, 'row', options, new ProblemList());
  const how = { source: source.source, format: 'sql' as const, amounts: 'major' as const };
  const preview = await storeEntryRows(ctx, rows, { ...how, dryRun: true });
  // Pulled again and again until the books deadline: lines already stored as they are are no new import.
  const changes = preview.inserted + preview.changed;
  if (request.dryRun === true || changes === 0) return { outcome: changes === 0 ? 'unchanged' : 'imported', result: preview };
  return { outcome: 'imported', result: await storeEntryRows(ctx, rows, { ...how, dryRun: false, origin: { sqlQuery: queryText, rowsSha256 } }) };
}

/**
 * For the worker: pulls an account's books for a business date, never throwing (a failure is
 * returned with its secret-free message). The caller decides when (after the cut-off, then every RECON_BOOKS_PULL_EVERY until
 * books arrive); reconciling what changed is left to whatever marks the date as owed.
 */
export async function pullBooksIfDue(ctx: AppContext, request: { account: string; businessDate: string }): Promise<BooksPullOutcome> {
  try {
    const { outcome, result } = await pullBooks(ctx, request);
    if (outcome === 'imported') ctx.logger.info({ account: request.account, businessDate: request.businessDate, source: result?.source, rows: result?.rows }, 'books pulled from the ledger database');
    return outcome;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    ctx.logger.warn({ account: request.account, businessDate: request.businessDate, error: message }, 'books pull failed');
    return { failed: message };
  }
}

/**
 * Cancels what the books connection still runs on the ledger server (the client gave up: its
 * query_timeout, or an error mid-query), from a second short connection: closing the socket alone
 * leaves the query running until the server next writes to it.
 */
async function cancelOnServer(url: string, client: pg.Client): Promise<void> {
  const pid = (client as unknown as { processID?: number }).processID;
  if (typeof pid !== 'number') return;
  const canceller = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000, query_timeout: 5_000, application_name: 'wallet-recon books cancel' });
  canceller.on('error', () => undefined);
  try {
    await canceller.connect();
    await canceller.query('select pg_cancel_backend($1)', [pid]);
  } catch {
    // The server may be gone; its own statement_timeout still ends the query.
  } finally {
    await canceller.end().catch(() => undefined);
  }
}

/** A database message with the connection's password (and any URL's) taken out. */
function secretFree(message: string, url: string): string {
  let text = maskSecretValues(maskUrlPasswords(message));
  const password = decodeURIComponent(new URL(url).password);
  if (password !== '') text = text.split(password).join('***');
  return text;
}
