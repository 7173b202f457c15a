import { sql, type Kysely } from 'kysely';

// Fencing for the per-account run lock. The lock is a session advisory lock: when its session
// dies unnoticed (a cut network, a failover), another replica takes the account while the first
// still captures. Each acquisition bumps the account's fence; the write of a snapshot re-reads it
// under `for update` in its own transaction and writes nothing unless it is still the fence it was
// given. The row lock also makes a new acquirer wait until such a write has committed, so the
// newcomer then sees the capture and does not make a second one.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table account_lock_fences (
      account text primary key,
      fence bigint not null,
      acquired_at timestamptz not null default now()
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists account_lock_fences`.execute(db);
}
