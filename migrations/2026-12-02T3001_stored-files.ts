import { sql, type Kysely } from 'kysely';

// The original bytes of every file imported (bank statements, books files, a backfill's gateway
// statement files), kept content-addressed so an auditor can be handed a file as it arrived and
// check it by its SHA-256. A file is stored once, whatever name and however often it arrives.
// Its bytes are split into chunks of 1 MiB: a 250 MiB file is written and read back a chunk at a
// time, never as one value in memory nor one bind parameter. A chunk's key may be provisional
// (a file read from a stream, whose digest is known only at its end) until its transaction
// ends: the reference to its file is checked at commit.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table stored_files (
      sha256 text primary key check (sha256 ~ '^[0-9a-f]{64}$'),
      size bigint not null check (size >= 0),
      kind text not null check (kind in ('bank_statement', 'books_file', 'gateway_statement_file')),
      first_name text not null,
      stored_at timestamptz not null,
      chunks integer not null check (chunks >= 0)
    )`.execute(db);
  await sql`
    create table stored_file_chunks (
      sha256 text not null references stored_files (sha256) on delete cascade deferrable initially deferred,
      seq integer not null check (seq >= 0),
      bytes bytea not null check (octet_length(bytes) between 1 and 1048576),
      primary key (sha256, seq)
    )`.execute(db);
  // The file a statement was read from. #39 (sealed statement inputs) may add the same column.
  await sql`alter table bank_statements add column if not exists file_sha256 text`.execute(db);
  await sql`
    do $$ begin
      if not exists (select 1 from pg_constraint where conname = 'bank_statements_file_sha256_fkey') then
        alter table bank_statements add constraint bank_statements_file_sha256_fkey foreign key (file_sha256) references stored_files (sha256);
      end if;
    end $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table bank_statements drop column if exists file_sha256`.execute(db);
  await sql`drop table if exists stored_file_chunks`.execute(db);
  await sql`drop table if exists stored_files`.execute(db);
}
