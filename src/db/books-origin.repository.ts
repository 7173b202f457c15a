import type { Transaction } from 'kysely';
import type { Database } from './database.types.js';
import { storeFileFromPath } from './stored-file.repository.js';

/** Where a books import came from, kept with it for the evidence pack: a file's original bytes, or a pull's query and a digest of its rows. */
export type BooksOrigin = { filePath: string } | { sqlQuery: string; rowsSha256: string };

/**
 * Records where books import `importId` came from, in its transaction: a file's bytes are stored
 * content-addressed (once per content) and named by their SHA-256; a pull keeps its query text and
 * the digest of the rows it returned.
 */
export async function recordBooksOrigin(trx: Transaction<Database>, importId: number, origin: BooksOrigin, at: Date): Promise<void> {
  if ('filePath' in origin) {
    const { sha256 } = await storeFileFromPath(trx, origin.filePath, { kind: 'books_file', storedAt: at });
    await trx.updateTable('books_imports').set({ file_sha256: sha256 }).where('id', '=', importId).execute();
  } else {
    await trx.updateTable('books_imports').set({ sql_query: origin.sqlQuery, rows_sha256: origin.rowsSha256 }).where('id', '=', importId).execute();
  }
}
