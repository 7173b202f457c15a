import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';
import { createLogger } from '../../src/logger.js';
import { Writable } from 'node:stream';

const dir = mkdtempSync(path.join(tmpdir(), 'wr-books-config-'));
const load = (env: Record<string, string>) => loadConfig({ env, cwd: dir, ignoreDotEnv: true });
function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    load(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}
function accountsFile(accounts: unknown[]): string {
  const file = path.join(mkdtempSync(path.join(dir, 'accounts-')), 'accounts.json');
  writeFileSync(file, JSON.stringify({ accounts }));
  return file;
}

describe('books source configuration', () => {
  it('pulls every 30 minutes with a 30 s statement timeout by default, both as durations', () => {
    expect(load({}).books).toEqual({ databaseUrl: undefined, sqlFile: undefined, statementTimeoutMs: 30_000, pullEveryMs: 1_800_000 });
    const config = load({ RECON_BOOKS_PULL_EVERY: '1h30m', RECON_BOOKS_STATEMENT_TIMEOUT: '2m', RECON_BOOKS_SQL_FILE: 'ledger.sql', RECON_BOOKS_DATABASE_URL: 'postgres://ro@ledger/gl' });
    expect(config.books).toMatchObject({ sqlFile: path.join(dir, 'ledger.sql'), statementTimeoutMs: 120_000, pullEveryMs: 5_400_000 });
    expect(config.books.databaseUrl?.reveal()).toBe('postgres://ro@ledger/gl');
  });

  it('refuses durations out of range and a query without a database to run it against', () => {
    expect(problemsOf({ RECON_BOOKS_PULL_EVERY: '30', RECON_BOOKS_STATEMENT_TIMEOUT: '2h' })).toEqual([
      'RECON_BOOKS_STATEMENT_TIMEOUT must be a duration from 1s to 1h, such as 30s or 2m, got "2h"',
      'RECON_BOOKS_PULL_EVERY must be a duration from 1m to 24h, such as 30m or 1h, got "30"',
    ]);
    expect(problemsOf({ RECON_BOOKS_SQL_FILE: 'ledger.sql' })).toEqual(['RECON_BOOKS_DATABASE_URL (or RECON_BOOKS_DATABASE_URL_FILE) is required when a books query is configured (RECON_BOOKS_SQL_FILE)']);
  });

  it('reads the URL from a secret file, never quotes it, and masks its password in logs', () => {
    const secret = path.join(dir, 'ledger-url');
    writeFileSync(secret, 'postgres://ro:ledger-secret-pw@ledger/gl\n');
    const config = load({ RECON_BOOKS_DATABASE_URL_FILE: secret });
    expect(config.books.databaseUrl?.reveal()).toBe('postgres://ro:ledger-secret-pw@ledger/gl');
    expect(config.secretVariables).toContain('RECON_BOOKS_DATABASE_URL');
    expect(problemsOf({ RECON_BOOKS_DATABASE_URL: 'mysql://ro:ledger-secret-pw@ledger/gl' }).join('\n')).not.toContain('ledger-secret-pw');
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', destination: new Writable({ write: (chunk, _enc, done) => void (lines.push(String(chunk)), done()) }) });
    logger.warn({ error: 'connect to ledger with ledger-secret-pw failed' }, 'books pull failed');
    expect(lines.join('')).not.toContain('ledger-secret-pw');
  });

  it("keeps an account's saved books settings, its query file found beside the accounts file", () => {
    const file = accountsFile([
      { name: 'eu-main', environment: 'sandbox', apiKeyEnv: 'K', apiSecretEnv: 'S', books: { map: { business_date: 'Value date', balance: 'Closing balance' }, dateFormat: 'DD/MM/YYYY', decimalComma: true, sqlFile: 'eu.sql' } },
      { name: 'us-main', environment: 'sandbox', apiKeyEnv: 'K', apiSecretEnv: 'S' },
    ]);
    const config = load({ RECON_ACCOUNTS_FILE: file, RECON_BOOKS_DATABASE_URL: 'postgres://ro@ledger/gl' });
    expect(config.accounts[0]!.books).toEqual({ map: { business_date: 'Value date', balance: 'Closing balance' }, dateFormat: 'DD/MM/YYYY', decimalComma: true, sqlFile: path.join(path.dirname(file), 'eu.sql') });
    expect(config.accounts[1]!.books).toBeUndefined();
    const bad = accountsFile([{ name: 'eu-main', environment: 'sandbox', apiKeyEnv: 'K', apiSecretEnv: 'S', books: { dateFormat: 'D/M/Y', map: { amount: 'Balance' } } }]);
    expect(problemsOf({ RECON_ACCOUNTS_FILE: bad })).toEqual([
      `RECON_ACCOUNTS_FILE (${bad}) at accounts.0.books.map: Unrecognized key: "amount"`,
      `RECON_ACCOUNTS_FILE (${bad}) at accounts.0.books.dateFormat: must be one of: YYYY-MM-DD, DD/MM/YYYY, MM/DD/YYYY, YYYY/MM/DD, DD.MM.YYYY, DD-MM-YYYY`,
    ]);
  });

  it('takes an entries query from RECON_BOOKS_ENTRIES_SQL_FILE or an account\'s books.entriesSqlFile (a bank account\'s too), each needing the ledger database', () => {
    expect(load({ RECON_BOOKS_ENTRIES_SQL_FILE: 'lines.sql', RECON_BOOKS_DATABASE_URL: 'postgres://ro@ledger/gl' }).books.entriesSqlFile).toBe(path.join(dir, 'lines.sql'));
    expect(problemsOf({ RECON_BOOKS_ENTRIES_SQL_FILE: 'lines.sql' })).toEqual(['RECON_BOOKS_DATABASE_URL (or RECON_BOOKS_DATABASE_URL_FILE) is required when a books query is configured (RECON_BOOKS_ENTRIES_SQL_FILE)']);
    const file = path.join(mkdtempSync(path.join(dir, 'accounts-')), 'accounts.json');
    writeFileSync(file, JSON.stringify({ bankAccounts: [{ name: 'eu-bank', iban: 'DE89370400440532013000', currency: 'EUR', books: { entriesSqlFile: 'bank-lines.sql' } }] }));
    expect(load({ RECON_ACCOUNTS_FILE: file, RECON_BOOKS_DATABASE_URL: 'postgres://ro@ledger/gl' }).bankAccounts[0]!.books).toEqual({ entriesSqlFile: path.join(path.dirname(file), 'bank-lines.sql') });
    expect(problemsOf({ RECON_ACCOUNTS_FILE: file })).toEqual(['RECON_BOOKS_DATABASE_URL (or RECON_BOOKS_DATABASE_URL_FILE) is required when a books query is configured (the books.entriesSqlFile of account "eu-bank")']);
  });
});
