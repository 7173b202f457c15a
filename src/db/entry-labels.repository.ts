import type { Kysely, Transaction } from 'kysely';
import type { Database } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** What people recognise an entry by (reference, description), by entry id: books entries and statement entries apart. */
export async function listEntryLabels(db: Db, ids: { books: readonly number[]; statement: readonly number[] }): Promise<{ books: Map<number, string>; statement: Map<number, string> }> {
  const label = (...parts: Array<string | null>) => parts.filter((p): p is string => p !== null && p.trim() !== '').join(' · ');
  const books =
    ids.books.length === 0
      ? []
      : await db
          .selectFrom('books_entries')
          .select(['id', 'reference', 'description'])
          .where('id', 'in', ids.books.map(String))
          .execute();
  const statement =
    ids.statement.length === 0
      ? []
      : await db
          .selectFrom('bank_statement_entries')
          .select(['id', 'reference', 'bank_reference', 'details'])
          .where('id', 'in', ids.statement.map(String))
          .execute();
  return {
    books: new Map(books.map((b) => [Number(b.id), label(b.reference, b.description)])),
    statement: new Map(statement.map((s) => [Number(s.id), label(s.reference ?? s.bank_reference, s.details)])),
  };
}
