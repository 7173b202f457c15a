import { sql, type Kysely } from 'kysely';

// Fencing for the outbox. A claim now writes a fresh lease_token with its lease, and a sender
// writes the outcome (sent, retry, failed) or renews the lease only where the row still holds
// its token: once a lease has run out and another replica has claimed the row, the first
// sender's late answer changes nothing. (Case decisions need no column: manual actions and the
// reconciliation's case tracking both take the account's case lock, see lockAccountCases.)
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table notifications add column lease_token uuid`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table notifications drop column if exists lease_token`.execute(db);
}
