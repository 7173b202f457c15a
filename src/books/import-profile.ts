import type { Transaction } from 'kysely';
import * as z from 'zod';
import type { AppContext } from '../app-context.js';
import type { AccountBooksSettings, Config } from '../config/index.js';
import type { Database } from '../db/database.types.js';
import { findImportProfile, findNamedProfile, listImportProfiles, listNamedProfiles, saveImportProfile, saveNamedProfile, type StoredImportProfile, type StoredNamedProfile } from '../db/import-profile.repository.js';
import type { BooksFormat } from './books-file.js';
import { BOOKS_FIELDS } from './column-map.js';
import { DATE_FORMATS } from './date-text.js';
import { TEXT_ENCODINGS } from '../text-encoding.js';

/**
 * An account's saved import profile: how its books files are written and whether an import may
 * remove a day's other currencies. Saved by `ledger import … --save-profile`; options given to a
 * later import win over it, and it wins over the accounts file's `books` section.
 */
export interface ImportProfile {
  map?: Partial<Record<(typeof BOOKS_FIELDS)[number], string>>;
  dateFormat?: (typeof DATE_FORMATS)[number];
  decimalMark?: 'comma' | 'point';
  amounts?: 'major' | 'minor';
  skipRows?: number;
  skipFooter?: number;
  /** Consent, saved once: imports of the account may remove a day's currencies the file lacks. */
  replaceDay?: boolean;
  /** The text encoding of its CSV or JSON lines files (a byte order mark still decides). */
  encoding?: (typeof TEXT_ENCODINGS)[number];
}

export interface SavedImportProfile {
  account: string;
  profile: ImportProfile;
  savedAt: Date;
}

// What the table may hold; a profile written by a later version with more keys is read for what it knows.
const profileSchema = z.object({
  map: z.object(Object.fromEntries(BOOKS_FIELDS.map((f) => [f, z.string().min(1).optional()]))).optional(),
  dateFormat: z.enum(DATE_FORMATS).optional(),
  decimalMark: z.enum(['comma', 'point']).optional(),
  amounts: z.enum(['major', 'minor']).optional(),
  skipRows: z.number().int().min(0).optional(),
  skipFooter: z.number().int().min(0).optional(),
  replaceDay: z.boolean().optional(),
  encoding: z.enum(TEXT_ENCODINGS).optional(),
});

function settingsOf(settings: unknown): ImportProfile {
  const parsed = profileSchema.safeParse(settings);
  // A row edited by hand into something unreadable is no profile rather than a crash of every import.
  return parsed.success ? (parsed.data as ImportProfile) : {};
}

function profileOf(stored: StoredImportProfile): SavedImportProfile {
  return { account: stored.account, profile: settingsOf(stored.settings), savedAt: stored.savedAt };
}

/** A source's named profile (`--profile NAME`): an export's format, its rows naming any configured account. */
export interface SavedNamedProfile {
  name: string;
  profile: ImportProfile;
  savedAt: Date;
}

/** A profile name: letters, digits, dot, dash and underscore, at most 64. */
export const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function namedOf(stored: StoredNamedProfile): SavedNamedProfile {
  return { name: stored.name, profile: settingsOf(stored.settings), savedAt: stored.savedAt };
}

/** The named import profile NAME, if saved. */
export async function loadNamedProfile(ctx: AppContext, name: string): Promise<SavedNamedProfile | undefined> {
  const stored = await findNamedProfile(ctx.database.db, name);
  return stored === undefined ? undefined : namedOf(stored);
}

/** Every named import profile. */
export async function loadNamedProfiles(ctx: AppContext): Promise<SavedNamedProfile[]> {
  return (await listNamedProfiles(ctx.database.db)).map(namedOf);
}

/** Saves a named import profile, replacing the one before (inside the import's transaction). */
export async function storeNamedProfile(trx: Transaction<Database>, name: string, profile: ImportProfile, savedAt: Date): Promise<void> {
  await saveNamedProfile(trx, name, withoutUndefined(profile), savedAt);
}

