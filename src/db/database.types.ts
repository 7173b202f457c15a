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
  | 'disappeared'
  | 'unknown_decimals'
  | 'awaiting_books'
  | 'no_books'
  | 'roll_forward_break'
  | 'sequence_gap'
  | 'awaiting_statement'
  | 'no_statement'
  | 'explained'
  /** Beyond tolerance but within materiality (issue 45): recorded and counted, no case, no alert. */
  | 'immaterial'
  | 'conflicting_statements';

/** Where a result's balance came from: the gateway's wallets or a bank account's statement. */
export type ResultSource = 'gateway' | 'bank';

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
  /** The worker that made the run (host:pid); `holder` before 2026-11-27. */
  worker: string | null;
  source: string | null;
  /** The cut-off instant of the run's business date, as configured when it ran. */
  cutoff_at: Date | null;
  /** Reads finished (start while running) minus `cutoff_at`, in seconds, negative before it: the drift from the cut-off the run was captured against, what is shown (business-date/capture-drift.ts). */
  cutoff_drift_seconds: number | null;
  /** The time zone `cutoff_at` was read in (the rules the run was captured under); null for runs recorded before it was kept. */
  cutoff_timezone: ColumnType<string | null, string | null | undefined, string | null>;
  /** Started inside the date's capture window (or imported from statements): an end-of-day snapshot. */
  end_of_day: ColumnType<boolean, boolean | undefined, boolean>;
  /** When the run's gateway reads finished: what decides its business date and drift. */
  reads_finished_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** Why a succeeded run deserves a second look (wallets the single read could not confirm). */
  warning: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface MissedDatesTable {
  account: string;
  business_date: DateString;
  cutoff_at: Date;
  window_closed_at: Date;
  recorded_at: Date;
  last_error: string | null;
}

export interface BooksImportsTable {
  id: Generated<number>;
  source: string;
  imported_at: Date;
  rows: number;
  /** How the books arrived: csv, xlsx, jsonl or sql (null for imports before sources were recorded). */
  format: ColumnType<BooksFormatName | null, BooksFormatName | null | undefined, never>;
  /** The unit the source wrote amounts in (null for imports before sources were recorded). */
  amounts: ColumnType<'major' | 'minor' | null, 'major' | 'minor' | null | undefined, never>;
  /** The SHA-256 of the books file's original bytes (in stored_files); null for a pull or an import before files were kept. */
  file_sha256: ColumnType<string | null, string | null | undefined, string | null>;
  /** A pull's query text, as run; null for a file. */
  sql_query: ColumnType<string | null, string | null | undefined, string | null>;
  /** A pull's digest of the rows the query returned (SHA-256 hex); null for a file. */
  rows_sha256: ColumnType<string | null, string | null | undefined, string | null>;
}

export type BooksFormatName = 'csv' | 'xlsx' | 'jsonl' | 'sql';

/** An account's saved import profile (`ledger import --save-profile`). */
/** A source's named import profile (`ledger import --profile NAME`); its files may name any configured account. */
export interface NamedImportProfilesTable {
  name: string;
  /** jsonb: the saved options; written as JSON text, read back parsed. */
  settings: ColumnType<unknown, string, string>;
  saved_at: Date;
}

/** The business calendar, each row effective from a business date (the database's, not a process's). */
export interface BusinessCalendarTable {
  effective_from: ColumnType<string, string, string>;
  timezone: string;
  cutoff: string;
  capture_window_ms: ColumnType<string, string | number, string | number>;
  books_deadline_ms: ColumnType<string, string | number, string | number>;
  statement_deadline_ms: ColumnType<string, string | number, string | number>;
  recorded_at: Date;
}

export interface ImportProfilesTable {
  account: string;
  /** jsonb: the saved options; written as JSON text, read back parsed. */
  settings: ColumnType<unknown, string, string>;
  saved_at: Date;
}

export type CaptureDayStatus = 'captured' | 'missed' | 'pending';

export interface CaptureDaysView {
  account: string;
  business_date: DateString;
  status: CaptureDayStatus;
  run_id: number | null;
  attempts: number;
  cutoff_drift_seconds: number | null;
  end_of_day: boolean | null;
  last_error: string | null;
}

