import { sql, type Kysely } from 'kysely';
import type { Database } from './database.types.js';

/**
 * What a database holds besides one account's rows, before anything is written to it: tables of
 * another application (no wallet-recon schema), or wallet-recon rows of other accounts. Empty
 * lists: the database is empty, or holds only that account's rows.
 */
export async function findForeignContents(db: Kysely<Database>, account: string | readonly string[]): Promise<{ otherTables: string[]; otherAccounts: string[] }> {
  const own = typeof account === 'string' ? [account] : [...account];
  const tables = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema not in ('pg_catalog', 'information_schema') order by table_name`.execute(db);
  const names = tables.rows.map((t) => t.name);
  if (names.length === 0) return { otherTables: [], otherAccounts: [] };
  if (!names.includes('kysely_migration') || !names.includes('snapshot_runs')) return { otherTables: names.slice(0, 5), otherAccounts: [] };
  const accounts = await sql<{ account: string }>`
    select account from snapshot_runs where account <> all(${own}::text[])
    union select account from expected_balances where account <> all(${own}::text[])
    union select account from reconciliation_results where account <> all(${own}::text[])
    order by account limit 5`.execute(db);
  return { otherTables: [], otherAccounts: accounts.rows.map((r) => r.account) };
}
