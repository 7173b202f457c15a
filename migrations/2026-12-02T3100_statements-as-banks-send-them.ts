import { sql, type Kysely } from 'kysely';

// Statements as banks send them: camt.054 notifications, MT942 interim reports and BAI2 files
// are stored formats too; a statement keeps its creation time (camt CreDtTm), which orders two
// end-of-day statements of one date after their sequence numbers.
const OLD_FORMATS = ['camt.053', 'camt.052', 'mt940'];
const FORMATS = [...OLD_FORMATS, 'camt.054', 'mt942', 'bai2'];

async function setFormats(db: Kysely<unknown>, formats: string[]): Promise<void> {
  await sql`alter table bank_statements drop constraint bank_statements_format_check`.execute(db);
  await sql`alter table bank_statements add constraint bank_statements_format_check check (format in (${sql.join(formats.map((f) => sql.lit(f)))}))`.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await setFormats(db, FORMATS);
  await sql`alter table bank_statements add column created_at timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table bank_statements drop column created_at`.execute(db);
  await sql`delete from bank_statements where format not in (${sql.join(OLD_FORMATS.map((f) => sql.lit(f)))})`.execute(db);
  await setFormats(db, OLD_FORMATS);
}
