import type { Migration } from 'kysely';
import * as initialSchema from './2026-11-21T0001_initial-schema.js';
import * as reconciliation from './2026-11-21T0002_reconciliation.js';
import * as businessDates from './2026-11-22T0001_business-dates.js';
import * as reconciliationCases from './2026-11-22T0002_reconciliation-cases.js';
import * as notifications from './2026-11-22T0003_notifications.js';
import * as lockFencing from './2026-11-26T0006_lock-fencing.js';

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
  '2026-11-26T0006_lock-fencing': lockFencing,
};