export interface AuthoritativeRunsView {
  run_id: number;
  account: string;
  business_date: DateString;
  end_of_day: boolean;
  cutoff_at: Date | null;
  cutoff_drift_seconds: number | null;
  trigger: RunTrigger;
  started_at: Date;
  reads_finished_at: Date;
  /** An end-of-day capture whose reads finished after the cut-off (none finished before it). */
  after_cutoff: boolean;
  /** Why this run is the date's snapshot, for people. */
  reason: string;
}

export type ReconciliationState = 'current' | 'owed' | 'awaiting_books' | 'no_books' | 'awaiting_statement' | 'not_captured';

export interface ReconciliationStatusView {
  account: string;
  business_date: DateString;
  state: ReconciliationState;
  run_id: number | null;
  books_import_id: number | null;
  reconciled_at: Date | null;
  owed_reason: string | null;
  /** While the date's books are awaited: when they are due. */
  books_deadline_at: Date | null;
  source: ResultSource;
  /** The end-of-day statement a bank date is reconciled from (null for gateway dates). */
  bank_statement_id: number | null;
  /** How many of its results are explained by open reconciling items. */
  explained: number;
  /** The cut-off its run was captured against, and the zone it was read in (null: no run, or a run that kept no zone). */
  cutoff_at: Date | null;
  cutoff_timezone: string | null;
  /** That cut-off's local time in its zone, HH:MM. */
  cutoff_local: string | null;
  /** When the run's reads finished minus its own cut-off, in seconds (null for a statement's day or without a run). */
  cutoff_drift_seconds: number | null;
}

export interface ReconciliationOwedTable {
  account: string;
  business_date: DateString;
  reason: string;
  owed_at: Date;
  seq: ColumnType<string, string | number, string | number>;
}

/**
 * Derived state, written only by the triggers of migration 2026-11-27T3602: per account-date, what
 * its inputs hold (the authoritative run, the books, the bank statement, the owed mark, the
 * results). `reconciliation_status` reads it; never write it from the application.
 */
export interface ReconciliationDaysTable {
  account: string;
  business_date: DateString;
  run_id: number | null;
  books_import_id: number | null;
  books_currencies: number;
  books_source: string | null;
  books_imported_at: Date | null;
  statement_pk: number | null;
  owed: boolean;
  owed_reason: string | null;
  results: number;
  not_matched: number;
  results_run_id: number | null;
  results_books_import_id: number | null;
  reconciled_at: Date | null;
  awaiting: boolean | null;
  awaiting_statement: boolean | null;
  bank: boolean | null;
  results_bank_statement_id: number | null;
  books_deadline_at: Date | null;
}

export interface ScheduledAccountsTable {
  account: string;
  first_business_date: DateString;
  first_slot: Date;
}

