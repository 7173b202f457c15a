import { sql, type Kysely } from 'kysely';
import type { CaseState, Database, ReconciliationResultRow } from './database.types.js';
import type { StoredResultRecord } from './result-records.js';
import type { ResultCase } from './case-records.js';
import { resultRecord } from './reconciliation-result.repository.js';

/** A stored result and the case it names (state now, age to the report's today). */
export type StreamedResult = StoredResultRecord & { case: ResultCase | null };

type CursorRow = ReconciliationResultRow & { c_state: CaseState | null; c_opened_on: string | null; c_resolved_on: string | null; c_accepted_until: string | null };

/**
 * The stored results over a range (one account or all) with their cases, by date, account and
 * currency (the order of listResults), in batches read from one server-side cursor in a
 * read-only transaction: memory holds one batch whatever the range. The planner is told the
 * whole result is wanted (cursor_tuple_fraction 1): a range of a year is read by one scan and
 * one sort, not by an index walk that visits the table's pages at random (the results of one
 * date lie all over the table). The cursor is closed when the consumer stops early.
 * `ageOf` gives a case's age in days (the caller's rule, to its today).
 */
export async function* streamResultBatches(
  db: Kysely<Database>,
  range: { from: string; to: string; account?: string },
  ageOf: (c: { state: CaseState; openedOn: string; resolvedOn: string | null }) => number,
  batchRows = 500,
): AsyncGenerator<StreamedResult[]> {
  const trx = await db.startTransaction().setAccessMode('read only').execute();
  let done = false;
  try {
    await sql`set local cursor_tuple_fraction = 1`.execute(trx);
    await sql`declare report_results no scroll cursor for
      select r.*, c.state as c_state, c.opened_on::text as c_opened_on, c.resolved_on::text as c_resolved_on, c.accepted_until::text as c_accepted_until
      from reconciliation_results r
      left join reconciliation_cases c on c.id = r.case_id
      where r.business_date between ${range.from}::date and ${range.to}::date
        ${range.account === undefined ? sql`` : sql`and r.account = ${range.account}`}
      order by r.business_date, r.account, coalesce(r.currency, '')`.execute(trx);
    for (;;) {
      const { rows } = await sql<CursorRow>`fetch forward ${sql.lit(batchRows)} from report_results`.execute(trx);
      if (rows.length === 0) break;
      yield rows.map((row) => {
        const c: ResultCase | null =
          row.case_id === null || row.c_state === null
            ? null
            : { id: row.case_id, state: row.c_state, ageDays: ageOf({ state: row.c_state, openedOn: row.c_opened_on!, resolvedOn: row.c_resolved_on }), acceptedUntil: row.c_accepted_until };
        return { ...resultRecord(row), case: c };
      });
      if (rows.length < batchRows) break;
    }
    await trx.commit().execute();
    done = true;
  } finally {
    if (!done) await trx.rollback().execute();
  }
}
