import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountNames, generateHistory } from '../../bench/history.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// reconciliation_days is derived state: whoever changes an input (here plain SQL, as an operator
// would), the triggers recompute the account-dates it touched in the same transaction, so
// reconciliation_status (read from it) says what computing it from the base tables says.
const SHAPE = { accounts: 2, currencies: 2, days: 4, lastDate: '2026-11-25' };
const [A, B] = accountNames(SHAPE) as [string, string];

/** reconciliation_status as computed from the base tables at read time (the view before the state table). */
const FROM_BASE_TABLES = `
  select d.account, d.business_date::text,
    case
      when o.account is not null then 'owed'
      when a.run_id is not null and (r.n = 0 or r.run_id is distinct from a.run_id or r.books_import_id is distinct from b.import_id) then 'owed'
      when s.statement_pk is not null and (r.n = 0 or r.bank_statement_id is distinct from s.statement_pk or r.books_import_id is distinct from b.import_id) then 'owed'
      when r.awaiting_statement then 'awaiting_statement'
      when a.run_id is null and s.statement_pk is null and not coalesce(r.bank, false) then 'not_captured'
      when r.awaiting and r.books_deadline_at <= now() then 'no_books'
      when r.awaiting then 'awaiting_books'
      else 'current'
    end as state,
    a.run_id, b.import_id as books_import_id, r.reconciled_at, o.reason as owed_reason,
    case when s.statement_pk is not null or coalesce(r.bank, false) then 'bank' else 'gateway' end as source,
    s.statement_pk as bank_statement_id, r.books_deadline_at
  from (
    select account, business_date from snapshot_runs where status = 'succeeded'
    union select account, business_date from missed_dates
    union select account, business_date from expected_balances
    union select account, business_date from reconciliation_results
    union select account, business_date from reconciliation_owed
    union select account, business_date from bank_statements where not intraday
  ) d
  left join reconciliation_owed o on o.account = d.account and o.business_date = d.business_date
  left join lateral (select x.run_id from authoritative_runs x where x.account = d.account and x.business_date = d.business_date limit 1) a on true
  cross join lateral (select max(e.import_id) as import_id from expected_balances e where e.account = d.account and e.business_date = d.business_date) b
  cross join lateral (select max(st.id) as statement_pk from bank_statements st where st.account = d.account and st.business_date = d.business_date and not st.intraday) s
  cross join lateral (
    select max(x.run_id) as run_id, max(x.books_import_id) as books_import_id, max(x.computed_at) as reconciled_at,
      bool_or(x.status = 'awaiting_books') as awaiting, bool_or(x.status = 'awaiting_statement') as awaiting_statement,
      bool_or(x.source = 'bank') as bank, max(x.bank_statement_id) as bank_statement_id,
      min(x.books_deadline_at) filter (where x.status = 'awaiting_books') as books_deadline_at, count(*) as n
    from reconciliation_results x where x.account = d.account and x.business_date = d.business_date
  ) r`;

const COLUMNS = 'account, business_date::text, state, run_id, books_import_id, reconciled_at, owed_reason, source, bank_statement_id, books_deadline_at';

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
  await generateHistory(t.handle.db, SHAPE, (d) => new Date(`${d}T23:00:00Z`), new Date('2026-11-26T08:00:00Z'));
}, 120_000);

afterAll(async () => {
  await t?.drop();
});

type Row = Record<string, unknown>;

/** Every row of reconciliation_status, and the same computed from the base tables. */
async function statusAndBaseTables(): Promise<{ status: Row[]; base: Row[] }> {
  const db = t.handle.db;
  const status = (await sql<Row>`select ${sql.raw(COLUMNS)} from reconciliation_status order by account, business_date`.execute(db)).rows;
  const base = (await sql<Row>`select ${sql.raw(COLUMNS)} from (${sql.raw(FROM_BASE_TABLES)}) v order by account, business_date`.execute(db)).rows;
  return { status, base };
}

async function stateOf(account: string, date: string): Promise<string | undefined> {
  const { rows } = await sql<{ state: string }>`select state from reconciliation_status where account = ${account} and business_date = ${date}::date`.execute(t.handle.db);
  return rows[0]?.state;
}

