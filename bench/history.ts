/**
 * A reconciled history for the history benchmark (bench/history-bench.ts), written with
 * set-based SQL (generate_series, unnest) that mirrors, row for row, what the CLI's own write
 * paths leave behind:
 * - `backfill --import FILE`: per account and date one `backfill` run (`source` = the statement
 *   file's name, end of day, drift 0, captured and read at the date's cut-off, inserted succeeded)
 *   and one balance_snapshots row per currency (no single-wallet reading, the currency's ISO scale);
 * - `ledger import FILE`: one books_imports row per account's books file and its expected_balances
 *   rows (about one in 997 a unit off: a break); the last date has no books yet;
 * - `reconcile`: reconciliation_results per account, date and currency (matched, break, or
 *   awaiting_books on the last date, with previous balance and movement from the previous date),
 *   one open case per account, currency and kind that broke, its occurrences, the owed marks paid.
 * The triggers that mark dates owed run as they do for the CLI; the marks are then cleared, as a
 * reconcile clears them. Each table is written by one statement for every account (generate_series
 * style: unnest of the dates, cross joins): generating through the CLI would take hours at 200 × 50 × 1 year.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../src/db/database.types.js';
import { currencyDecimals } from '../src/money/format-amount.js';
import { addDays } from '../src/business-date/zoned-time.js';

/** Fifty currencies with ISO 4217 decimals (0, 2 and 3 among them). */
export const HISTORY_CURRENCIES = [
  'USD', 'EUR', 'GBP', 'JPY', 'CHF', 'SEK', 'NOK', 'DKK', 'PLN', 'CZK',
  'HUF', 'RON', 'BGN', 'ISK', 'AUD', 'NZD', 'CAD', 'MXN', 'BRL', 'ARS',
  'CLP', 'COP', 'PEN', 'ZAR', 'NGN', 'KES', 'EGP', 'MAD', 'TRY', 'ILS',
  'AED', 'SAR', 'QAR', 'KWD', 'BHD', 'OMR', 'JOD', 'INR', 'PKR', 'BDT',
  'THB', 'MYR', 'SGD', 'IDR', 'PHP', 'KRW', 'CNY', 'HKD', 'TWD', 'UAH',
] as const;

export interface HistoryShape {
  accounts: number;
  currencies: number;
  days: number;
  /** The last business date of the history. */
  lastDate: string;
}

export function accountNames(shape: HistoryShape): string[] {
  return Array.from({ length: shape.accounts }, (_, i) => `merchant-${String(i + 1).padStart(3, '0')}`);
}

/**
 * Writes the history into a migrated, empty database. `cutoffOf` is the configuration's business
 * calendar (the cut-off each statement run records), in one transaction.
 */
