import * as z from 'zod';
import { parseDuration } from '../business-date/duration.js';
import { registerSecretValue, Secret } from '../secret.js';
import path from 'node:path';
import type { AccountBooksSettings, BooksSourceSettings } from './config-types.js';

/** The orders of day, month and year a books file may write its dates in (`--date-format`, an account's `books.dateFormat`). */
export const BOOKS_DATE_FORMATS = ['YYYY-MM-DD', 'DD/MM/YYYY', 'MM/DD/YYYY', 'YYYY/MM/DD', 'DD.MM.YYYY', 'DD-MM-YYYY'] as const;

/** A duration (`30s`, `30m`, `1h30m`) in milliseconds within [min, max]. */
const durationBetween = (min: number, max: number, what: string) =>
  z.string().transform((v, ctx) => {
    const ms = parseDuration(v);
    if (ms === undefined || ms < min || ms > max) {
      ctx.addIssue({ code: 'custom', message: `must be ${what}` });
      return z.NEVER;
    }
    return ms;
  });

/** The books source's variables (the merchant's ledger database and its query), part of the one environment schema. */
export const booksVariables = {
  RECON_BOOKS_DATABASE_URL: z
    .string()
    .optional()
    .refine((v) => v === undefined || /^postgres(ql)?:\/\//.test(v), 'must be a postgres:// or postgresql:// URL'),
  RECON_BOOKS_SQL_FILE: z.string().min(1).optional(),
  RECON_BOOKS_ENTRIES_SQL_FILE: z.string().min(1).optional(),
  RECON_BOOKS_STATEMENT_TIMEOUT: z.string().default('30s').pipe(durationBetween(1000, 3_600_000, 'a duration from 1s to 1h, such as 30s or 2m')),
  RECON_BOOKS_PULL_EVERY: z.string().default('30m').pipe(durationBetween(60_000, 86_400_000, 'a duration from 1m to 24h, such as 30m or 1h')),
};

/** An account's `books` section in the accounts file: how its exports are written and where its query is. */
export const accountBooksSchema = z
  .object({
    map: z
      .object({ business_date: z.string().min(1), currency: z.string().min(1), balance: z.string().min(1), account: z.string().min(1) })
      .partial()
      .strict()
      .optional(),
    dateFormat: z.enum(BOOKS_DATE_FORMATS, { error: `must be one of: ${BOOKS_DATE_FORMATS.join(', ')}` }).optional(),
    decimalComma: z.boolean({ error: 'must be true or false' }).optional(),
    decimalMark: z.enum(['comma', 'point'], { error: 'must be one of: comma, point' }).optional(),
    amounts: z.enum(['major', 'minor'], { error: 'must be one of: major, minor' }).optional(),
    sqlFile: z.string().min(1).optional(),
    entriesSqlFile: z.string().min(1).optional(),
  })
  .strict()
  .refine((b) => b.decimalMark === undefined || b.decimalComma === undefined || (b.decimalMark === 'comma') === b.decimalComma, {
    message: 'decimalMark and decimalComma contradict each other; keep decimalMark alone',
    path: ['decimalMark'],
  });

type BooksValues = z.output<z.ZodObject<typeof booksVariables>>;

/**
 * The books source settings from validated values; a query configured without a database to
 * run it against is a problem. The URL's password is masked in logs by value too.
 */
export function booksSettingsOf(v: BooksValues, cwd: string, accounts: readonly { name: string; books?: AccountBooksSettings }[], problems: string[]): BooksSourceSettings {
  const url = v.RECON_BOOKS_DATABASE_URL;
  if (url === undefined) {
    const queried = [
      ...(v.RECON_BOOKS_SQL_FILE === undefined ? [] : ['RECON_BOOKS_SQL_FILE']),
      ...(v.RECON_BOOKS_ENTRIES_SQL_FILE === undefined ? [] : ['RECON_BOOKS_ENTRIES_SQL_FILE']),
      ...accounts.filter((a) => a.books?.sqlFile !== undefined).map((a) => `the books.sqlFile of account "${a.name}"`),
      ...accounts.filter((a) => a.books?.entriesSqlFile !== undefined).map((a) => `the books.entriesSqlFile of account "${a.name}"`),
    ];
    if (queried.length > 0) problems.push(`RECON_BOOKS_DATABASE_URL (or RECON_BOOKS_DATABASE_URL_FILE) is required when a books query is configured (${queried.join(', ')})`);
  } else {
    try {
      const password = new URL(url).password;
      if (password !== '') registerSecretValue(decodeURIComponent(password));
    } catch {
      problems.push('RECON_BOOKS_DATABASE_URL is not a valid URL (value hidden)');
    }
  }
  return {
    databaseUrl: url === undefined ? undefined : new Secret(url),
    sqlFile: v.RECON_BOOKS_SQL_FILE === undefined ? undefined : path.resolve(cwd, v.RECON_BOOKS_SQL_FILE),
    entriesSqlFile: v.RECON_BOOKS_ENTRIES_SQL_FILE === undefined ? undefined : path.resolve(cwd, v.RECON_BOOKS_ENTRIES_SQL_FILE),
    statementTimeoutMs: v.RECON_BOOKS_STATEMENT_TIMEOUT,
    pullEveryMs: v.RECON_BOOKS_PULL_EVERY,
  };
}