/** The day view's counts and books facts, as stored per account-date and as counted from the base tables. */
async function countsStoredAndCounted(): Promise<{ stored: Row[]; counted: Row[] }> {
  const db = t.handle.db;
  const stored = (await sql<Row>`
    select account, business_date::text, results, not_matched, books_currencies, books_source, books_import_id
    from reconciliation_days order by account, business_date`.execute(db)).rows;
  const counted = (await sql<Row>`
    select d.account, d.business_date::text,
      (select count(*)::integer from reconciliation_results x where x.account = d.account and x.business_date = d.business_date::date) as results,
      (select count(*)::integer from reconciliation_results x where x.account = d.account and x.business_date = d.business_date::date and x.status <> 'matched') as not_matched,
      (select count(*)::integer from expected_balances e where e.account = d.account and e.business_date = d.business_date::date) as books_currencies,
      (select max(e.source) from expected_balances e where e.account = d.account and e.business_date = d.business_date::date) as books_source,
      (select max(e.import_id) from expected_balances e where e.account = d.account and e.business_date = d.business_date::date) as books_import_id
    from (${sql.raw(FROM_BASE_TABLES)}) d order by d.account, d.business_date`.execute(db)).rows;
  return { stored, counted };
}

async function expectFollowsInputs(): Promise<void> {
  const { status, base } = await statusAndBaseTables();
  expect(status.length).toBeGreaterThan(0);
  expect(status).toEqual(base);
  const { stored, counted } = await countsStoredAndCounted();
  expect(stored).toEqual(counted);
}

