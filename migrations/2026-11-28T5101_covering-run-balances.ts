import { sql, type Kysely } from 'kysely';

// A run's balances are read by its id (the console's trends: 14 dates of a page of 25 accounts,
// 17,500 balances; balance_history; a report's previous balances). A run's rows need not lie
// together in the table (a history written in bulk, rows appended by several runs at once): at
// 200 accounts × 50 currencies a page of trends fetched about 17,500 table pages, one per balance.
// The unique key of (run, currency) now carries the balance and its scale, so those reads are
// index-only scans of a few index pages per run. It replaces the old key under the same name
// (no second index to maintain on each capture), and still refuses a second row of a currency.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table balance_snapshots add constraint balance_snapshots_run_currency_covering unique (run_id, currency) include (balance, scale)`.execute(db);
  await sql`alter table balance_snapshots drop constraint balance_snapshots_run_currency_key`.execute(db);
  await sql`alter table balance_snapshots rename constraint balance_snapshots_run_currency_covering to balance_snapshots_run_currency_key`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table balance_snapshots add constraint balance_snapshots_run_currency_plain unique (run_id, currency)`.execute(db);
  await sql`alter table balance_snapshots drop constraint balance_snapshots_run_currency_key`.execute(db);
  await sql`alter table balance_snapshots rename constraint balance_snapshots_run_currency_plain to balance_snapshots_run_currency_key`.execute(db);
}
