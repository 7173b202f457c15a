import { sql, type Kysely } from 'kysely';

// Bank statements are sealed inputs of their date like books and results: the statement tables
// refuse, from any writer (SQL by hand included), a write to a date an approved sign-off locks,
// through the same refuse_locked_rows of migration 2026-11-27T2701. The balances and entries
// rows name their statement, whose account and date decide.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function refuse_locked_statement_rows() returns trigger language plpgsql as $$
    declare d record;
    begin
      if tg_op in ('INSERT', 'UPDATE') then
        for d in select distinct s.account, s.business_date from new_rows n join bank_statements s on s.id = n.statement_pk loop
          perform refuse_locked_rows(tg_table_name, d.account, d.business_date);
        end loop;
      end if;
      if tg_op in ('DELETE', 'UPDATE') then
        for d in select distinct s.account, s.business_date from old_rows o join bank_statements s on s.id = o.statement_pk loop
          perform refuse_locked_rows(tg_table_name, d.account, d.business_date);
        end loop;
      end if;
      return null;
    end $$`.execute(db);
  for (const [table, fn] of [
    ['bank_statements', 'refuse_locked_change'],
    ['bank_statement_balances', 'refuse_locked_statement_rows'],
    ['bank_statement_entries', 'refuse_locked_statement_rows'],
  ] as const) {
    const f = sql.raw(`${fn}()`);
    await sql`create trigger ${sql.raw(`${table}_lock_insert`)} after insert on ${sql.table(table)} referencing new table as new_rows for each statement execute function ${f}`.execute(db);
    await sql`create trigger ${sql.raw(`${table}_lock_update`)} after update on ${sql.table(table)} referencing old table as old_rows new table as new_rows for each statement execute function ${f}`.execute(db);
    await sql`create trigger ${sql.raw(`${table}_lock_delete`)} after delete on ${sql.table(table)} referencing old table as old_rows for each statement execute function ${f}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['bank_statements', 'bank_statement_balances', 'bank_statement_entries']) {
    for (const op of ['insert', 'update', 'delete']) await sql`drop trigger if exists ${sql.raw(`${table}_lock_${op}`)} on ${sql.table(table)}`.execute(db);
  }
  await sql`drop function if exists refuse_locked_statement_rows()`.execute(db);
}
