import { sql, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { CaseEvent, CaseOccurrence, ReconciliationCase } from './case-records.js';
import type { CaseAction, CaseKind, CaseState } from './database.types.js';
import type { CaseEventRow, CaseOccurrenceRow, Database, ReconciliationCaseRow, ReconciliationCasesTable } from './database.types.js';
import { exactAmount } from './exact-amount.js';

type Db = Kysely<Database> | Transaction<Database>;

const amountText = (v: bigint | null): string | null => (v === null ? null : v.toString());

/**
 * Waits for, then holds until the transaction ends, the lock of one account's cases: two
 * reconciliations of different dates of one account would otherwise both open the same case,
 * and a manual action committed while a reconciliation holds a case it read would be written
 * over. Everything that changes cases takes it first, so they never wait on each other in a
 * different order.
 */
export async function lockAccountCases(db: Transaction<Database>, account: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`wallet-recon:cases:${account}`}, 0))`.execute(db);
}

/** Every case of an account, whatever its state; with `forUpdate`, locked (in id order) until the transaction ends. */
export async function listCasesOfAccount(db: Db, account: string, options: { forUpdate?: boolean } = {}): Promise<ReconciliationCase[]> {
  let query = db.selectFrom('reconciliation_cases').selectAll().where('account', '=', account).orderBy('id');
  if (options.forUpdate) query = query.forUpdate();
  const rows = await query.execute();
  return rows.map(caseFromRow);
}

/** One case by id; with `forUpdate`, locked until the transaction ends. */
export async function findCase(db: Db, id: number, options: { forUpdate?: boolean } = {}): Promise<ReconciliationCase | undefined> {
  let query = db.selectFrom('reconciliation_cases').selectAll().where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row === undefined ? undefined : caseFromRow(row);
}

/** Cases by id (for reports). */
export async function listCasesByIds(db: Db, ids: readonly number[]): Promise<ReconciliationCase[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('reconciliation_cases').selectAll().where('id', 'in', [...ids]).execute();
  return rows.map(caseFromRow);
}

export interface CaseFilter {
  states?: readonly CaseState[];
  account?: string;
  currency?: string;
  kind?: CaseKind;
}

/** Cases matching a filter, oldest opening first. */
export async function listCases(db: Db, filter: CaseFilter): Promise<ReconciliationCase[]> {
  let query = db.selectFrom('reconciliation_cases').selectAll().orderBy('opened_on').orderBy('id');
  if (filter.states !== undefined) query = query.where('state', 'in', [...filter.states]);
  if (filter.account !== undefined) query = query.where('account', '=', filter.account);
  if (filter.currency !== undefined) query = query.where('currency', '=', filter.currency);
  if (filter.kind !== undefined) query = query.where('kind', '=', filter.kind);
  return (await query.execute()).map(caseFromRow);
}

/** Opens a new case and returns it. */
export async function insertCase(
  db: Db,
  c: Pick<ReconciliationCase, 'account' | 'currency' | 'kind' | 'openedOn' | 'lastSeenOn' | 'latestDifference'>,
  at: Date,
): Promise<ReconciliationCase> {
  const row = await db
    .insertInto('reconciliation_cases')
    .values({
      account: c.account,
      currency: c.currency,
      kind: c.kind,
      state: 'open',
      resolution: null,
      opened_on: c.openedOn,
      last_seen_on: c.lastSeenOn,
      occurrences: 0,
      latest_difference: amountText(c.latestDifference),
      updated_at: at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return caseFromRow(row);
}

/** Writes a case's changed fields. */
export async function updateCase(db: Db, id: number, patch: Partial<Omit<ReconciliationCase, 'id' | 'account' | 'currency' | 'kind'>>, at: Date): Promise<void> {
  const values: Updateable<ReconciliationCasesTable> = { updated_at: at };
  if (patch.state !== undefined) values.state = patch.state;
  if (patch.resolution !== undefined) values.resolution = patch.resolution;
  if (patch.openedOn !== undefined) values.opened_on = patch.openedOn;
  if (patch.lastSeenOn !== undefined) values.last_seen_on = patch.lastSeenOn;
  if (patch.occurrences !== undefined) values.occurrences = patch.occurrences;
  if (patch.latestDifference !== undefined) values.latest_difference = amountText(patch.latestDifference);
  if (patch.assignee !== undefined) values.assignee = patch.assignee;
  if (patch.dueOn !== undefined) values.due_on = patch.dueOn;
  if (patch.acceptedUntil !== undefined) values.accepted_until = patch.acceptedUntil;
  if (patch.acceptedDifference !== undefined) values.accepted_difference = amountText(patch.acceptedDifference);
  if (patch.resolvedOn !== undefined) values.resolved_on = patch.resolvedOn;
  await db.updateTable('reconciliation_cases').set(values).where('id', '=', id).execute();
}

/** The occurrences of an account's cases on one business date. */
export async function listOccurrencesOnDate(db: Db, account: string, businessDate: string): Promise<CaseOccurrence[]> {
  const rows = await db
    .selectFrom('case_occurrences as o')
    .innerJoin('reconciliation_cases as c', 'c.id', 'o.case_id')
    .selectAll('o')
    .where('c.account', '=', account)
    .where('o.business_date', '=', businessDate)
    .execute();
  return rows.map(occurrenceFromRow);
}

/** A case's occurrences, oldest first. */
export async function listOccurrences(db: Db, caseId: number): Promise<CaseOccurrence[]> {
  const rows = await db.selectFrom('case_occurrences').selectAll().where('case_id', '=', caseId).orderBy('business_date').execute();
  return rows.map(occurrenceFromRow);
}

/** How many occurrences a case has: counted in the database, not read row by row (a case seen daily for years has thousands). */
export async function countOccurrences(db: Db, caseId: number): Promise<number> {
  const row = await db.selectFrom('case_occurrences').select((eb) => eb.fn.countAll<string>().as('n')).where('case_id', '=', caseId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Records, or replaces, a case's occurrence on one date. */
export async function upsertOccurrence(db: Db, o: CaseOccurrence, seenAt: Date): Promise<void> {
  const values = {
    status: o.status,
    difference: amountText(o.difference),
    gateway_balance: amountText(o.gatewayBalance),
    single_balance: amountText(o.singleBalance),
    expected_balance: amountText(o.expectedBalance),
    run_id: o.runId,
    seen_at: seenAt,
  };
  await db
    .insertInto('case_occurrences')
    .values({ case_id: o.caseId, business_date: o.businessDate, ...values })
    .onConflict((oc) => oc.columns(['case_id', 'business_date']).doUpdateSet(values))
    .execute();
}

/** Removes a case's occurrence on one date (the withdrawal itself is recorded as an event). */
export async function deleteOccurrence(db: Db, caseId: number, businessDate: string): Promise<void> {
  await db.deleteFrom('case_occurrences').where('case_id', '=', caseId).where('business_date', '=', businessDate).execute();
}

/** Appends one event to a case's audit trail. */
export async function insertEvent(
  db: Db,
  e: { caseId: number; at: Date; actor: string; action: CaseAction; fromState: CaseState | null; toState: CaseState | null; note?: string | null; evidence?: unknown },
): Promise<void> {
  await db
    .insertInto('case_events')
    .values({
      case_id: e.caseId,
      at: e.at,
      actor: e.actor,
      action: e.action,
      from_state: e.fromState,
      to_state: e.toState,
      note: e.note ?? null,
      evidence: e.evidence === undefined || e.evidence === null ? null : JSON.stringify(e.evidence),
    })
    .execute();
}

/** A case's events in the order they happened. */
export async function listEvents(db: Db, caseId: number): Promise<CaseEvent[]> {
  const rows = await db.selectFrom('case_events').selectAll().where('case_id', '=', caseId).orderBy('id').execute();
  return rows.map(eventFromRow);
}

/** Names each stored result of an account and date by its case (null for the rest). */
export async function attachResultsToCases(db: Db, account: string, businessDate: string, links: ReadonlyArray<{ currency: string | null; caseId: number }>): Promise<void> {
  await db.updateTable('reconciliation_results').set({ case_id: null }).where('account', '=', account).where('business_date', '=', businessDate).execute();
  for (const link of links) {
    await db
      .updateTable('reconciliation_results')
      .set({ case_id: link.caseId })
      .where('account', '=', account)
      .where('business_date', '=', businessDate)
      .where(sql<string>`coalesce(currency, '')`, '=', link.currency ?? '')
      .execute();
  }
}

/**
 * The stored results of a case as they are now, every column (amounts as digit strings, so
 * nothing is rounded), with the books import each expected balance came from: the evidence
 * an acceptance freezes.
 */
export async function listCaseEvidence(db: Db, caseId: number): Promise<Array<Record<string, unknown>>> {
  const rows = await db
    .selectFrom('reconciliation_results as r')
    .leftJoin('expected_balances as e', (join) =>
      join.onRef('e.account', '=', 'r.account').onRef('e.business_date', '=', 'r.business_date').onRef('e.currency', '=', 'r.currency'),
    )
    .selectAll('r')
    .select(['e.source as books_source', 'e.imported_at as books_imported_at'])
    .where('r.case_id', '=', caseId)
    .orderBy('r.business_date')
    .execute();
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v])));
}

function caseFromRow(r: ReconciliationCaseRow): ReconciliationCase {
  return {
    id: r.id,
    account: r.account,
    currency: r.currency,
    kind: r.kind,
    state: r.state,
    resolution: r.resolution,
    openedOn: r.opened_on,
    lastSeenOn: r.last_seen_on,
    occurrences: r.occurrences,
    latestDifference: exactAmount(r.latest_difference),
    assignee: r.assignee,
    dueOn: r.due_on,
    acceptedUntil: r.accepted_until,
    acceptedDifference: exactAmount(r.accepted_difference),
    resolvedOn: r.resolved_on,
  };
}

function occurrenceFromRow(r: CaseOccurrenceRow): CaseOccurrence {
  return {
    caseId: r.case_id,
    businessDate: r.business_date,
    status: r.status,
    difference: exactAmount(r.difference),
    gatewayBalance: exactAmount(r.gateway_balance),
    singleBalance: exactAmount(r.single_balance),
    expectedBalance: exactAmount(r.expected_balance),
    runId: r.run_id,
  };
}

function eventFromRow(r: CaseEventRow): CaseEvent {
  return {
    id: r.id,
    caseId: r.case_id,
    at: r.at,
    actor: r.actor,
    action: r.action,
    fromState: r.from_state,
    toState: r.to_state,
    note: r.note,
    evidence: r.evidence,
  };
}

/**
 * For the nightly digest: among the given accounts, the cases that became open on a business
 * date (opened or reopened then), those seen that day that were open before it, and those
 * resolved automatically by that day's clean results.
 */
export async function countCasesOfDate(db: Db, accounts: readonly string[], businessDate: string): Promise<{ new: number; persisting: number; autoResolved: number }> {
  if (accounts.length === 0) return { new: 0, persisting: 0, autoResolved: 0 };
  const seen = await db
    .selectFrom('case_occurrences as o')
    .innerJoin('reconciliation_cases as c', 'c.id', 'o.case_id')
    .select(['c.opened_on'])
    .where('o.business_date', '=', businessDate)
    .where('c.account', 'in', [...accounts])
    .execute();
  const resolved = await db
    .selectFrom('reconciliation_cases')
    .select('id')
    .where('account', 'in', [...accounts])
    .where('resolution', '=', 'auto')
    .where('resolved_on', '=', businessDate)
    .execute();
  const opened = seen.filter((r) => r.opened_on === businessDate).length;
  return { new: opened, persisting: seen.length - opened, autoResolved: resolved.length };
}

/** Whether any case of this account was ever opened (an account renamed since still has its cases). */
export async function hasCasesOfAccount(db: Db, account: string): Promise<boolean> {
  return (await db.selectFrom('reconciliation_cases').select('id').where('account', '=', account).limit(1).executeTakeFirst()) !== undefined;
}

/** A person's latest word on a case: the event, its author and time, the note in full. */
export interface CaseNoteRecord {
  caseId: number;
  action: CaseAction;
  actor: string;
  at: Date;
  note: string;
}

/**
 * The latest note a person wrote on each of these cases (the opening line the tool writes is no
 * note), and the note of its latest acceptance: what a sealed report says of each case.
 */
export async function listLatestCaseNotes(db: Db, caseIds: readonly number[]): Promise<{ latest: CaseNoteRecord[]; acceptances: CaseNoteRecord[] }> {
  if (caseIds.length === 0) return { latest: [], acceptances: [] };
  const rows = await db
    .selectFrom('case_events')
    .select(['case_id', 'action', 'actor', 'at', 'note'])
    .where('case_id', 'in', [...caseIds])
    .where('note', 'is not', null)
    .where('action', 'not in', ['opened', 'seen', 'auto_resolved', 'withdrawn', 'lapsed'])
    .orderBy('case_id')
    .orderBy('id', 'desc')
    .execute();
  const latest = new Map<number, CaseNoteRecord>();
  const acceptances = new Map<number, CaseNoteRecord>();
  for (const r of rows) {
    const record = { caseId: r.case_id, action: r.action, actor: r.actor, at: r.at, note: r.note! };
    if (!latest.has(r.case_id)) latest.set(r.case_id, record);
    if (r.action === 'accepted' && !acceptances.has(r.case_id)) acceptances.set(r.case_id, record);
  }
  return { latest: [...latest.values()], acceptances: [...acceptances.values()] };
}