export interface BalanceSnapshotsTable {
  run_id: number;
  account: string;
  currency: string;
  balance: Amount;
  single_balance: Amount | null;
  captured_at: Date;
  /** Why the single-wallet read could not confirm the listed balance (null: confirmed). */
  unconfirmed_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** Decimals of balance and single_balance as captured (IDR 2, or 0 for whole rupiah); null: a code without ISO decimals captured before scales were recorded. */
  scale: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface ExpectedBalancesTable {
  account: string;
  business_date: DateString;
  currency: string;
  balance: Amount;
  source: string;
  imported_at: ColumnType<Date, Date | undefined, Date>;
  import_id: number | null;
  /** Decimals of balance (the currency's ISO 4217 decimals). */
  scale: ColumnType<number | null, number | null | undefined, number | null>;
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
  books_import_id: number | null;
  computed_at: ColumnType<Date, Date | undefined, Date>;
  /** The case the result belongs to; null for matched results. */
  case_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** Why, in words, where the amounts alone do not say it (an unconfirmed wallet). */
  note: ColumnType<string | null, string | null | undefined, string | null>;
  /** Decimals of every amount of the row: the currency's ISO 4217 scale, which snapshots and books are brought to before comparing. */
  scale: ColumnType<number | null, number | null | undefined, number | null>;
  /** For a date awaiting its books: when they are due (RECON_BOOKS_DEADLINE after the cut-off); null otherwise. */
  books_deadline_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** `gateway` (a wallet of the gateway) or `bank` (a bank account: gateway_balance is its statement's closing booked balance). */
  source: ColumnType<ResultSource, ResultSource | undefined, ResultSource>;
  /** The statement a bank result came from (null for gateway results and for dates without a statement). */
  bank_statement_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** The reconciling items open on the date, summed (minor units of `scale`); null where nothing was compared. */
  items_total: ColumnType<Amount | null, Amount | null | undefined, Amount | null>;
  /** Gateway or bank balance − books − items_total: what no item explains; null where nothing was compared. */
  unexplained: ColumnType<Amount | null, Amount | null | undefined, Amount | null>;
}

export type ItemKind = 'outstanding' | 'unrecorded' | 'in_transit' | 'timing' | 'fee' | 'adjustment' | 'other';
export type ItemState = 'open' | 'cleared';

/** A reconciling item a person added (items from unmatched entries are derived, not stored). */
export interface ReconcilingItemsTable {
  id: Generated<number>;
  account: string;
  source: ResultSource;
  currency: string;
  kind: ItemKind;
  /** Signed so that books + items + unexplained = gateway or bank balance; minor units of `scale`. */
  amount: Amount;
  scale: number;
  opened_on: DateString;
  expected_clear: DateString | null;
  state: ColumnType<ItemState, ItemState | undefined, ItemState>;
  cleared_on: DateString | null;
  cleared_by: string | null;
  clear_note: string | null;
  note: string;
  evidence: string | null;
  created_by: string;
  created_at: Date;
  books_entry_id: number | null;
  statement_entry_id: number | null;
  /** The date the item was first seen overdue, when its `item.overdue` was raised. */
  overdue_raised_on: DateString | null;
}

export interface ReconcilingItemEventsTable {
  id: Generated<number>;
  item_id: number;
  at: Date;
  actor: string;
  action: 'added' | 'cleared' | 'overdue';
  note: string | null;
}

/** An item of an unmatched entry raised overdue: its one `item.overdue` (the item itself is derived). */
export interface EntryItemOverdueTable {
  id: Generated<string>;
  account: string;
  currency: string;
  books_entry_id: string | null;
  statement_entry_id: string | null;
  expected_clear: DateString;
  raised_on: DateString;
  raised_at: Date;
}

export interface StatementImportsTable {
  id: Generated<number>;
  imported_at: Date;
  files: string;
  statements: number;
  replaced: ColumnType<number, number | undefined, number>;
}

export type StatementFormatName = 'camt.053' | 'camt.052' | 'camt.054' | 'mt940' | 'mt942' | 'bai2';
export type StatementProofName = 'ok' | 'roll_forward_break' | 'sequence_gap';

export interface BankStatementsTable {
  id: Generated<number>;
  account: string;
  statement_id: string;
  format: StatementFormatName;
  intraday: boolean;
  /** bigint travels as a string of digits. */
  sequence: ColumnType<string | null, string | null, string | null>;
  business_date: DateString;
  from_date: DateString | null;
  to_date: DateString | null;
  currency: string;
  scale: number;
  opening: Amount | null;
  closing: Amount | null;
  entries: number;
  fingerprint: string;
  proof: StatementProofName;
  proof_residual: Amount | null;
  proof_missing: string | null;
  proof_reason: string | null;
  import_id: number;
  source_file: string;
  /** The SHA-256 of the file the statement was read from (its bytes in stored_files); null for statements stored before files were kept. */
  file_sha256: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the bank made the statement (camt CreDtTm); orders two end-of-day statements of one date after their sequence. */
  created_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface BankStatementBalancesTable {
  statement_pk: number;
  position: number;
  code: string;
  amount: Amount;
  balance_date: DateString;
}

export interface BankStatementEntriesTable {
  /** bigint identity (migration 2026-12-02T5000): what a match names. pg returns it as a string. */
  id: ColumnType<string, string | number | undefined, never>;
  statement_pk: number;
  position: number;
  amount: Amount;
  credit_debit: 'credit' | 'debit';
  status: string;
  booking_date: DateString | null;
  value_date: DateString | null;
  reference: string | null;
  bank_reference: string | null;
  details: string | null;
  reversal: boolean;
  /** camt Chrgs: the entry's charges, signed, apart from its amount (migration 2026-12-02T3200). */
  charges: ColumnType<Amount | null, Amount | null | undefined, Amount | null>;
  /** A notification's (camt.054) entry: the end-of-day statement that books the same entry (the bank's reference). */
  linked_statement_pk: ColumnType<number | null, number | null | undefined, number | null>;
}

/** A page of a statement sent in several (camt StmtPgntn), kept until its statement is whole. */
export interface BankStatementPagesTable {
  id: Generated<number>;
  account: string;
  page_key: string;
  statement_id: string;
  sequence: ColumnType<string | null, string | null, string | null>;
  page_number: number;
  last_page: boolean;
  format: StatementFormatName;
  currency: string;
  scale: number;
  business_date: DateString;
  from_date: DateString | null;
  to_date: DateString | null;
  created_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The page's balances as [{ code, amount (minor units, text), date }]. */
  balances: ColumnType<Array<{ code: string; amount: string; date: string }>, string, string>;
  entries: number;
  fingerprint: string;
  import_id: number;
  source_file: string;
  file_sha256: string | null;
  /** The statement the page is part of, once every page arrived; null while it waits. */
  statement_pk: number | null;
}

export interface BankStatementPageEntriesTable {
  page_pk: number;
  position: number;
  amount: Amount;
  credit_debit: 'credit' | 'debit';
  status: string;
  booking_date: DateString | null;
  value_date: DateString | null;
  reference: string | null;
  bank_reference: string | null;
  details: string | null;
  reversal: boolean;
  charges: Amount | null;
}

/** One line of the ledger (`ledger import --entries`): signed minor units at `scale`. */
export interface BooksEntriesTable {
  /** bigint identity: pg returns it as a string. */
  id: ColumnType<string, string | number | undefined, never>;
  account: string;
  currency: string;
  booking_date: DateString;
  value_date: DateString | null;
  amount: Amount;
  scale: number;
  reference: string | null;
  description: string | null;
  /** The ledger's own line id, else a stable key of the line (a hash of its fields and its occurrence number). */
  entry_key: string;
  import_id: number | null;
  imported_at: Date;
}

export type MatchRule = 'reference' | 'amount_date' | 'group_reference' | 'group_window' | 'manual';
export type MatchState = 'active' | 'undone';

/** A match of books entries with statement entries; an entry is matched iff it is a member of an active match. */
export interface EntryMatchesTable {
  id: ColumnType<string, string | number | undefined, never>;
  account: string;
  currency: string;
  /** The date of the match's latest entry. */
  business_date: DateString;
  rule: MatchRule;
  state: ColumnType<MatchState, MatchState | undefined, MatchState>;
  /** 'wallet-recon' for a rule's match, else the person who matched by hand. */
  matched_by: string;
  note: string | null;
  created_at: Date;
  undone_by: string | null;
  undone_at: Date | null;
  undo_note: string | null;
}

/** One entry of a match: exactly one of the two ids is set. */
export interface EntryMatchMembersTable {
  match_id: ColumnType<string, string | number, never>;
  books_entry_id: ColumnType<string | null, string | number | null, never>;
  statement_entry_id: ColumnType<string | null, string | number | null, never>;
}

export interface StatementReplacementsTable {
  id: Generated<number>;
  account: string;
  statement_id: string;
  import_id: number;
  replaced_at: Date;
  old_fingerprint: string;
  new_fingerprint: string;
}

/** What an imported file was, for people and the auditor's pack. */
export type StoredFileKind = 'bank_statement' | 'books_file' | 'gateway_statement_file';

/** An imported file's original bytes, content-addressed: one row per distinct content. */
export interface StoredFilesTable {
  sha256: string;
  /** bigint travels as a string of digits. */
  size: ColumnType<string, string, never>;
  kind: StoredFileKind;
  /** The file's name (without its folder) the first time it arrived. */
  first_name: string;
  stored_at: Date;
  chunks: number;
}

/** The bytes of a stored file, in chunks of at most 1 MiB numbered from 0. */
export interface StoredFileChunksTable {
  sha256: string;
  seq: number;
  bytes: Buffer;
}

export interface DailyBalancesView {
  account: string;
  business_date: DateString;
  currency: string;
  balance: Amount;
  single_balance: Amount | null;
  run_id: number;
  captured_at: Date;
  end_of_day: boolean;
  cutoff_drift_seconds: number | null;
  after_cutoff: boolean;
  unconfirmed_reason: string | null;
  scale: number | null;
  /** balance in major units, exactly (numeric as a decimal string). */
  balance_major: string | null;
  single_balance_major: string | null;
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
  scale: number | null;
  balance_major: string | null;
  previous_balance_major: string | null;
  movement_major: string | null;
}

export type CaseKind =
  | 'break'
  | 'missing_in_ledger'
  | 'missing_in_gateway'
  | 'endpoint_mismatch'
  | 'disappeared'
  | 'unknown_decimals'
  | 'no_snapshot'
  | 'no_books'
  | 'roll_forward_break'
  | 'sequence_gap'
  | 'no_statement'
  | 'overdue_item'
  | 'conflicting_statements';
export type CaseState = 'open' | 'acknowledged' | 'resolved' | 'accepted';
export type CaseResolution = 'auto' | 'fixed' | 'accepted' | 'explained';
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
  /** Days from opened_on to wallet_recon_business_date(now()): the tool's age once the session sets wallet_recon.timezone and wallet_recon.cutoff. */
  age_days: number;
  /** Decimals of latest_difference (those of the case's latest result). */
  scale: number | null;
  latest_difference_major: string | null;
}

/** The results that are not matched, with every amount also in major units (`<column>_major`). */
export interface ReconciliationBreaksView extends Omit<ReconciliationResultsTable, 'scale'> {
  scale: number | null;
  gateway_balance_major: string | null;
  single_balance_major: string | null;
  expected_balance_major: string | null;
  difference_major: string | null;
  movement_major: string | null;
  items_total_major: string | null;
  unexplained_major: string | null;
}

export type NotificationChannel = 'webhook' | 'slack' | 'email';
/** `folded`: kept, carried by a problem.folded summary instead of sent alone; `held`: waiting for quiet hours to end. */
export type NotificationStatus = 'pending' | 'sent' | 'failed' | 'folded' | 'held';

export interface NotificationsTable {
  id: Generated<string>;
  /** The event's id, shared by its rows for each channel (the webhook-id a receiver deduplicates on). */
  event_id: string;
  event_type: string;
  /** What makes an event unique ("night.completed:<slot>"): a second writer of it inserts nothing. */
  dedupe_key: string;
  channel: NotificationChannel;
  /** The event as sent (id, type, timestamp, data); jsonb, read back as an object. */
  payload: ColumnType<unknown, string, string>;
  status: ColumnType<NotificationStatus, NotificationStatus | undefined, NotificationStatus>;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Date;
  /** Claimed by a deliverer until then; an expired lease means its sender died. */
  locked_until: Date | null;
  /** The current claim's token: only the sender holding it may renew the lease or write the outcome. */
  lease_token: string | null;
  last_error: string | null;
  created_at: Date;
  sent_at: Date | null;
  /** The summary a folded row belongs to (a backfill's, `backfill:…`); null for the per-night cap's folding and every other row. */
  fold_group: ColumnType<string | null, string | null | undefined, string | null>;
}

export type ConsoleRole = 'viewer' | 'preparer' | 'approver' | 'admin' | 'auditor';

export interface ConsoleUsersTable {
  id: Generated<number>;
  name: string;
  role: ConsoleRole;
  /** scrypt$N$r$p$salt$hash; null for a user who signs in only through OpenID Connect. */
  password_hash: string | null;
  source: ColumnType<'local' | 'oidc', 'local' | 'oidc' | undefined, 'local' | 'oidc'>;
  disabled_at: Date | null;
  created_at: Date;
  updated_at: Date;
  /** A single sign-on user's issuer and `sub`, bound at their first sign-in; null for a local user. */
  oidc_issuer: ColumnType<string | null, string | null | undefined, string | null>;
  oidc_subject: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ConsoleSessionsTable {
  /** SHA-256 (hex) of the session id the cookie holds; the id itself is never stored. */
  id_sha256: string;
  user_id: number;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  address: string | null;
}

export interface ConsoleSignInAttemptsTable {
  id: Generated<string>;
  user_name: string;
  at: Date;
  address: string | null;
  succeeded: boolean;
}

export interface ConsoleAuditTable {
  id: Generated<string>;
  at: Date;
  user_name: string | null;
  address: string | null;
  action: string;
  target: string | null;
  outcome: 'ok' | 'refused' | 'failed';
  detail: ColumnType<unknown, string | null, never>;
}

export interface SignoffsTable {
  id: Generated<number>;
  account_set: string[];
  business_date: DateString;
  prepared_by: string;
  prepared_at: Date;
  approved_by: string | null;
  approved_at: Date | null;
  report_sha256: string;
  report_html: string;
  /** jsonb: the inputs the date was signed on (see src/signoff/sealed-inputs.ts). */
  inputs: ColumnType<unknown, string, never>;
  invalidated_at: Date | null;
  /** jsonb: what changed after sign-off, as sentences. */
  invalidation: ColumnType<unknown, string | null, string | null>;
  reopened_at: Date | null;
  reopened_by: string | null;
  reopen_note: string | null;
  /** Hash chain (migration 2026-11-27T2701): written by the database's trigger, never by the code. */
  chain_seq: ColumnType<string | null, never, never>;
  prev_hash: ColumnType<string | null, never, never>;
  seal_hash: ColumnType<string | null, never, never>;
  approval_hash: ColumnType<string | null, never, never>;
  invalidation_hash: ColumnType<string | null, never, never>;
  reopen_hash: ColumnType<string | null, never, never>;
}

/** An Ed25519 signature of one sign-off step's hash (RECON_SIGNING_KEY_FILE). */
export interface SignoffSignaturesTable {
  id: Generated<number>;
  signoff_id: number;
  step: 'prepare' | 'approve' | 'reopen';
  signed_hash: string;
  public_key: string;
  signature: string;
}

/** One transition of a sign-off, chained and append-only (migration 2026-12-02T2101). */
export interface SignoffStepsTable {
  id: Generated<string>;
  signoff_id: number;
  kind: 'prepared' | 'approved' | 'invalidated' | 'reopened';
  actor: string;
  at: Date;
  detail: ColumnType<unknown, string, never>;
  chain_seq: Generated<string | null>;
  prev_hash: Generated<string | null>;
  hash: Generated<string | null>;
  public_key: string | null;
  signature: string | null;
}

/** What each sign-off's steps say happened to it (src/db/views/signoff-states.ts). */
export interface SignoffStatesView {
  signoff_id: number;
  approved_by: string | null;
  approved_at: Date | null;
  invalidated_at: Date | null;
  invalidation: unknown;
  reopened_by: string | null;
  reopened_at: Date | null;
  reopen_note: string | null;
}

/** The (account, business date) pairs an approved, standing sign-off locks. */
export interface LockedDatesView {
  signoff_id: number;
  account: string;
  business_date: DateString;
  approved_by: string;
  approved_at: Date;
}

/** The account lock's fencing value, bumped at every acquisition (migration 2026-11-26T0006). */
export interface AccountLockFencesTable {
  account: string;
  /** bigint: pg returns it as a string. */
  fence: ColumnType<string, string | number | bigint, string | number | bigint>;
  acquired_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface Database {
  account_lock_fences: AccountLockFencesTable;
  notifications: NotificationsTable;
  console_users: ConsoleUsersTable;
  console_sessions: ConsoleSessionsTable;
  console_sign_in_attempts: ConsoleSignInAttemptsTable;
  console_audit: ConsoleAuditTable;
  signoffs: SignoffsTable;
  signoff_signatures: SignoffSignaturesTable;
  locked_dates: LockedDatesView;
  signoff_steps: SignoffStepsTable;
  signoff_states: SignoffStatesView;
  snapshot_runs: SnapshotRunsTable;
  balance_snapshots: BalanceSnapshotsTable;
  expected_balances: ExpectedBalancesTable;
  reconciliation_results: ReconciliationResultsTable;
  reconciling_items: ReconcilingItemsTable;
  reconciling_item_events: ReconcilingItemEventsTable;
  entry_item_overdue: EntryItemOverdueTable;
  daily_balances: DailyBalancesView;
  reconciliation_breaks: ReconciliationBreaksView;
  balance_history: BalanceHistoryView;
  missed_dates: MissedDatesTable;
  books_imports: BooksImportsTable;
  import_profiles: ImportProfilesTable;
  named_import_profiles: NamedImportProfilesTable;
  business_calendar: BusinessCalendarTable;
  capture_days: CaptureDaysView;
  authoritative_runs: AuthoritativeRunsView;
  reconciliation_cases: ReconciliationCasesTable;
  case_occurrences: CaseOccurrencesTable;
  case_events: CaseEventsTable;
  open_cases: OpenCasesView;
  reconciliation_owed: ReconciliationOwedTable;
  reconciliation_status: ReconciliationStatusView;
  reconciliation_days: ReconciliationDaysTable;
  scheduled_accounts: ScheduledAccountsTable;
  statement_imports: StatementImportsTable;
  bank_statements: BankStatementsTable;
  bank_statement_balances: BankStatementBalancesTable;
  bank_statement_entries: BankStatementEntriesTable;
  bank_statement_pages: BankStatementPagesTable;
  bank_statement_page_entries: BankStatementPageEntriesTable;
  statement_replacements: StatementReplacementsTable;
  stored_files: StoredFilesTable;
  stored_file_chunks: StoredFileChunksTable;
  books_entries: BooksEntriesTable;
  entry_matches: EntryMatchesTable;
  entry_match_members: EntryMatchMembersTable;
  problems: ProblemsTable;
  notification_decisions: NotificationDecisionsTable;
  case_snoozes: CaseSnoozesTable;
}

export type SnapshotRun = Selectable<SnapshotRunsTable>;
export type NotificationRow = Selectable<NotificationsTable>;
export type ReconciliationResultRow = Selectable<ReconciliationResultsTable>;
export type ReconciliationCaseRow = Selectable<ReconciliationCasesTable>;
export type CaseOccurrenceRow = Selectable<CaseOccurrencesTable>;
export type CaseEventRow = Selectable<CaseEventsTable>;

/** One problem as people are told about it (issue 45): see src/notifications/problems/. */
export interface ProblemsTable {
  fingerprint: string;
  account: string;
  source: string;
  /** '' for an account-level problem. */
  currency: string;
  kind: string;
  sign: '+' | '-' | '0';
  first_date: DateString;
  last_date: DateString;
  /** The amount last announced (problem.new / problem.changed), minor units at `scale`. */
  announced_amount: Amount | null;
  last_amount: Amount | null;
  scale: number | null;
  bucket: string;
  occurrences: number;
  state: 'open' | 'cleared';
  cleared_date: DateString | null;
  updated_at: Date;
}

export type NotificationDecision = 'sent' | 'folded' | 'repeat' | 'snoozed' | 'quiet' | 'immaterial';

/** What became of one event on one channel, and why (`notify log`). */
export interface NotificationDecisionsTable {
  id: Generated<string>;
  event_type: string;
  business_date: DateString | null;
  account: string | null;
  currency: string | null;
  fingerprint: string | null;
  /** '' when no channel is configured. */
  channel: string;
  decision: NotificationDecision;
  reason: string;
  dedupe_key: string;
  created_at: Date;
}

/** A case's snooze: not announced until `until_date` (inclusive) unless it changes materially. */
export interface CaseSnoozesTable {
  case_id: number;
  until_date: DateString;
  note: string;
  snoozed_by: string;
  snoozed_at: Date;
}
