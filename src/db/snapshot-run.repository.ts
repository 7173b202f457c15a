import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { DatabaseError } from '../errors.js';
import type { Database, RunTrigger, SnapshotRun } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface NewRun {
  account: string;
  environment: 'live' | 'sandbox';
  trigger: RunTrigger;
  businessDate: string;
  startedAt: Date;
  slot?: Date | null;
  worker?: string | null;
  source?: string | null;
  /** How the run stands to its business date's cut-off. */
  timing: { cutoffAt: Date; driftSeconds: number; endOfDay: boolean; timezone?: string };
}

/** Inserts a `running` run and returns its id. */
export async function insertRunningRun(db: Db, run: NewRun): Promise<number> {
  return (await insertRunningRuns(db, [run]))[0]!;
}

/**
 * Inserts several `running` runs in one statement and returns their ids in the order given (ids
 * are assigned in that order).
 */
export async function insertRunningRuns(db: Db, runs: readonly NewRun[]): Promise<number[]> {
  if (runs.length === 0) return [];
  const { rows } = await sql<{ id: number }>`
    insert into snapshot_runs (account, environment, trigger, business_date, status, started_at, slot, worker, source, cutoff_at, cutoff_drift_seconds, end_of_day, cutoff_timezone)
    select u.account, u.environment, u.trigger, u.business_date, 'running', u.started_at, u.slot, u.worker, u.source, u.cutoff_at, u.drift, u.end_of_day, u.cutoff_timezone
    from unnest(
      ${runs.map((r) => r.account)}::text[], ${runs.map((r) => r.environment)}::text[], ${runs.map((r) => r.trigger)}::text[], ${runs.map((r) => r.businessDate)}::date[],
      ${runs.map((r) => r.startedAt.toISOString())}::timestamptz[], ${runs.map((r) => r.slot?.toISOString() ?? null)}::timestamptz[], ${runs.map((r) => r.worker ?? null)}::text[],
      ${runs.map((r) => r.source ?? null)}::text[], ${runs.map((r) => r.timing.cutoffAt.toISOString())}::timestamptz[], ${runs.map((r) => r.timing.driftSeconds)}::integer[],
      ${runs.map((r) => r.timing.endOfDay)}::boolean[], ${runs.map((r) => r.timing.timezone ?? null)}::text[]
    ) with ordinality as u(account, environment, trigger, business_date, started_at, slot, worker, source, cutoff_at, drift, end_of_day, cutoff_timezone, n)
    order by u.n
    returning id`.execute(db);
  // Identity values follow the insert order, which is the order given.
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

/**
 * Starts an account's run in one round trip: marks the account's runs still `running` abandoned
 * (as abandonRunningRuns does, at the new run's start) and inserts the new `running` run. Call it
 * only while holding the account's lock. Both happen in one statement, on one snapshot, so the
 * new run is never among those abandoned. Returns the new run's id and the abandoned ids, ascending.
 */
export async function startRunAbandoningOthers(db: Db, run: NewRun): Promise<{ runId: number; abandoned: number[] }> {
  const { rows } = await sql<{ id: number; abandoned: number[] }>`
    with abandoned as (
      update snapshot_runs set status = 'abandoned', finished_at = ${run.startedAt.toISOString()}::timestamptz,
        error = 'abandoned: the process running it stopped, or lost its database connection, before it finished (worker ' || coalesce(worker, 'unknown') || ')'
      where account = ${run.account} and status = 'running'
      returning id
    ), inserted as (
      insert into snapshot_runs (account, environment, trigger, business_date, status, started_at, slot, worker, source, cutoff_at, cutoff_drift_seconds, end_of_day, cutoff_timezone)
      values (${run.account}, ${run.environment}, ${run.trigger}, ${run.businessDate}::date, 'running', ${run.startedAt.toISOString()}::timestamptz, ${run.slot?.toISOString() ?? null}::timestamptz,
        ${run.worker ?? null}, ${run.source ?? null}, ${run.timing.cutoffAt.toISOString()}::timestamptz, ${run.timing.driftSeconds}::integer, ${run.timing.endOfDay}::boolean, ${run.timing.timezone ?? null}::text)
      returning id
    )
    select (select id from inserted) as id, coalesce((select array_agg(id order by id) from abandoned), '{}'::integer[]) as abandoned`.execute(db);
  const row = rows[0]!;
  return { runId: row.id, abandoned: row.abandoned };
}

export interface RunCounts {
  walletsReported: number | null;
  walletsFetched: number;
  pagesFetched: number;
  requests: number;
}

/**
 * Marks a running run succeeded with its counts. Throws if the run is no longer `running`
 * (another process marked it abandoned), so the caller's transaction rolls back its rows.
 * `alsoWrite` (an insert of the run's rows) runs in the same statement: one round trip less.
 */
export async function markRunSucceeded(
  db: Db,
  id: number,
  finishedAt: Date,
  counts: RunCounts,
  outcome?: { timing: { businessDate: string; cutoffAt: Date; driftSeconds: number; endOfDay: boolean; timezone?: string }; readsFinishedAt: Date; warning?: string | null },
  alsoWrite?: RawBuilder<unknown>,
): Promise<void> {
  // A data-modifying WITH runs to its end even unreferenced; the update's count is the statement's.
  // Kysely writes a raw expression as given: the parentheses are ours.
  const creator: Pick<Db, 'updateTable'> = alsoWrite === undefined ? db : (db.with('written', () => sql`(${alsoWrite})` as never) as unknown as Db);
  const result = await creator
    .updateTable('snapshot_runs')
    .set({
      ...(outcome === undefined
        ? {}
        : {
            business_date: outcome.timing.businessDate,
            cutoff_at: outcome.timing.cutoffAt,
            cutoff_drift_seconds: outcome.timing.driftSeconds,
            ...(outcome.timing.timezone === undefined ? {} : { cutoff_timezone: outcome.timing.timezone }),
            end_of_day: outcome.timing.endOfDay,
            reads_finished_at: outcome.readsFinishedAt,
            warning: outcome.warning ?? null,
          }),
      status: 'succeeded',
      finished_at: finishedAt,
      wallets_reported: counts.walletsReported,
      wallets_fetched: counts.walletsFetched,
      pages_fetched: counts.pagesFetched,
      requests: counts.requests,
      error: null,
    })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .executeTakeFirst();
  if (result.numUpdatedRows !== 1n) throw new RunNoLongerRunningError(id);
}

/**
 * Marks several running runs succeeded in one statement, each with its counts and how it stands to
 * its cut-off, as markRunSucceeded does one. Throws (so the caller's transaction rolls back) if any
 * is no longer `running`.
 */
export async function markRunsSucceeded(
  db: Db,
  runs: ReadonlyArray<{ id: number; counts: RunCounts; timing: { businessDate: string; cutoffAt: Date; driftSeconds: number; endOfDay: boolean; timezone?: string }; readsFinishedAt: Date }>,
  finishedAt: Date,
): Promise<void> {
  if (runs.length === 0) return;
  const { rows } = await sql<{ id: number }>`
    update snapshot_runs r set
      business_date = u.business_date, cutoff_at = u.cutoff_at, cutoff_drift_seconds = u.drift, end_of_day = u.end_of_day, cutoff_timezone = coalesce(u.cutoff_timezone, r.cutoff_timezone), reads_finished_at = u.reads_finished_at, warning = null,
      status = 'succeeded', finished_at = ${finishedAt}, wallets_reported = u.wallets_reported, wallets_fetched = u.wallets_fetched, pages_fetched = u.pages_fetched, requests = u.requests, error = null
    from unnest(
      ${runs.map((r) => r.id)}::integer[], ${runs.map((r) => r.timing.businessDate)}::date[], ${runs.map((r) => r.timing.cutoffAt.toISOString())}::timestamptz[],
      ${runs.map((r) => r.timing.driftSeconds)}::integer[], ${runs.map((r) => r.timing.endOfDay)}::boolean[], ${runs.map((r) => r.readsFinishedAt.toISOString())}::timestamptz[],
      ${runs.map((r) => r.counts.walletsReported)}::integer[], ${runs.map((r) => r.counts.walletsFetched)}::integer[], ${runs.map((r) => r.counts.pagesFetched)}::integer[],
      ${runs.map((r) => r.counts.requests)}::integer[], ${runs.map((r) => r.timing.timezone ?? null)}::text[]
    ) as u(id, business_date, cutoff_at, drift, end_of_day, reads_finished_at, wallets_reported, wallets_fetched, pages_fetched, requests, cutoff_timezone)
    where r.id = u.id and r.status = 'running'
    returning r.id`.execute(db);
  if (rows.length !== runs.length) {
    const done = new Set(rows.map((r) => r.id));
    throw new RunNoLongerRunningError(runs.find((r) => !done.has(r.id))!.id);
  }
}

/** Marks a running run failed with a secret-free message and whatever counts are known. */
export async function markRunFailed(db: Db, id: number, finishedAt: Date, error: string, counts: Partial<RunCounts> = {}): Promise<boolean> {
  const result = await db
    .updateTable('snapshot_runs')
    .set({
      status: 'failed',
      finished_at: finishedAt,
      error,
      wallets_reported: counts.walletsReported ?? null,
      wallets_fetched: counts.walletsFetched ?? null,
      pages_fetched: counts.pagesFetched ?? null,
      requests: counts.requests ?? null,
    })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** Locks a run's row for the rest of the transaction and fails unless it is still `running`. */
export async function lockRunningRun(db: Transaction<Database>, id: number): Promise<void> {
  const row = await db.selectFrom('snapshot_runs').select('status').where('id', '=', id).forUpdate().executeTakeFirst();
  if (row?.status !== 'running') throw new RunNoLongerRunningError(id, row?.status);
}

/** The run was closed by someone else (marked abandoned while we lost our lock): its rows must not land. */
export class RunNoLongerRunningError extends DatabaseError {
  constructor(id: number, status?: string) {
    super(`run ${id} is no longer running${status ? ` (it is marked ${status})` : ''}: another process took over this account, so this run's balances were not written`);
  }
}

/**
 * Marks an account's runs still `running` as abandoned. Called only while holding the account's
 * lock, so any such run's process is gone.
 */
export async function abandonRunningRuns(db: Db, account: string, now: Date): Promise<number[]> {
  const rows = await db
    .updateTable('snapshot_runs')
    .set({
      status: 'abandoned',
      finished_at: now,
      error: sql<string>`'abandoned: the process running it stopped, or lost its database connection, before it finished (worker ' || coalesce(worker, 'unknown') || ')'`,
    })
    .where('account', '=', account)
    .where('status', '=', 'running')
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** The account's run currently marked running (the lock holder's), if any. */
export async function findRunningRun(db: Db, account: string): Promise<SnapshotRun | undefined> {
  return db.selectFrom('snapshot_runs').selectAll().where('account', '=', account).where('status', '=', 'running').orderBy('id', 'desc').executeTakeFirst();
}

/** Whether the account has a succeeded end-of-day run for a business date (its day is captured). */
export async function hasEndOfDayCapture(db: Db, account: string, businessDate: string, finishedAfter?: Date): Promise<boolean> {
  return (await findEndOfDayCaptures(db, [account], businessDate, finishedAfter)).has(account);
}

/**
 * The latest succeeded end-of-day run of each account for a business date, keyed by account;
 * with `finishedAfter` (a scheduled slot's own time) only runs that finished at or after it count: an
 * earlier capture (a manual one at 21:05) never stands in for a slot that runs closer to the cut-off.
 */
export async function findEndOfDayCaptures(
  db: Db,
  accounts: readonly string[],
  businessDate: string,
  finishedAfter?: Date,
): Promise<Map<string, { runId: number; finishedAt: Date | null; trigger: string }>> {
  if (accounts.length === 0) return new Map();
  let query = db
    .selectFrom('snapshot_runs')
    .select(['id', 'account', 'finished_at', 'trigger'])
    .where('account', 'in', [...accounts])
    .where('business_date', '=', businessDate)
    .where('status', '=', 'succeeded')
    .where('end_of_day', '=', true)
    .orderBy('finished_at', 'asc')
    .orderBy('id', 'asc');
  if (finishedAfter !== undefined) query = query.where('finished_at', '>=', finishedAfter);
  const rows = await query.execute();
  // Ascending: the latest run of each account is the one left in the map.
  return new Map(rows.map((r) => [r.account, { runId: r.id, finishedAt: r.finished_at, trigger: r.trigger }]));
}

/** Of the given accounts, those without a succeeded end-of-day run for a business date (finished after `finishedAfter` when given). */
export async function accountsWithoutEndOfDay(db: Db, accounts: readonly string[], businessDate: string, finishedAfter?: Date): Promise<string[]> {
  const done = await findEndOfDayCaptures(db, accounts, businessDate, finishedAfter);
  return accounts.filter((a) => !done.has(a));
}

/** Recent runs, newest first. */
export async function listRecentRuns(db: Db, options: { account?: string; limit: number }): Promise<SnapshotRun[]> {
  let query = db.selectFrom('snapshot_runs').selectAll().orderBy('started_at', 'desc').orderBy('id', 'desc').limit(options.limit);
  if (options.account) query = query.where('account', '=', options.account);
  return query.execute();
}

/** The authoritative run (and why) of each account-date of these runs, keyed `account|business_date`. */
export async function listAuthorityOfRuns(db: Db, runs: ReadonlyArray<Pick<SnapshotRun, 'account' | 'business_date'>>): Promise<Map<string, { runId: number; reason: string }>> {
  if (runs.length === 0) return new Map();
  const accounts = [...new Set(runs.map((r) => r.account))];
  const dates = [...new Set(runs.map((r) => r.business_date))];
  const rows = await db
    .selectFrom('authoritative_runs')
    .select(['account', 'business_date', 'run_id', 'reason'])
    .where('account', 'in', accounts)
    .where('business_date', 'in', dates)
    .execute();
  return new Map(rows.map((r) => [`${r.account}|${r.business_date}`, { runId: r.run_id, reason: r.reason }]));
}

/** The runs with these ids, for reports that say when each snapshot was captured. */
export async function listRunsByIds(db: Db, ids: readonly number[]): Promise<SnapshotRun[]> {
  if (ids.length === 0) return [];
  // One array parameter: a year's report names tens of thousands of runs (a parameter each would pass the protocol's 65,535).
  return db.selectFrom('snapshot_runs').selectAll().where('id', '=', sql<number>`any(${[...ids]}::int[])`).orderBy('id').execute();
}

/** Whether any run of this account was ever recorded (an account renamed since still has its runs). */
export async function hasRunsOfAccount(db: Db, account: string): Promise<boolean> {
  return (await db.selectFrom('snapshot_runs').select('id').where('account', '=', account).limit(1).executeTakeFirst()) !== undefined;
}

/** The first succeeded end-of-day run of an account's business date, with when its reads finished. */
export async function findFirstEndOfDayCapture(db: Db, account: string, businessDate: string): Promise<{ runId: number; capturedAt: Date } | undefined> {
  const row = await db
    .selectFrom('snapshot_runs')
    .select(['id', 'reads_finished_at', 'finished_at', 'started_at'])
    .where('account', '=', account)
    .where('business_date', '=', businessDate)
    .where('status', '=', 'succeeded')
    .where('end_of_day', '=', true)
    .orderBy('id')
    .executeTakeFirst();
  return row === undefined ? undefined : { runId: row.id, capturedAt: row.reads_finished_at ?? row.finished_at ?? row.started_at };
}