export async function generateHistory(db: Kysely<Database>, shape: HistoryShape, cutoffOf: (date: string) => Date, now: Date): Promise<void> {
  if (shape.currencies > HISTORY_CURRENCIES.length) throw new Error(`at most ${HISTORY_CURRENCIES.length} currencies`);
  const currencies = HISTORY_CURRENCIES.slice(0, shape.currencies);
  const scales = currencies.map((c) => currencyDecimals(c));
  const firstDate = addDays(shape.lastDate, -(shape.days - 1));
  const dates = Array.from({ length: shape.days }, (_, i) => addDays(firstDate, i));
  const cutoffs = dates.map((d) => cutoffOf(d).toISOString());
  const accounts = accountNames(shape);
  // Each table in one statement over every account (the rows of 200 accounts in one pass, not
  // 200 round trips), in one transaction: the history appears whole or not at all.
  await db.transaction().execute(async (trx) => {
    await sql`create temporary table history_accounts on commit drop as
      select a.account, a.n - 1 as index from unnest(${accounts}::text[]) with ordinality as a(account, n)`.execute(trx);
    await sql`create temporary table history_currencies on commit drop as
      select c.currency, c.scale, c.n from unnest(${currencies}::text[], ${scales}::smallint[]) with ordinality as c(currency, scale, n)`.execute(trx);
    // backfill --import: a run per account and date, inserted as the import leaves it (succeeded).
    await sql`
      insert into snapshot_runs (account, environment, trigger, business_date, status, started_at, finished_at,
        wallets_reported, wallets_fetched, pages_fetched, requests, source, cutoff_at, cutoff_drift_seconds, end_of_day, reads_finished_at)
      select a.account, 'sandbox', 'backfill', d.business_date, 'succeeded', ${now}::timestamptz, ${now}::timestamptz,
        null, ${currencies.length}, 0, 0, 'statements-' || a.account || '.csv', d.cutoff_at, 0, true, d.cutoff_at
      from history_accounts a
      cross join unnest(${dates}::date[], ${cutoffs}::timestamptz[]) as d(business_date, cutoff_at)
      order by a.account, d.business_date`.execute(trx);
    await sql`analyze snapshot_runs`.execute(trx);
    // Balances: a walk per account and currency, deterministic, plausible (thousands to millions).
    await sql`
      insert into balance_snapshots (run_id, account, currency, balance, single_balance, captured_at, unconfirmed_reason, scale)
      select r.id, r.account, c.currency,
        (100000 + ((a.index * 7919 + c.n * 104729) % 900000)) * 100
          + ((r.business_date - ${firstDate}::date) * (c.n * 37 + a.index * 11 + 13)) % 5000000,
        null, r.cutoff_at, null, c.scale
      from snapshot_runs r
      join history_accounts a on a.account = r.account
      cross join history_currencies c`.execute(trx);
    await sql`analyze balance_snapshots`.execute(trx);
    // ledger import: one books file per account; about one row in 997 a unit off (a break); the
    // last date's books have not arrived.
    await sql`
      insert into books_imports (source, imported_at, rows, format, amounts)
      select 'books-' || account || '.csv', ${now}::timestamptz, ${currencies.length * (shape.days - 1)}, 'csv', 'minor'
      from history_accounts order by account`.execute(trx);
    await sql`
      insert into expected_balances (account, business_date, currency, balance, source, imported_at, import_id, scale)
      select s.account, r.business_date, s.currency,
        s.balance + case when (r.id * 31 + length(s.currency) * ascii(s.currency)) % 997 = 0 then 1 else 0 end,
        i.source, ${now}::timestamptz, i.id, s.scale
      from snapshot_runs r
      join balance_snapshots s on s.run_id = r.id
      join books_imports i on i.source = 'books-' || r.account || '.csv'
      where r.business_date < ${shape.lastDate}::date`.execute(trx);
    await sql`analyze expected_balances`.execute(trx);
    // reconcile: results of every date, the previous captured date's balance for the movement.
    await sql`
      insert into reconciliation_results (account, business_date, currency, gateway_balance, single_balance, expected_balance,
        previous_balance, movement, difference, status, run_id, computed_at, books_import_id, note, scale)
      select s.account, r.business_date, s.currency, s.balance, null, e.balance,
        p.balance, s.balance - p.balance, s.balance - e.balance,
        case when e.balance is null then 'awaiting_books' when s.balance = e.balance then 'matched' else 'break' end,
        r.id, ${now}::timestamptz, e.import_id, null, s.scale
      from snapshot_runs r
      join balance_snapshots s on s.run_id = r.id
      left join expected_balances e on e.account = s.account and e.business_date = r.business_date and e.currency = s.currency
      left join snapshot_runs pr on pr.account = r.account and pr.business_date = r.business_date - 1
      left join balance_snapshots p on p.run_id = pr.id and p.currency = s.currency`.execute(trx);
    // The case tracker: one open case per account, currency and kind, its occurrences linked.
    await sql`
      insert into reconciliation_cases (account, currency, kind, state, opened_on, last_seen_on, occurrences, latest_difference, updated_at)
      select account, currency, 'break', 'open', min(business_date), max(business_date), count(*),
        (array_agg(difference order by business_date desc))[1], ${now}::timestamptz
      from reconciliation_results where status = 'break'
      group by account, currency`.execute(trx);
    await sql`
      update reconciliation_results x set case_id = c.id
      from reconciliation_cases c
      where x.status = 'break' and c.account = x.account and c.currency = x.currency and c.kind = 'break'`.execute(trx);
    await sql`
      insert into case_occurrences (case_id, business_date, status, difference, gateway_balance, single_balance, expected_balance, run_id, seen_at)
      select case_id, business_date, status, difference, gateway_balance, single_balance, expected_balance, run_id, ${now}::timestamptz
      from reconciliation_results where case_id is not null`.execute(trx);
    await sql`delete from reconciliation_owed where account in (select account from history_accounts)`.execute(trx);
  });
  // What autovacuum does to a table that has settled: statistics and the visibility map (the
  // day-scoped reads are then index-only where they can be).
  await sql`vacuum analyze`.execute(db);
}
