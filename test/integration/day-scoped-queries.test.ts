import { CompiledQuery, sql, type Kysely, type KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateHistory, accountNames } from '../../bench/history.js';
import { renderCsv } from '../../src/reports/render-csv.js';
import { loadCurrencyHistories, loadReport } from '../../src/reports/report-data.js';
import { streamCsv } from '../../src/reports/stream-csv.js';
import { findFirstTrackedDates, countConsecutiveMissedDates } from '../../src/db/capture-day.repository.js';
import { BusinessCalendar } from '../../src/business-date/business-calendar.js';
import { listBooksOfDate, listCapturesOfDate } from '../../src/db/console-views.repository.js';
import type { Database } from '../../src/db/database.types.js';
import { listAccountDateFacts, listAccountsWithData, listRecentBalances } from '../../src/db/overview.repository.js';
import { listDatesAwaitingBooks, listDatesWithStatus, listOwedDates, listReconciliationStatus } from '../../src/db/reconciliation-owed.repository.js';
import { countResultsOfDate, listResultsOfDate } from '../../src/db/reconciliation-result.repository.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// A moderately sized reconciled history (the benchmark's generator): 12 accounts × 5 currencies
// × 240 days, 14,400 results; big enough that the planner picks indexes when they serve.
const SHAPE = { accounts: 12, currencies: 5, days: 240, lastDate: '2026-11-25' };
const accounts = accountNames(SHAPE);
const HISTORY_TABLES = ['snapshot_runs', 'balance_snapshots', 'expected_balances', 'reconciliation_results'];

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
  await generateHistory(t.handle.db, SHAPE, (d) => new Date(`${d}T23:00:00Z`), new Date('2026-11-26T08:00:00Z'));
  // Gaps: one account without results for three days, and a date with none at all.
  await sql`delete from reconciliation_results where account = ${accounts[3]!} and business_date between '2026-09-01' and '2026-09-03'`.execute(t.handle.db);
  await sql`delete from reconciliation_results where business_date = '2026-10-01'`.execute(t.handle.db);
  await sql`analyze`.execute(t.handle.db);
}, 300_000);

afterAll(async () => {
  await t?.drop();
});

/** Every relation a plan (EXPLAIN's JSON) scans sequentially. */
function planSeqScans(plan: unknown): string[] {
  const found: string[] = [];
  const walk = (node: Record<string, unknown>) => {
    if (node['Node Type'] === 'Seq Scan') found.push(String(node['Relation Name']));
    for (const child of (node.Plans as Array<Record<string, unknown>> | undefined) ?? []) walk(child);
  };
  walk(((typeof plan === 'string' ? JSON.parse(plan) : plan) as Array<{ Plan: Record<string, unknown> }>)[0]!.Plan);
  return found;
}

/** Every relation a query's plan scans sequentially. */
async function seqScans(query: string): Promise<string[]> {
  const { rows } = await sql<{ 'QUERY PLAN': unknown }>`explain (format json) ${sql.raw(query)}`.execute(t.handle.db);
  return planSeqScans(rows[0]!['QUERY PLAN']);
}