describe(`reconciliation_days follows its inputs whoever changes them (${backend})`, { timeout: 60_000 }, () => {
  it('holds what the history leaves: current dates, the last one awaiting books', async () => {
    await expectFollowsInputs();
    expect(await stateOf(A, '2026-11-24')).toBe('current');
    expect(await stateOf(A, '2026-11-25')).toBe('awaiting_books');
  });

  it('a succeeded run inserted by hand lists its date; failed, it is no capture', async () => {
    const db = t.handle.db;
    await sql`
      insert into snapshot_runs (account, environment, trigger, business_date, status, started_at, finished_at, wallets_fetched, pages_fetched, requests, cutoff_at, cutoff_drift_seconds, end_of_day, reads_finished_at)
      select account, environment, 'manual', '2026-11-26', 'succeeded', started_at, finished_at, wallets_fetched, pages_fetched, requests, cutoff_at + interval '1 day', 0, true, reads_finished_at + interval '1 day'
      from snapshot_runs where account = ${A} and business_date = '2026-11-25'`.execute(db);
    expect(await stateOf(A, '2026-11-26')).toBe('owed');
    await expectFollowsInputs();
    await sql`update snapshot_runs set status = 'failed', error = 'failed by hand' where account = ${A} and business_date = '2026-11-26'`.execute(db);
    await sql`delete from reconciliation_owed where account = ${A} and business_date = '2026-11-26'`.execute(db);
    expect(await stateOf(A, '2026-11-26')).toBeUndefined();
    await expectFollowsInputs();
  });

  it('a run by hand lists its date only once it succeeds, and not after it is deleted', async () => {
    const db = t.handle.db;
    // Only succeeded runs are in a day, so a run's start is not recomputed: its success is.
    await sql`
      insert into snapshot_runs (account, environment, trigger, business_date, status, started_at)
      select account, environment, 'manual', '2026-11-27', 'running', started_at
      from snapshot_runs where account = ${B} and business_date = '2026-11-25'`.execute(db);
    expect(await stateOf(B, '2026-11-27')).toBeUndefined();
    await expectFollowsInputs();
    await sql`
      update snapshot_runs set status = 'succeeded', finished_at = started_at + interval '1 minute', end_of_day = true,
        cutoff_at = started_at + interval '2 days', cutoff_drift_seconds = 0, reads_finished_at = started_at + interval '1 minute'
      where account = ${B} and business_date = '2026-11-27'`.execute(db);
    expect(await stateOf(B, '2026-11-27')).toBe('owed');
    await expectFollowsInputs();
    await sql`delete from snapshot_runs where account = ${B} and business_date = '2026-11-27'`.execute(db);
    await sql`delete from reconciliation_owed where account = ${B} and business_date = '2026-11-27'`.execute(db);
    expect(await stateOf(B, '2026-11-27')).toBeUndefined();
    await expectFollowsInputs();
  });

  it('books inserted by hand for a day never captured list it as not captured; updated, the newest import counts', async () => {
    const db = t.handle.db;
    await sql`
      insert into expected_balances (account, business_date, currency, balance, source, import_id, imported_at)
      select account, '2026-12-01', currency, balance, source, import_id, imported_at from expected_balances where account = ${B} and business_date = '2026-11-24'`.execute(db);
    await sql`delete from reconciliation_owed where business_date = '2026-12-01'`.execute(db);
    expect(await stateOf(B, '2026-12-01')).toBe('not_captured');
    await expectFollowsInputs();
    await sql`update expected_balances set import_id = null where account = ${B} and business_date = '2026-11-24'`.execute(db);
    await expectFollowsInputs();
    expect(await stateOf(B, '2026-11-24')).toBe('owed');
  });

  it('results changed by hand: deleted (owed), awaiting books past the deadline (no_books), moved to another date', async () => {
    const db = t.handle.db;
    await sql`delete from reconciliation_results where account = ${A} and business_date = '2026-11-23'`.execute(db);
    expect(await stateOf(A, '2026-11-23')).toBe('owed');
    await expectFollowsInputs();
    await sql`update reconciliation_results set status = 'awaiting_books', books_deadline_at = '2000-01-01T00:00:00Z' where account = ${A} and business_date = '2026-11-24'`.execute(db);
    expect(await stateOf(A, '2026-11-24')).toBe('no_books');
    await expectFollowsInputs();
    await sql`update reconciliation_results set business_date = '2026-11-30' where account = ${B} and business_date = '2026-11-22'`.execute(db);
    expect(await stateOf(B, '2026-11-30')).toBe('not_captured');
    await expectFollowsInputs();
  });

  it('owed marks and misses written and removed by hand', async () => {
    const db = t.handle.db;
    await sql`insert into reconciliation_owed (account, business_date, reason, owed_at, seq) select ${B}, '2026-11-23', 'by hand', now(), coalesce(max(seq), 0) + 1 from reconciliation_owed`.execute(db);
    expect(await stateOf(B, '2026-11-23')).toBe('owed');
    await expectFollowsInputs();
    await sql`delete from reconciliation_owed where account = ${B} and business_date = '2026-11-23'`.execute(db);
    expect(await stateOf(B, '2026-11-23')).toBe('current');
    await sql`insert into missed_dates (account, business_date, cutoff_at, window_closed_at, recorded_at) values (${B}, '2026-12-05', now(), now(), now())`.execute(db);
    expect(await stateOf(B, '2026-12-05')).toBe('owed');
    await sql`delete from reconciliation_owed where account = ${B} and business_date = '2026-12-05'`.execute(db);
    expect(await stateOf(B, '2026-12-05')).toBe('not_captured');
    await expectFollowsInputs();
    await sql`delete from missed_dates where account = ${B} and business_date = '2026-12-05'`.execute(db);
    expect(await stateOf(B, '2026-12-05')).toBeUndefined();
    await expectFollowsInputs();
  });

  it('a bank statement inserted by hand makes its date a bank date', async () => {
    const db = t.handle.db;
    const imported = await sql<{ id: number }>`insert into statement_imports (imported_at, files, statements) values (now(), 'by-hand.xml', 1) returning id`.execute(db);
    await sql`
      insert into bank_statements (account, statement_id, format, intraday, business_date, currency, scale, closing, entries, fingerprint, proof, import_id, source_file)
      values ('bank-eur', 'S-1', 'camt.053', false, '2026-11-20', 'EUR', 2, 100, 0, 'f', 'ok', ${imported.rows[0]!.id}, 'by-hand.xml')`.execute(db);
    expect(await stateOf('bank-eur', '2026-11-20')).toBe('owed');
    await expectFollowsInputs();
    await sql`delete from bank_statements where account = 'bank-eur'`.execute(db);
    await sql`delete from reconciliation_owed where account = 'bank-eur'`.execute(db);
    expect(await stateOf('bank-eur', '2026-11-20')).toBeUndefined();
    await expectFollowsInputs();
  });

  it('a change rolled back leaves the state as it was', async () => {
    const before = await statusAndBaseTables();
    await expect(
      t.handle.db.transaction().execute(async (trx) => {
        await sql`delete from reconciliation_results where business_date = '2026-11-24'`.execute(trx);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect((await statusAndBaseTables()).status).toEqual(before.status);
  });

  it('a date whose every input is deleted is no longer listed', async () => {
    const db = t.handle.db;
    for (const table of ['reconciliation_results', 'expected_balances', 'reconciliation_owed']) {
      await sql`delete from ${sql.id(table)} where account = ${B} and business_date = '2026-11-25'`.execute(db);
    }
    await sql`delete from balance_snapshots where run_id in (select id from snapshot_runs where account = ${B} and business_date = '2026-11-25')`.execute(db);
    await sql`delete from snapshot_runs where account = ${B} and business_date = '2026-11-25'`.execute(db);
    await sql`delete from reconciliation_owed where account = ${B} and business_date = '2026-11-25'`.execute(db);
    expect(await stateOf(B, '2026-11-25')).toBeUndefined();
    await expectFollowsInputs();
  });
});
