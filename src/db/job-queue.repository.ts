import { sql, type Kysely } from 'kysely';
import type { Database } from './database.types.js';

// Reads and one write on pg-boss 10's own tables (`job`, `archive`, `queue`) in RECON_QUEUE_SCHEMA,
// only for what its public API does not give. What the API gives is taken from it, by the callers
// that hold a started pg-boss: the queues and their dead-letter queues (getQueues), a job by id,
// archived or not (getJobById, for `queue retry`). It has no counts per state over a period
// (getQueueSize counts the jobs waiting, of all time, one queue per query), no age of the oldest
// waiting job, no jobs of one business date, and no way to fail a job past its retries: those are
// the queries below. The console and /metrics read them without starting a pg-boss (no polling,
// no pool of its own in a web process or on every scrape).
// Checked against pg-boss 10.4's schema; see docs/operating.md before upgrading it.

/** One queue's jobs of a period, by state, as `wallet-recon queue` prints them. */
export interface QueueCounts {
  queue: string;
  created: number;
  active: number;
  retry: number;
  completed: number;
  failed: number;
  dead_letter: number;
  oldest_waiting_seconds: number | null;
}

/**
 * Counts the jobs of `queues` created since `since`, live and archived, by state. `retry` counts
 * jobs waiting for a later attempt: pg-boss's own retries (a job whose worker died) and ours (a
 * capture re-queued with a start time, attempt > 1). `dead_letter` counts the copies its failed
 * jobs left in its dead-letter queue. The oldest waiting job is the longest due and not taken.
 */
export async function countQueueJobs(
  db: Kysely<Database>,
  schema: string,
  queues: ReadonlyArray<{ name: string; deadLetter?: string }>,
  since: Date,
  now: Date,
): Promise<QueueCounts[]> {
  const names = [...new Set(queues.flatMap((q) => [q.name, ...(q.deadLetter ? [q.deadLetter] : [])]))];
  const rows = await sql<{ name: string; state: string; later_attempt: boolean; count: string; oldest_due: Date | null }>`
    with jobs as (
      select name, state::text as state, data, start_after from ${sql.id(schema, 'job')} where name = any(${names}) and created_on >= ${since}
      union all
      select name, state::text, data, start_after from ${sql.id(schema, 'archive')} where name = any(${names}) and created_on >= ${since}
    )
    select name, state, coalesce((data->>'attempt')::int, 1) > 1 as later_attempt, count(*)::text as count,
      min(start_after) filter (where state in ('created', 'retry') and start_after <= ${now}) as oldest_due
    from jobs group by 1, 2, 3`.execute(db);
  return queues.map(({ name, deadLetter }) => {
    const mine = rows.rows.filter((r) => r.name === name);
    const sum = (pick: (r: (typeof mine)[number]) => boolean) => mine.filter(pick).reduce((n, r) => n + Number(r.count), 0);
    const due = mine.map((r) => r.oldest_due).filter((d): d is Date => d !== null);
    const oldest = due.length === 0 ? null : Math.min(...due.map((d) => d.getTime()));
    return {
      queue: name,
      created: sum((r) => r.state === 'created' && !r.later_attempt),
      active: sum((r) => r.state === 'active'),
      retry: sum((r) => r.state === 'retry' || (r.state === 'created' && r.later_attempt)),
      completed: sum((r) => r.state === 'completed'),
      failed: sum((r) => r.state === 'failed'),
      dead_letter: deadLetter === undefined ? 0 : rows.rows.filter((r) => r.name === deadLetter).reduce((n, r) => n + Number(r.count), 0),
      oldest_waiting_seconds: oldest === null ? null : Math.max(0, Math.round((now.getTime() - oldest) / 1000)),
    };
  });
}

/**
 * Lets a job that is failed now go to its dead-letter queue instead of pg-boss's retry: its
 * retries are kept for a worker that dies under it, ours are new jobs, so the one that gives up
 * at the window's close spends them first.
 */
export async function exhaustJobRetries(db: Kysely<Database>, schema: string, queue: string, id: string): Promise<void> {
  await sql`update ${sql.id(schema, 'job')} set retry_limit = retry_count where name = ${queue} and id = ${id}::uuid`.execute(db);
}

/** Waiting and active jobs of a queue whose data names one business date (the console's "still queued"). */
export async function countOpenJobsOfDate(db: Kysely<Database>, schema: string, queue: string, businessDate: string): Promise<{ waiting: number; active: number }> {
  const rows = await sql<{ waiting: string; active: string }>`
    select count(*) filter (where state in ('created', 'retry'))::text as waiting, count(*) filter (where state = 'active')::text as active
    from ${sql.id(schema, 'job')} where name = ${queue} and data->>'businessDate' = ${businessDate}`.execute(db);
  return { waiting: Number(rows.rows[0]?.waiting ?? 0), active: Number(rows.rows[0]?.active ?? 0) };
}

/** Whether the queue's schema is in this database. */
export async function hasQueueSchema(db: Kysely<Database>, schema: string): Promise<boolean> {
  const rows = await sql<{ found: boolean }>`select to_regclass(${`${schema}.job`}) is not null as found`.execute(db);
  return rows.rows[0]?.found === true;
}

/** Per queue, the jobs waiting (first or later attempt) and how long the longest-due one has waited (seconds, by the server's clock). */
export async function readQueueDepths(db: Kysely<Database>, schema: string): Promise<Array<{ queue: string; waiting: number; oldestSeconds: number }>> {
  const rows = await sql<{ name: string; waiting: string; oldest: number | null }>`
    select q.name, count(j.id)::text as waiting,
      coalesce(extract(epoch from now() - min(j.start_after) filter (where j.start_after <= now())), 0)::float8 as oldest
    from ${sql.id(schema, 'queue')} q left join ${sql.id(schema, 'job')} j on j.name = q.name and j.state in ('created', 'retry')
    group by q.name order by q.name`.execute(db);
  return rows.rows.map((r) => ({ queue: r.name, waiting: Number(r.waiting), oldestSeconds: Math.max(0, Math.round(r.oldest ?? 0)) }));
}