/** Every query a repository function runs (SQL and parameters as sent), caught on their way to the database. */
async function queriesOf(run: (db: Kysely<Database>) => Promise<unknown>): Promise<CompiledQuery[]> {
  const db = t.handle.db;
  const caught: CompiledQuery[] = [];
  const plugin: KyselyPlugin = {
    transformQuery: (args) => {
      caught.push(db.getExecutor().compileQuery(args.node, args.queryId));
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  await run(db.withPlugin(plugin));
  return caught;
}

/** The history tables a repository function's queries scan sequentially. */
async function historySeqScansOf(run: (db: Kysely<Database>) => Promise<unknown>): Promise<string[]> {
  const queries = await queriesOf(run);
  expect(queries.length).toBeGreaterThan(0);
  const found: string[] = [];
  for (const q of queries) {
    const { rows } = await t.handle.db.executeQuery<{ 'QUERY PLAN': unknown }>(CompiledQuery.raw(`explain (format json) ${q.sql}`, [...q.parameters]));
    found.push(...planSeqScans(rows[0]!['QUERY PLAN']).filter((s) => HISTORY_TABLES.includes(s)));
  }
  return found;
}

describe(`day-scoped queries on a history (${backend})`, { timeout: 120_000 }, () => {
  const day = '2026-06-01';
  it.each<[string, (db: Kysely<Database>) => Promise<unknown>]>([
    ['the accounts with data (day view, cases inbox)', (db) => listAccountsWithData(db)],
    ['the results of a page of accounts on one date (day view)', (db) => listResultsOfDate(db, day, accounts.slice(0, 5))],
    ['the counts of one date (day view)', (db) => countResultsOfDate(db, day)],
    ['the captures of one date (day view)', (db) => listCapturesOfDate(db, day, new BusinessCalendar({ timezone: 'Europe/Berlin', cutoff: '00:59', captureWindowMs: 3_600_000 }))],
    ['the books of one date (day view)', (db) => listBooksOfDate(db, day)],
    ['the balance trends of a page of accounts (day view)', (db) => listRecentBalances(db, accounts.slice(0, 5), '2026-05-19', day)],
    ['the states of one date (settle, night digest)', (db) => listReconciliationStatus(db, { from: day, to: day, accounts })],
    ['the dates awaiting books', (db) => listDatesAwaitingBooks(db, accounts)],
    ['the dates awaiting a statement', (db) => listDatesWithStatus(db, accounts, 'awaiting_statement')],
    ['the owed dates', (db) => listOwedDates(db, accounts, day)],
    ['the misses in a row (night digest)', (db) => countConsecutiveMissedDates(db, accounts[0]!)],
    ['the first tracked dates', (db) => findFirstTrackedDates(db, accounts)],
    ['the states of a week (the overview)', (db) => listAccountDateFacts(db, accounts.slice(0, 3), '2026-05-26', day)],
  ])('%s scans no history table sequentially', async (_name, run) => {
    expect(await historySeqScansOf(run)).toEqual([]);
  });

  it.each([
    ['reconciliation_status', `select * from reconciliation_status where business_date = '2026-06-01'`],
    ['reconciliation_status of one account', `select * from reconciliation_status where business_date = '2026-06-01' and account = '${accounts[2]}'`],
    ['reconciliation_status of a week of some accounts', `select * from reconciliation_status where business_date between '2026-05-26' and '2026-06-01' and account in ('${accounts[0]}', '${accounts[1]}')`],
    ['capture_days of a week of some accounts', `select * from capture_days where business_date between '2026-05-26' and '2026-06-01' and account in ('${accounts[0]}', '${accounts[1]}')`],
    ['balance_history', `select * from balance_history where business_date = '2026-06-01'`],
    ['daily_balances', `select * from daily_balances where business_date = '2026-06-01'`],
    ['capture_days', `select * from capture_days where business_date = '2026-06-01'`],
    ['results awaiting books', `select distinct account, business_date from reconciliation_results where status = 'awaiting_books' and account in ('${accounts[0]}', '${accounts[1]}') order by business_date`],
  ])('%s for one date scans no history table sequentially', async (_name, query) => {
    const scans = await seqScans(query);
    expect(scans.filter((s) => HISTORY_TABLES.includes(s))).toEqual([]);
  });

  it('keeps the meaning of reconciliation_status: current dates, awaiting books on the last one, owed when a result is gone', async () => {
    const { rows } = await sql<{ business_date: string; state: string; n: string }>`
      select business_date::text, state, count(*) as n from reconciliation_status
      where business_date in ('2026-06-01', '2026-09-02', '2026-11-25') group by 1, 2 order by 1, 2`.execute(t.handle.db);
    expect(rows.map((r) => [r.business_date, r.state, Number(r.n)])).toEqual([
      ['2026-06-01', 'current', 12],
      ['2026-09-02', 'current', 11],
      ['2026-09-02', 'owed', 1],
      ['2026-11-25', 'awaiting_books', 12],
    ]);
  });

  it('gives balance_history the previous captured date and the movement from it', async () => {
    const { rows } = await sql<{ previous_business_date: string; movement: string; balance: string; previous_balance: string }>`
      select previous_business_date::text, movement::text, balance::text, previous_balance::text from balance_history
      where account = ${accounts[0]!} and business_date = '2026-06-01' and currency = 'USD'`.execute(t.handle.db);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.previous_business_date).toBe('2026-05-31');
    expect(BigInt(rows[0]!.movement)).toBe(BigInt(rows[0]!.balance) - BigInt(rows[0]!.previous_balance));
  });

  it("reads a page's balance trends from the run's key alone (index-only), each currency's dates in order, exactly", async () => {
    const page = accounts.slice(0, 3);
    const queries = await queriesOf((db) => listRecentBalances(db, page, '2026-05-19', day));
    const plans = JSON.stringify(
      await Promise.all(
        queries.map(async (q) => {
          const plan = (await t.handle.db.executeQuery<{ 'QUERY PLAN': unknown }>(CompiledQuery.raw(`explain (format json) ${q.sql}`, [...q.parameters]))).rows[0]!['QUERY PLAN'];
          return typeof plan === 'string' ? JSON.parse(plan) : plan;
        }),
      ),
    );
    expect(plans).toMatch(/"Node Type":\s*"Index Only Scan"[^{}]*"Relation Name":\s*"balance_snapshots"/);
    const points = await listRecentBalances(t.handle.db, page, '2026-05-19', day);
    const { rows } = await sql<{ account: string; currency: string; business_date: string; balance: string; scale: number | null }>`
      select r.account, b.currency, r.business_date::text as business_date, b.balance::text as balance, b.scale
      from snapshot_runs r join balance_snapshots b on b.run_id = r.id
      where r.status = 'succeeded' and r.account = any(${page}::text[]) and r.business_date between '2026-05-19' and ${day}
      order by r.account, b.currency, r.business_date`.execute(t.handle.db);
    expect(points).toEqual(rows.map((r) => ({ account: r.account, currency: r.currency, businessDate: r.business_date, balance: BigInt(r.balance), scale: r.scale })));
    expect(points).toHaveLength(3 * SHAPE.currencies * 14);
  });

  it('reads no balance history for the charts of a one-date report (a chart needs two dates)', async () => {
    expect(await queriesOf((db) => loadCurrencyHistories(db, { from: day, to: day }))).toEqual([]);
    expect(await loadCurrencyHistories(t.handle.db, { from: day, to: day })).toEqual([]);
    expect((await loadCurrencyHistories(t.handle.db, { from: '2026-05-31', to: day })).map((h) => h.dates)).toContainEqual(['2026-05-31', day]);
  });

  it('streams the CSV of a range page by page, line for line what the whole report renders (gaps and not_reconciled lines included)', async () => {
    const range = { from: '2026-08-25', to: '2026-11-30' };
    const options = { accounts, today: '2026-11-26' };
    const whole = renderCsv(await loadReport(t.handle.db, range, options));
    const counted = { results: 0 };
    let streamed = '';
    for await (const chunk of streamCsv(t.handle.db, range, { ...options, counted })) streamed += chunk;
    expect(streamed).toBe(whole);
    expect(whole).toContain(`${accounts[3]},2026-09-02,,,,,,,,not_reconciled`);
    expect(counted.results).toBe(whole.split('\r\n').filter((l) => l !== '' && !l.includes('not_reconciled')).length - 1);
  });
});
