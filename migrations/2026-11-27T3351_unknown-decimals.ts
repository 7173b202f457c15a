import { sql, type Kysely } from 'kysely';

// A wallet whose currency has no known decimals (XAG, or a code ISO 4217 lacks, without
// GATEWAY_AMOUNT_DECIMALS_<CODE>) is captured as its raw integer (scale null) instead of failing
// the account's run, and reconciled as `unknown_decimals`: a result, and a case, saying which
// setting to add. Only the two checks that list the statuses and case kinds change (keeping the
// bank statements' statuses and kinds of 2026-11-27T3001).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table reconciliation_results drop constraint reconciliation_results_status_check`.execute(db);
  await sql`
    alter table reconciliation_results
      add constraint reconciliation_results_status_check check (status in
        ('matched', 'break', 'missing_in_ledger', 'missing_in_gateway', 'endpoint_mismatch', 'no_snapshot', 'disappeared', 'unknown_decimals', 'awaiting_books', 'no_books', 'roll_forward_break', 'sequence_gap', 'awaiting_statement', 'no_statement'))`.execute(db);
  await sql`alter table reconciliation_cases drop constraint reconciliation_cases_kind_check`.execute(db);
  await sql`
    alter table reconciliation_cases
      add constraint reconciliation_cases_kind_check check (kind in
        ('break', 'missing_in_ledger', 'missing_in_gateway', 'endpoint_mismatch', 'disappeared', 'unknown_decimals', 'no_snapshot', 'no_books', 'roll_forward_break', 'sequence_gap', 'no_statement'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from reconciliation_results where status = 'unknown_decimals'`.execute(db);
  await sql`delete from reconciliation_cases where kind = 'unknown_decimals'`.execute(db);
  await sql`alter table reconciliation_results drop constraint reconciliation_results_status_check`.execute(db);
  await sql`
    alter table reconciliation_results
      add constraint reconciliation_results_status_check check (status in
        ('matched', 'break', 'missing_in_ledger', 'missing_in_gateway', 'endpoint_mismatch', 'no_snapshot', 'disappeared', 'awaiting_books', 'no_books', 'roll_forward_break', 'sequence_gap', 'awaiting_statement', 'no_statement'))`.execute(db);
  await sql`alter table reconciliation_cases drop constraint reconciliation_cases_kind_check`.execute(db);
  await sql`
    alter table reconciliation_cases
      add constraint reconciliation_cases_kind_check check (kind in ('break', 'missing_in_ledger', 'missing_in_gateway', 'endpoint_mismatch', 'disappeared', 'no_snapshot', 'no_books', 'roll_forward_break', 'sequence_gap', 'no_statement'))`.execute(db);
}
