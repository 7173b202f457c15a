import { sql, type Kysely } from 'kysely';

// Each snapshot run names the worker that made it (host and process id). The column was called
// `holder` while replicas coordinated through account locks; with the job queue it is the worker
// that took the job. Renamed, not copied: every existing run keeps its value, readable as `worker`.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table snapshot_runs rename column holder to worker`.execute(db);
  await sql`comment on column snapshot_runs.worker is 'the worker that made the run: host:pid'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table snapshot_runs rename column worker to holder`.execute(db);
}
