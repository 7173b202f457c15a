import { sql, type Kysely } from 'kysely';

// Items of unmatched entries are derived, never stored (reconciling-item.repository.ts), yet one
// past the expected clearing date its account's `matching:` rule gives (`expectedClearDays`) must
// raise its `item.overdue` once, as a stored item does with reconciling_items.overdue_raised_on.
// A row here says the entry's item was raised overdue, on which date and when; it goes with its
// entry (a statement replaced).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table entry_item_overdue (
      id bigint generated always as identity primary key,
      account text not null,
      currency text not null,
      books_entry_id bigint unique references books_entries (id) on delete cascade,
      statement_entry_id bigint unique references bank_statement_entries (id) on delete cascade,
      expected_clear date not null,
      raised_on date not null,
      raised_at timestamptz not null,
      constraint entry_item_overdue_one_side check ((books_entry_id is null) <> (statement_entry_id is null))
    )`.execute(db);
  await sql`create index entry_item_overdue_account on entry_item_overdue (account, currency)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists entry_item_overdue`.execute(db);
}
