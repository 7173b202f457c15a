import { sql, type Kysely } from 'kysely';
import { currencyDecimals } from '../src/money/format-amount.js';

// Each stored amount records the scale (number of decimals) its integer was written in, so a
// changed GATEWAY_AMOUNT_UNIT or GATEWAY_AMOUNT_DECIMALS_<CODE> never reinterprets history: a
// wallet captured in whole rupiah stays whole rupiah. Rows stored before were read in ISO 4217
// minor units, so they get their currency's ISO decimals; a code without ISO decimals (the
// emulator's synthetic AAA…) keeps a null scale and is shown in minor units, as it was.
const TABLES = ['balance_snapshots', 'expected_balances', 'reconciliation_results'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) {
    await sql`alter table ${sql.table(table)} add column scale smallint check (scale between 0 and 18)`.execute(db);
    const { rows } = await sql<{ currency: string }>`select distinct currency from ${sql.table(table)} where currency is not null`.execute(db);
    const known = rows.flatMap((r) => {
      const decimals = currencyDecimals(r.currency);
      return decimals === null ? [] : [{ currency: r.currency, decimals }];
    });
    if (known.length === 0) continue;
    await sql`
      update ${sql.table(table)} t set scale = d.decimals
      from unnest(${known.map((k) => k.currency)}::text[], ${known.map((k) => k.decimals)}::smallint[]) as d(currency, decimals)
      where d.currency = t.currency`.execute(db);
  }

  // Views keep their columns and add the scale and exact major-unit amounts at the end (create
  // or replace may only add columns). A movement between two scales is given in the day's scale,
  // exactly: with decimals when the previous day had more (numeric, never a float).
  await sql`
    create or replace view daily_balances as
    select a.account, a.business_date, s.currency, s.balance, s.single_balance, s.run_id, s.captured_at,
      a.end_of_day, a.cutoff_drift_seconds, a.after_cutoff, s.unconfirmed_reason,
      s.scale,
      round(s.balance / 10::numeric ^ s.scale, s.scale) as balance_major
    from authoritative_runs a
    join balance_snapshots s on s.run_id = a.run_id`.execute(db);

  await sql`
    create or replace view balance_history as
    with chained as (
      select run_id as id, account, business_date,
        lag(business_date) over w as previous_business_date,
        lag(run_id) over w as previous_run_id
      from authoritative_runs
      window w as (partition by account order by business_date)
    )
    select c.account, c.business_date, s.currency, s.balance,
      p.balance as previous_balance,
      c.previous_business_date,
      case when s.scale is null or p.scale is null or s.scale = p.scale then s.balance - p.balance
        when s.scale > p.scale then s.balance - p.balance * round(10::numeric ^ (s.scale - p.scale))
        else round(s.balance - p.balance / round(10::numeric ^ (p.scale - s.scale)), p.scale - s.scale) end as movement,
      s.run_id,
      s.scale,
      round(s.balance / 10::numeric ^ s.scale, s.scale) as balance_major,
      round(p.balance / 10::numeric ^ p.scale, p.scale) as previous_balance_major,
      round(s.balance / 10::numeric ^ s.scale, s.scale) - round(p.balance / 10::numeric ^ p.scale, p.scale) as movement_major
    from chained c
    join balance_snapshots s on s.run_id = c.id
    left join balance_snapshots p on p.run_id = c.previous_run_id and p.currency = s.currency`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // A view cannot lose columns in place: both are recreated as 2026-11-26T0001 left them.
  await sql`drop view if exists daily_balances`.execute(db);
  await sql`drop view if exists balance_history`.execute(db);
  await sql`
    create view daily_balances as
    select a.account, a.business_date, s.currency, s.balance, s.single_balance, s.run_id, s.captured_at,
      a.end_of_day, a.cutoff_drift_seconds, a.after_cutoff, s.unconfirmed_reason
    from authoritative_runs a
    join balance_snapshots s on s.run_id = a.run_id`.execute(db);
  await sql`
    create view balance_history as
    with chained as (
      select run_id as id, account, business_date,
        lag(business_date) over w as previous_business_date,
        lag(run_id) over w as previous_run_id
      from authoritative_runs
      window w as (partition by account order by business_date)
    )
    select c.account, c.business_date, s.currency, s.balance,
      p.balance as previous_balance,
      c.previous_business_date,
      s.balance - p.balance as movement,
      s.run_id
    from chained c
    join balance_snapshots s on s.run_id = c.id
    left join balance_snapshots p on p.run_id = c.previous_run_id and p.currency = s.currency`.execute(db);
  for (const table of TABLES) await sql`alter table ${sql.table(table)} drop column scale`.execute(db);
}
