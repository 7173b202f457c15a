import type { Migration } from 'kysely';
import * as initialSchema from './2026-11-21T0001_initial-schema.js';
import * as reconciliation from './2026-11-21T0002_reconciliation.js';
import * as businessDates from './2026-11-22T0001_business-dates.js';
import * as reconciliationCases from './2026-11-22T0002_reconciliation-cases.js';
import * as notifications from './2026-11-22T0003_notifications.js';
import * as reconciliationState from './2026-11-26T0001_reconciliation-state.js';
import * as caseAndOutboxFencing from './2026-11-26T0002_case-and-outbox-fencing.js';
import * as amountScale from './2026-11-26T0003_amount-scale.js';
import * as booksSources from './2026-11-26T0004_books-sources.js';
import * as console_ from './2026-11-26T0005_console.js';
import * as lockFencing from './2026-11-26T0006_lock-fencing.js';
import * as signoffClose from './2026-11-27T2701_signoff-close.js';
import * as consoleSignInAndSsoBinding from './2026-11-27T2801_console-sign-in-and-sso-binding.js';
import * as dayScopedQueries from './2026-11-27T2901_day-scoped-queries.js';
import * as bankStatements from './2026-11-27T3001_bank-statements.js';
import * as snapshotRunWorker from './2026-11-27T3101_snapshot-run-worker.js';
import * as majorUnitColumns from './2026-11-27T3201_major-unit-columns.js';
import * as importProfiles from './2026-11-27T3301_import-profiles.js';
import * as unknownDecimals from './2026-11-27T3351_unknown-decimals.js';
import * as booksDeadlineInStatus from './2026-11-27T3352_books-deadline-in-status.js';
import * as keyedAuthoritativeLookups from './2026-11-27T3601_keyed-authoritative-lookups.js';
import * as reconciliationDays from './2026-11-27T3602_reconciliation-days.js';
import * as caseAgeInBusinessTime from './2026-11-27T4001_case-age-in-business-time.js';
import * as coveringRunBalances from './2026-11-28T5101_covering-run-balances.js';
import * as viewDefinitions from './2026-12-02T1000_view-definitions.js';
import * as statusesForOpenWork from './2026-12-02T1100_statuses-for-open-work.js';
import * as storedFiles from './2026-12-02T3001_stored-files.js';
import * as statementLocks from './2026-12-02T2001_statement-locks.js';
import * as signoffSteps from './2026-12-02T2101_signoff-steps.js';
import * as statementsAsBanksSendThem from './2026-12-02T3100_statements-as-banks-send-them.js';
import * as statementPagesAndNotifications from './2026-12-02T3200_statement-pages-and-notifications.js';
import * as booksEntriesAndMatches from './2026-12-02T5000_books-entries-and-matches.js';
import * as entryItemOverdue from './2026-12-02T5101_entry-item-overdue.js';
import * as reconcilingItems from './2026-12-02T5501_reconciling-items.js';
import * as namedImportProfiles from './2026-12-02T6501_named-import-profiles.js';
import * as businessCalendar from './2026-12-02T6502_business-calendar.js';
import * as runCutoffTimezone from './2026-12-02T6601_run-cutoff-timezone.js';
import * as problemNotifications from './2026-12-02T7001_problem-notifications.js';
import * as notificationFoldGroups from './2026-12-02T7101_notification-fold-groups.js';
import * as evidencePack from './2026-12-02T8001_evidence-pack.js';
import * as plannedDayRefresh from './2026-12-03T1001_planned-day-refresh.js';

/**
 * Every migration by its name (the file name without extension), in the order they apply.
 * Listed by hand so the bundled CLI carries them and reads no folder at run time; a test checks
 * that this list and the files of this folder agree, so a new file cannot be forgotten here.
 */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '2026-11-21T0001_initial-schema': initialSchema,
  '2026-11-21T0002_reconciliation': reconciliation,
  '2026-11-22T0001_business-dates': businessDates,
  '2026-11-22T0002_reconciliation-cases': reconciliationCases,
  '2026-11-22T0003_notifications': notifications,
  '2026-11-26T0001_reconciliation-state': reconciliationState,
  '2026-11-26T0002_case-and-outbox-fencing': caseAndOutboxFencing,
  '2026-11-26T0003_amount-scale': amountScale,
  '2026-11-26T0004_books-sources': booksSources,
  '2026-11-26T0005_console': console_,
  '2026-11-26T0006_lock-fencing': lockFencing,
  '2026-11-27T2701_signoff-close': signoffClose,
  '2026-11-27T2801_console-sign-in-and-sso-binding': consoleSignInAndSsoBinding,
  '2026-11-27T2901_day-scoped-queries': dayScopedQueries,
  '2026-11-27T3001_bank-statements': bankStatements,
  '2026-11-27T3101_snapshot-run-worker': snapshotRunWorker,
  '2026-11-27T3201_major-unit-columns': majorUnitColumns,
  '2026-11-27T3301_import-profiles': importProfiles,
  '2026-11-27T3351_unknown-decimals': unknownDecimals,
  '2026-11-27T3352_books-deadline-in-status': booksDeadlineInStatus,
  '2026-11-27T3601_keyed-authoritative-lookups': keyedAuthoritativeLookups,
  '2026-11-27T3602_reconciliation-days': reconciliationDays,
  '2026-11-27T4001_case-age-in-business-time': caseAgeInBusinessTime,
  '2026-11-28T5101_covering-run-balances': coveringRunBalances,
  '2026-12-02T1000_view-definitions': viewDefinitions,
  '2026-12-02T1100_statuses-for-open-work': statusesForOpenWork,
  '2026-12-02T2001_statement-locks': statementLocks,
  '2026-12-02T2101_signoff-steps': signoffSteps,
  '2026-12-02T3001_stored-files': storedFiles,
  '2026-12-02T3100_statements-as-banks-send-them': statementsAsBanksSendThem,
  '2026-12-02T3200_statement-pages-and-notifications': statementPagesAndNotifications,
  '2026-12-02T5000_books-entries-and-matches': booksEntriesAndMatches,
  '2026-12-02T5101_entry-item-overdue': entryItemOverdue,
  '2026-12-02T5501_reconciling-items': reconcilingItems,
  '2026-12-02T6501_named-import-profiles': namedImportProfiles,
  '2026-12-02T6502_business-calendar': businessCalendar,
  '2026-12-02T6601_run-cutoff-timezone': runCutoffTimezone,
  '2026-12-02T7001_problem-notifications': problemNotifications,
  '2026-12-02T7101_notification-fold-groups': notificationFoldGroups,
  '2026-12-02T8001_evidence-pack': evidencePack,
  '2026-12-03T1001_planned-day-refresh': plannedDayRefresh,
};
