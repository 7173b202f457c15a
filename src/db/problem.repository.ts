import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, ProblemsTable } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The problem events decided for a business date, by type: which fingerprints were new, changed or cleared on it. */
export async function listProblemEventsOfDate(db: Db, businessDate: string, accounts: readonly string[]): Promise<Array<{ eventType: string; fingerprint: string }>> {
  if (accounts.length === 0) return [];
  const rows = await db
    .selectFrom('notification_decisions')
    .select(['event_type', 'fingerprint'])
    .distinct()
    .where('business_date', '=', businessDate)
    .where('account', 'in', [...accounts])
    .where('event_type', 'in', ['problem.new', 'problem.changed', 'problem.cleared'])
    .where('fingerprint', 'is not', null)
    .execute();
  return rows.map((r) => ({ eventType: r.event_type, fingerprint: r.fingerprint! }));
}

/** The stored problems of these fingerprints. */
export async function listProblems(db: Db, fingerprints: readonly string[]): Promise<ProblemsTable[]> {
  if (fingerprints.length === 0) return [];
  return db.selectFrom('problems').selectAll().where('fingerprint', 'in', [...fingerprints]).execute();
}

/** A case's snooze as people read it. */
export interface CaseSnooze {
  caseId: number;
  untilDate: string;
  note: string;
  snoozedBy: string;
  snoozedAt: Date;
}

/** The snoozes of these cases still running on `onDate` (a snooze covers its until date and ends by itself after it). */
export async function listRunningSnoozes(db: Db, caseIds: readonly number[], onDate: string): Promise<Map<number, CaseSnooze>> {
  if (caseIds.length === 0) return new Map();
  const rows = await db.selectFrom('case_snoozes').selectAll().where('case_id', 'in', [...caseIds]).where('until_date', '>=', onDate).execute();
  return new Map(rows.map((r) => [r.case_id, { caseId: r.case_id, untilDate: String(r.until_date), note: r.note, snoozedBy: r.snoozed_by, snoozedAt: r.snoozed_at }]));
}

/** The amount each problem.changed of a business date moved from (major units), read from the event written to the outbox. */
export async function listChangedFromAmounts(db: Db, businessDate: string): Promise<Map<string, string | null>> {
  const rows = await db
    .selectFrom('notifications')
    .select(sql<unknown>`payload->'data'`.as('data'))
    .where('event_type', '=', 'problem.changed')
    .where(sql<boolean>`payload->'data'->>'businessDate' = ${businessDate}`)
    .execute();
  const out = new Map<string, string | null>();
  for (const r of rows) {
    const data = (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as { fingerprint?: string; previousAmount?: string | null };
    if (data.fingerprint !== undefined) out.set(data.fingerprint, data.previousAmount ?? null);
  }
  return out;
}
