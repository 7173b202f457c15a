import type { Kysely, Transaction } from 'kysely';
import type { Database } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** An account's saved import profile as stored: its settings object (checked by the books module) and when it was saved. */
export interface StoredImportProfile {
  account: string;
  settings: unknown;
  savedAt: Date;
}

/** The saved import profile of one account, if any. */
export async function findImportProfile(db: Db, account: string): Promise<StoredImportProfile | undefined> {
  const row = await db.selectFrom('import_profiles').select(['account', 'settings', 'saved_at']).where('account', '=', account).executeTakeFirst();
  return row === undefined ? undefined : { account: row.account, settings: row.settings, savedAt: row.saved_at };
}

/** Every saved import profile, by account name. */
export async function listImportProfiles(db: Db): Promise<StoredImportProfile[]> {
  const rows = await db.selectFrom('import_profiles').select(['account', 'settings', 'saved_at']).orderBy('account').execute();
  return rows.map((r) => ({ account: r.account, settings: r.settings, savedAt: r.saved_at }));
}

/** Saves (or replaces) an account's import profile. */
export async function saveImportProfile(db: Db, account: string, settings: object, savedAt: Date): Promise<void> {
  await db
    .insertInto('import_profiles')
    .values({ account, settings: JSON.stringify(settings), saved_at: savedAt })
    .onConflict((oc) => oc.column('account').doUpdateSet({ settings: JSON.stringify(settings), saved_at: savedAt }))
    .execute();
}

/** A source's named import profile as stored. */
export interface StoredNamedProfile {
  name: string;
  settings: unknown;
  savedAt: Date;
}

/** The named import profile NAME, if saved. */
export async function findNamedProfile(db: Db, name: string): Promise<StoredNamedProfile | undefined> {
  const row = await db.selectFrom('named_import_profiles').select(['name', 'settings', 'saved_at']).where('name', '=', name).executeTakeFirst();
  return row === undefined ? undefined : { name: row.name, settings: row.settings, savedAt: row.saved_at };
}

/** Every named import profile, by name. */
export async function listNamedProfiles(db: Db): Promise<StoredNamedProfile[]> {
  const rows = await db.selectFrom('named_import_profiles').select(['name', 'settings', 'saved_at']).orderBy('name').execute();
  return rows.map((r) => ({ name: r.name, settings: r.settings, savedAt: r.saved_at }));
}

/** Saves (or replaces) a named import profile. */
export async function saveNamedProfile(db: Db, name: string, settings: object, savedAt: Date): Promise<void> {
  await db
    .insertInto('named_import_profiles')
    .values({ name, settings: JSON.stringify(settings), saved_at: savedAt })
    .onConflict((oc) => oc.column('name').doUpdateSet({ settings: JSON.stringify(settings), saved_at: savedAt }))
    .execute();
}
