import { authoritativeRuns } from './authoritative-runs.js';
import { balanceHistory } from './balance-history.js';
import { captureDays } from './capture-days.js';
import { dailyBalances } from './daily-balances.js';
import { lockedDates } from './locked-dates.js';
import { openCases } from './open-cases.js';
import { reconciliationBreaks } from './reconciliation-breaks.js';
import { reconciliationStatus } from './reconciliation-status.js';
import { signoffStates } from './signoff-states.js';
import type { ViewDefinition } from './view-definition.js';

export type { ViewDefinition } from './view-definition.js';
export { inDependencyOrder, viewDependencies } from './view-order.js';

/**
 * Every view of the schema, one file each: the reference of what each view answers. Listed by
 * hand, like migrations/index.ts, so the bundled CLI carries them and reads no folder at run
 * time; a test checks that this list and the files of this folder agree. In any order: `migrate`
 * makes each after the views its query reads.
 */
export const VIEWS: readonly ViewDefinition[] = [
  authoritativeRuns,
  balanceHistory,
  captureDays,
  dailyBalances,
  lockedDates,
  openCases,
  reconciliationBreaks,
  reconciliationStatus,
  signoffStates,
];
