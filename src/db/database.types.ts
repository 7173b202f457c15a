import type { ColumnType, Generated, Selectable } from 'kysely';

/** numeric(38,0) travels as a string of digits: pg never turns it into a float. */
export type Amount = string;
/** `date` columns are read as YYYY-MM-DD strings (see the type parser in open-database.ts). */
export type DateString = string;

export type RunStatus = 'running' | 'succeeded' | 'failed' | 'abandoned';
export type RunTrigger = 'schedule' | 'manual' | 'backfill';
export type ReconciliationStatus =
  | 'matched'
  | 'break'
  | 'missing_in_ledger'
  | 'missing_in_gateway'
  | 'endpoint_mismatch'
  | 'no_snapshot'
  | 'disappeared';

export interface SnapshotRunsTable {
  id: Generated<number>;
  account: string;
  environment: 'live' | 'sandbox';
  trigger: RunTrigger;
  business_date: DateString;
  status: RunStatus;
  started_at: ColumnType<Date, Date | undefined, Date>;
  finished_at: Date | null;
  wallets_reported: number | null;
  wallets_fetched: number | null;
  pages_fetched: number | null;
  requests: number | null;
  error: string | null;
  slot: Date | null;
  holder: string | null;
  source: string | null;
}

export interface BalanceSnapshotsTable {
  run_id: number;
  account: string;
  currency: string;
  balance: Amount;
  single_balance: Amount | null;
  captured_at: Date;
}

export interface ExpectedBalancesTable {
  account: string;
  business_date: DateString;
  currency: string;
  balance: Amount;
  source: string;
  imported_at: ColumnType<Date, Date | undefined, Date>;
}

export interface ReconciliationResultsTable {
  id: Generated<number>;
  account: string;
  business_date: DateString;
  currency: string | null;
  gateway_balance: Amount | null;
  single_balance: Amount | null;
  expected_balance: Amount | null;
  previous_balance: Amount | null;
  movement: Amount | null;
  difference: Amount | null;
  status: ReconciliationStatus;
  run_id: number | null;
  computed_at: ColumnType<Date, Date | undefined, Date>;
  /** The case the result belongs to; null for matched results. */
  case_id: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface DailyBalancesView {
  account: string;
  business_date: DateString;
  currency: string;
  balance: Amount;
  single_balance: Amount | null;
  run_id: number;
  captured_at: Date;
}

export interface BalanceHistoryView {
  account: string;
  business_date: DateString;
  currency: string;
  balance: Amount;
  previous_balance: Amount | null;
  previous_business_date: DateString | null;
  movement: Amount | null;
  run_id: number;
}

export type CaseKind = 'break' | 'missing_in_ledger' | 'missing_in_gateway' | 'endpoint_mismatch' | 'disappeared' | 'no_snapshot';
export type CaseState = 'open' | 'acknowledged' | 'resolved' | 'accepted';
export type CaseResolution = 'auto' | 'fixed' | 'accepted';
export type CaseAction =
  | 'opened'
  | 'seen'
  | 'withdrawn'
  | 'acknowledged'
  | 'assigned'
  | 'noted'
  | 'resolved'
  | 'accepted'
  | 'reopened'
  | 'lapsed'
  | 'auto_resolved';

export interface ReconciliationCasesTable {
  id: Generated<number>;
  account: string;
  currency: string | null;
  kind: CaseKind;
  state: CaseState;
  resolution: CaseResolution | null;
  opened_on: DateString;
  last_seen_on: DateString;
  occurrences: number;
  latest_difference: Amount | null;
  assignee: string | null;
  due_on: DateString | null;
  accepted_until: DateString | null;
  accepted_difference: Amount | null;
  resolved_on: DateString | null;
  updated_at: Date;
}

export interface CaseOccurrencesTable {
  case_id: number;
  business_date: DateString;
  status: ReconciliationStatus;
  difference: Amount | null;
  gateway_balance: Amount | null;
  single_balance: Amount | null;
  expected_balance: Amount | null;
  run_id: number | null;
  seen_at: Date;
}

export interface CaseEventsTable {
  id: Generated<number>;
  case_id: number;
  at: Date;
  actor: string;
  action: CaseAction;
  from_state: CaseState | null;
  to_state: CaseState | null;
  note: string | null;
  /** jsonb; written as JSON text, read back parsed. Amounts inside are strings of digits. */
  evidence: ColumnType<unknown, string | null, never>;
}

export interface OpenCasesView {
  id: number;
  account: string;
  currency: string | null;
  kind: CaseKind;
  state: CaseState;
  opened_on: DateString;
  last_seen_on: DateString;
  occurrences: number;
  latest_difference: Amount | null;
  assignee: string | null;
  due_on: DateString | null;
  age_days: number;
}

export interface Database {
  snapshot_runs: SnapshotRunsTable;
  balance_snapshots: BalanceSnapshotsTable;
  expected_balances: ExpectedBalancesTable;
  reconciliation_results: ReconciliationResultsTable;
  daily_balances: DailyBalancesView;
  reconciliation_breaks: ReconciliationResultsTable;
  balance_history: BalanceHistoryView;
  reconciliation_cases: ReconciliationCasesTable;
  case_occurrences: CaseOccurrencesTable;
  case_events: CaseEventsTable;
  open_cases: OpenCasesView;
}

export type SnapshotRun = Selectable<SnapshotRunsTable>;
export type ReconciliationResultRow = Selectable<ReconciliationResultsTable>;
export type ReconciliationCaseRow = Selectable<ReconciliationCasesTable>;
export type CaseOccurrenceRow = Selectable<CaseOccurrencesTable>;
export type CaseEventRow = Selectable<CaseEventsTable>;
