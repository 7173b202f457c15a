/**
 * The names of the migrations of migrations/index.ts, in the order they apply, without their
 * code: checking that a database is current needs only the names, and every command but
 * `migrate` (and the embedded database's open) would otherwise load and compile all of them
 * (about 150 kB of the bundle) at each start. A test checks that this list and
 * migrations/index.ts agree, so a new migration cannot be forgotten here.
 */
export const MIGRATION_NAMES: readonly string[] = [
  '2026-11-21T0001_initial-schema',
  '2026-11-21T0002_reconciliation',
  '2026-11-22T0001_business-dates',
  '2026-11-22T0002_reconciliation-cases',
  '2026-11-22T0003_notifications',
  '2026-11-26T0001_reconciliation-state',
  '2026-11-26T0002_case-and-outbox-fencing',
  '2026-11-26T0003_amount-scale',
  '2026-11-26T0004_books-sources',
  '2026-11-26T0005_console',
  '2026-11-26T0006_lock-fencing',
  '2026-11-27T2701_signoff-close',
  '2026-11-27T2801_console-sign-in-and-sso-binding',
  '2026-11-27T2901_day-scoped-queries',
  '2026-11-27T3001_bank-statements',
  '2026-11-27T3101_snapshot-run-worker',
  '2026-11-27T3201_major-unit-columns',
  '2026-11-27T3301_import-profiles',
  '2026-11-27T3351_unknown-decimals',
  '2026-11-27T3352_books-deadline-in-status',
  '2026-11-27T3601_keyed-authoritative-lookups',
  '2026-11-27T3602_reconciliation-days',
  '2026-11-27T4001_case-age-in-business-time',
  '2026-11-28T5101_covering-run-balances',
  '2026-12-02T1000_view-definitions',
  '2026-12-02T1100_statuses-for-open-work',
  '2026-12-02T2001_statement-locks',
  '2026-12-02T2101_signoff-steps',
  '2026-12-02T3001_stored-files',
  '2026-12-02T3100_statements-as-banks-send-them',
  '2026-12-02T3200_statement-pages-and-notifications',
  '2026-12-02T5000_books-entries-and-matches',
  '2026-12-02T5101_entry-item-overdue',
  '2026-12-02T5501_reconciling-items',
  '2026-12-02T6501_named-import-profiles',
  '2026-12-02T6502_business-calendar',
  '2026-12-02T6601_run-cutoff-timezone',
  '2026-12-02T7001_problem-notifications',
  '2026-12-02T7101_notification-fold-groups',
  '2026-12-02T8001_evidence-pack',
];
