import { sql, type Kysely } from 'kysely';

// The statuses and case kinds that the work of several issues needs, added in one place so that
// each of them does not re-create these two checks with its own list (the last to run would drop
// the others'): `explained` (a difference reconciling items account for), `immaterial` (beyond
// tolerance, within materiality), `conflicting_statements` (two final statements of one day that
// disagree); cases of kind `overdue_item` and `conflicting_statements`; and the case resolution
// `explained`. Code that does not produce them yet never meets them.
const STATUSES = [
  'matched', 'break', 'missing_in_ledger', 'missing_in_gateway', 'endpoint_mismatch', 'no_snapshot', 'disappeared',
  'unknown_decimals', 'awaiting_books', 'no_books', 'roll_forward_break', 'sequence_gap', 'awaiting_statement', 'no_statement',
];
const KINDS = [
  'break', 'missing_in_ledger', 'missing_in_gateway', 'endpoint_mismatch', 'disappeared', 'unknown_decimals', 'no_snapshot',
  'no_books', 'roll_forward_break', 'sequence_gap', 'no_statement',
];
const NEW_STATUSES = ['explained', 'immaterial', 'conflicting_statements'];
const NEW_KINDS = ['overdue_item', 'conflicting_statements'];

async function setChecks(db: Kysely<unknown>, statuses: string[], kinds: string[]): Promise<void> {
  await sql`alter table reconciliation_results drop constraint reconciliation_results_status_check`.execute(db);
  await sql`alter table reconciliation_results add constraint reconciliation_results_status_check check (status in (${sql.join(statuses.map((s) => sql.lit(s)))}))`.execute(db);
  await sql`alter table reconciliation_cases drop constraint reconciliation_cases_kind_check`.execute(db);
  await sql`alter table reconciliation_cases add constraint reconciliation_cases_kind_check check (kind in (${sql.join(kinds.map((k) => sql.lit(k)))}))`.execute(db);
}

async function setResolutions(db: Kysely<unknown>, resolved: string[]): Promise<void> {
  const all = [...resolved, 'accepted'];
  await sql`alter table reconciliation_cases drop constraint reconciliation_cases_resolution_check`.execute(db);
  await sql`alter table reconciliation_cases add constraint reconciliation_cases_resolution_check check (resolution in (${sql.join(all.map((r) => sql.lit(r)))}))`.execute(db);
  await sql`alter table reconciliation_cases drop constraint reconciliation_cases_state_resolution_check`.execute(db);
  await sql`
    alter table reconciliation_cases add constraint reconciliation_cases_state_resolution_check check (
      (state in ('open', 'acknowledged') and resolution is null)
      or (state = 'resolved' and resolution in (${sql.join(resolved.map((r) => sql.lit(r)))}) and resolved_on is not null)
      or (state = 'accepted' and resolution = 'accepted')
    )`.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await setChecks(db, [...STATUSES, ...NEW_STATUSES], [...KINDS, ...NEW_KINDS]);
  await setResolutions(db, ['auto', 'fixed', 'explained']);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from reconciliation_results where status in (${sql.join(NEW_STATUSES.map((s) => sql.lit(s)))})`.execute(db);
  await sql`delete from reconciliation_cases where kind in (${sql.join(NEW_KINDS.map((k) => sql.lit(k)))})`.execute(db);
  await sql`update reconciliation_cases set resolution = 'auto' where resolution = 'explained'`.execute(db);
  await setResolutions(db, ['auto', 'fixed']);
  await setChecks(db, STATUSES, KINDS);
}
