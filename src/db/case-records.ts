import type { CaseAction, CaseKind, CaseResolution, CaseState, ReconciliationStatus } from './database.types.js';

// The records the case repository reads and writes. The case model (src/cases) re-exports them
// and adds the rules; they live here so the database layer imports nothing from above it.

/** A case as services see it; amounts exact. */
export interface ReconciliationCase {
  id: number;
  account: string;
  currency: string | null;
  kind: CaseKind;
  state: CaseState;
  resolution: CaseResolution | null;
  openedOn: string;
  lastSeenOn: string;
  occurrences: number;
  latestDifference: bigint | null;
  assignee: string | null;
  dueOn: string | null;
  acceptedUntil: string | null;
  acceptedDifference: bigint | null;
  resolvedOn: string | null;
}

/** One business date a case was seen on. */
export interface CaseOccurrence {
  caseId: number;
  businessDate: string;
  status: ReconciliationStatus;
  difference: bigint | null;
  gatewayBalance: bigint | null;
  singleBalance: bigint | null;
  expectedBalance: bigint | null;
  runId: number | null;
}

/** One line of a case's audit trail. */
export interface CaseEvent {
  id: number;
  caseId: number;
  at: Date;
  actor: string;
  action: CaseAction;
  fromState: CaseState | null;
  toState: CaseState | null;
  note: string | null;
  evidence: unknown;
}

/** What a result carries of its case, for exit codes and reports. */
export interface ResultCase {
  id: number;
  state: CaseState;
  /** Days from the case's opening to today (active, accepted) or to its resolution. */
  ageDays: number;
  acceptedUntil: string | null;
}
