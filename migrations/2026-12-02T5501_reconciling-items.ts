import { sql, type Kysely } from 'kysely';

// Reconciling items: what explains a difference between the books and the gateway or bank balance
// (a payout in transit, a cheque not cashed, a fee not booked). An item's amount is signed so that
// books balance + the open items + the unexplained remainder = the gateway or bank balance, in the
// minor units of its scale. People add and clear items; items that come from an unmatched books or
// statement entry are derived from the entries (src/db/reconciling-item.repository.ts), so a row
// here names an entry only when a person tied an item to it. Overdue is derived (open on a date
// after expected_clear); overdue_raised_on records the date its one `item.overdue` was raised.
// Each result keeps the total of the items open on its date and what they leave unexplained.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table reconciling_items (
      id bigint generated always as identity primary key,
      account text not null,
      source text not null check (source in ('gateway', 'bank')),
      currency text not null check (currency ~ '^[A-Z]{3}$'),
      kind text not null check (kind in ('outstanding', 'unrecorded', 'in_transit', 'timing', 'fee', 'adjustment', 'other')),
      amount numeric(38, 0) not null check (amount <> 0),
      scale integer not null check (scale between 0 and 18),
      opened_on date not null,
      expected_clear date check (expected_clear is null or expected_clear >= opened_on),
      state text not null default 'open' check (state in ('open', 'cleared')),
      cleared_on date,
      cleared_by text,
      clear_note text,
      note text not null check (length(note) between 1 and 2000),
      evidence text,
      created_by text not null,
      created_at timestamptz not null,
      books_entry_id bigint,
      statement_entry_id bigint,
      overdue_raised_on date,
      check ((state = 'open') = (cleared_on is null)),
      check (state = 'open' or (cleared_by is not null and clear_note is not null and cleared_on >= opened_on))
    )`.execute(db);
  // Day-scoped reads: the items of one account open on a date.
  await sql`create index reconciling_items_account_opened on reconciling_items (account, currency, opened_on)`.execute(db);
  // The audit trail of items, like a case's: who added, cleared or saw each item overdue, when and why.
  await sql`
    create table reconciling_item_events (
      id bigint generated always as identity primary key,
      item_id bigint not null references reconciling_items (id),
      at timestamptz not null,
      actor text not null,
      action text not null check (action in ('added', 'cleared', 'overdue')),
      note text
    )`.execute(db);
  await sql`create index reconciling_item_events_item on reconciling_item_events (item_id, id)`.execute(db);
  await sql`alter table reconciliation_results add column items_total numeric(38, 0), add column unexplained numeric(38, 0)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table reconciliation_results drop column if exists items_total, drop column if exists unexplained`.execute(db);
  await sql`drop table if exists reconciling_item_events`.execute(db);
  await sql`drop table if exists reconciling_items`.execute(db);
}