/** The saved import profile of an account, if any. */
export async function loadImportProfile(ctx: AppContext, account: string): Promise<SavedImportProfile | undefined> {
  const stored = await findImportProfile(ctx.database.db, account);
  return stored === undefined ? undefined : profileOf(stored);
}

/** Every saved import profile. */
export async function loadImportProfiles(ctx: AppContext): Promise<SavedImportProfile[]> {
  return (await listImportProfiles(ctx.database.db)).map(profileOf);
}

/** Saves an account's import profile, replacing the one before (inside the import's transaction). */
export async function storeImportProfile(trx: Transaction<Database>, account: string, profile: ImportProfile, savedAt: Date): Promise<void> {
  await saveImportProfile(trx, account, withoutUndefined(profile), savedAt);
}

/** The options given to one import, over the account's saved profile: what `--save-profile` stores. */
export function mergeProfile(given: ImportProfile, saved: ImportProfile | undefined): ImportProfile {
  return withoutUndefined({
    map: given.map ?? saved?.map,
    dateFormat: given.dateFormat ?? saved?.dateFormat,
    decimalMark: given.decimalMark ?? saved?.decimalMark,
    amounts: given.amounts ?? saved?.amounts,
    skipRows: given.skipRows ?? saved?.skipRows,
    skipFooter: given.skipFooter ?? saved?.skipFooter,
    replaceDay: given.replaceDay ?? saved?.replaceDay,
    encoding: given.encoding ?? saved?.encoding,
  });
}

/**
 * How an account's books are written: the import's options, over its saved profile, over the
 * accounts file's `books` section, over the defaults (major units, ISO dates, default headers, the
 * decimal mark unstated so an amount that reads two ways is refused).
 */
export function resolveBooksFormat(config: Config, options: ImportProfile & { account?: string }, profile?: ImportProfile): BooksFormat {
  const accountName = options.account ?? (config.accounts.length === 1 ? config.accounts[0]!.name : undefined);
  const books: AccountBooksSettings = [...config.accounts, ...config.bankAccounts].find((a) => a.name === accountName)?.books ?? {};
  const fromFile: ImportProfile = {
    map: books.map,
    dateFormat: books.dateFormat,
    decimalMark: books.decimalMark ?? (books.decimalComma === undefined ? undefined : books.decimalComma ? 'comma' : 'point'),
    amounts: books.amounts,
  };
  const merged = mergeProfile(options, mergeProfile(profile ?? {}, fromFile));
  return {
    amounts: merged.amounts ?? 'major',
    decimalMark: merged.decimalMark ?? 'unstated',
    dateFormat: merged.dateFormat,
    map: merged.map,
    skipRows: merged.skipRows ?? 0,
    skipFooter: merged.skipFooter ?? 0,
    encoding: merged.encoding,
  };
}

/** The profile's lines for `ledger profile show`, one setting a line, defaults said as such. */
export function describeProfile(saved: SavedImportProfile | SavedNamedProfile): string[] {
  const p = saved.profile;
  const title = 'name' in saved ? `Import profile "${saved.name}" (files naming their accounts in a column)` : `Import profile of account "${saved.account}"`;
  const map = p.map === undefined ? '(default headers: business_date, currency, balance, account)' : Object.entries(p.map).map(([field, header]) => `${field}=${/[,"]|^\s|\s$/.test(header!) ? `"${header!.replace(/"/g, '""')}"` : header}`).join(',');
  return [
    `${title}, saved ${saved.savedAt.toISOString()}:`,
    `  map            ${map}`,
    `  date format    ${p.dateFormat ?? '(default: YYYY-MM-DD)'}`,
    `  decimal mark   ${p.decimalMark ?? '(not stated: amounts that read two ways are refused)'}`,
    `  amounts        ${p.amounts ?? '(default: major)'}`,
    `  skip rows      ${p.skipRows ?? 0}`,
    `  skip footer    ${p.skipFooter ?? 0}`,
    `  encoding       ${p.encoding ?? '(default: UTF-8, or as a byte order mark says)'}`,
    `  replace day    ${p.replaceDay === true ? "yes: an import may remove a day's currencies the file lacks" : "no: an import that would remove a day's other currencies is refused without --replace-day"}`,
  ];
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
