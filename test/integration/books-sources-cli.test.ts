import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/database.types.js';
import { writeCamt053, writeMt940 } from '../../src/statements/index.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

// Books and statements as other systems write them: other encodings, one export for several accounts.
let t: TestDatabase;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  // The embedded database serves one handle at a time: the CLI opens it per command.
  if (backend === 'embedded') await t.handle.close();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-books-sources-'));
  const gateway = (name: string) => ({ name, environment: 'sandbox', apiKeyEnv: 'GATEWAY_API_KEY', apiSecretEnv: 'GATEWAY_API_SECRET' });
  writeFileSync(
    path.join(dir, 'accounts.json'),
    JSON.stringify({ accounts: [gateway('shop-eu'), gateway('shop-uk')], bankAccounts: [{ name: 'hausbank', iban: 'DE89370400440532013000', currency: 'EUR' }] }),
  );
  env = { DATABASE_URL: '', ...t.childEnv, LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC', RECON_ACCOUNTS_FILE: path.join(dir, 'accounts.json') };
});
afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const withDb = <T>(fn: (db: Kysely<Database>) => Promise<T>) => withDatabase(t, fn);
const clock = () => new FixedClock(new Date('2026-11-25T12:00:00Z'));
const cli = (args: string[]) => runCliInProcess(args, env, { clock: clock() });

function file(name: string, content: string | Buffer): string {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return p;
}

async function stored(date: string) {
  const rows = await withDb((db) => db.selectFrom('expected_balances').select(['account', 'currency', 'balance']).where('business_date', '=', date).orderBy('account').orderBy('currency').execute());
  return rows.map((r) => `${r.account} ${r.currency} ${r.balance}`);
}

describe(`books and statements in other encodings (${backend})`, () => {
  it('refuses a Windows-1252 CSV without --encoding naming windows-1252 and the option, and imports it with --encoding windows-1252', async () => {
    const text = 'Datum;Währung;Schlusssaldo\n20.11.2026;EUR;1.234,56\n';
    const cp1252 = file('erp-1252.csv', Buffer.from(text, 'latin1'));
    const options = ['--account', 'shop-eu', '--map', 'business_date=Datum,currency=Währung,balance=Schlusssaldo', '--date-format', 'DD.MM.YYYY', '--decimal-comma'];

    const refused = await cli(['ledger', 'import', cp1252, ...options]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('erp-1252.csv line 1 is not valid UTF-8; it looks like windows-1252: pass --encoding windows-1252');
    expect(await stored('2026-11-20')).toEqual([]);

    const imported = await cli(['ledger', 'import', cp1252, ...options, '--encoding', 'windows-1252']);
    expect(imported.stderr).toBe('');
    expect(imported.code).toBe(0);
    expect(await stored('2026-11-20')).toEqual(['shop-eu EUR 123456']);
  });

  it('reads UTF-16 and UTF-8 files by their byte order mark, ISO-8859-15 by name, and refuses an unknown encoding', async () => {
    const header = 'business_date,currency,balance,account\n';
    const utf16 = file('utf16.csv', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`${header}2026-11-19,EUR,10.00,shop-eu\n`, 'utf16le')]));
    expect(await cli(['ledger', 'import', utf16])).toMatchObject({ code: 0, stderr: '' });
    const bom8 = file('utf8-bom.csv', `\uFEFF${header}2026-11-19,GBP,20.00,shop-uk\n`);
    expect(await cli(['ledger', 'import', bom8])).toMatchObject({ code: 0, stderr: '' });
    expect(await stored('2026-11-19')).toEqual(['shop-eu EUR 1000', 'shop-uk GBP 2000']);

    // 0xA4 is the euro sign in ISO-8859-15.
    const latin9 = file('latin9.csv', Buffer.concat([Buffer.from('business_date,currency,Saldo ', 'latin1'), Buffer.from([0xa4]), Buffer.from(',account\n2026-11-18,EUR,30.00,shop-eu\n')]));
    expect(await cli(['ledger', 'import', latin9, '--encoding', 'iso-8859-15', '--map', 'balance=Saldo €'])).toMatchObject({ code: 0, stderr: '' });
    expect(await stored('2026-11-18')).toEqual(['shop-eu EUR 3000']);
    // JSON lines are decoded as they stream too.
    const jsonl = file('latin1.jsonl', Buffer.from('{"business_date":"2026-11-17","currency":"EUR","balance":"1.00","account":"shop-eu","note":"März"}\n', 'latin1'));
    const jsonRefused = await cli(['ledger', 'import', jsonl]);
    expect(jsonRefused).toMatchObject({ code: 2 });
    expect(jsonRefused.stderr).toContain('latin1.jsonl line 1 is not valid UTF-8; it looks like windows-1252: pass --encoding windows-1252');
    const wrong = await cli(['ledger', 'import', latin9, '--encoding', 'ebcdic']);
    expect(wrong).toMatchObject({ code: 2 });
    expect(wrong.stderr).toContain('--encoding "ebcdic" is not one of: utf-8, utf-16le, utf-16be, windows-1252, iso-8859-1, iso-8859-15.');
  });

  it('refuses a Latin-1 MT940 file without --encoding and imports it with --encoding iso-8859-1', async () => {
    const mt940 = writeMt940({ iban: 'DE89370400440532013000', currency: 'EUR', opening: 1_000_000n, days: [{ sequence: 7, date: '2026-11-02', entries: [250_000n] }] }).replace('entry 1 of statement 7', 'Überweisung Müller');
    const latin1 = file('statement.sta', Buffer.from(mt940, 'latin1'));
    const refused = await cli(['statements', 'import', latin1]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('statement.sta line 7 is not valid UTF-8; it looks like windows-1252: pass --encoding windows-1252');
    expect(await withDb((db) => db.selectFrom('bank_statements').select('id').execute())).toEqual([]);
    const imported = await cli(['statements', 'import', latin1, '--encoding', 'iso-8859-1']);
    expect(imported.stderr).toBe('');
    expect(imported.code).toBe(0);
    expect(await withDb((db) => db.selectFrom('bank_statements').select('id').execute())).toHaveLength(1);
  });
});

describe(`named import profiles of multi-account exports (${backend})`, () => {
  it('saves a profile of a two-account export without --account, lists and shows it, and imports the next export with --profile NAME only', async () => {
    const options = ['--map', 'business_date=Datum,currency=Währung,balance=Schlusssaldo,account=Konto', '--date-format', 'DD.MM.YYYY', '--decimal-comma', '--skip-rows', '1'];
    const erp = (name: string, day: string, eu: string, bank: string) =>
      file(name, Buffer.from(`Kontostände ERP\nDatum;Konto;Währung;Schlusssaldo\n${day};shop-eu;EUR;${eu}\n${day};hausbank;EUR;${bank}\n`, 'latin1'));
    const first = erp('erp-1.csv', '10.11.2026', '12.500.000,00', '3.000,00');

    const saved = await cli(['ledger', 'import', first, ...options, '--encoding', 'windows-1252', '--profile', 'erp', '--save-profile']);
    expect(saved.stderr).toBe('');
    expect(saved.code).toBe(0);
    expect(saved.stdout.split('\n')).toEqual([
      expect.stringMatching(/^Imported 2 expected balances from erp-1\.csv for hausbank, shop-eu, 2026-11-10: 2 new, 0 changed, 0 unchanged, 0 removed\./),
      'Saved these options as import profile "erp" ("wallet-recon ledger profile show erp" prints it; "wallet-recon ledger import FILE --profile erp" uses it).',
    ]);
    expect(await stored('2026-11-10')).toEqual(['hausbank EUR 300000', 'shop-eu EUR 1250000000']);

    const listed = await cli(['ledger', 'profile', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^profile +kind +saved\n.*\nerp +named \(accounts from the file\) +2026-11-25T12:00:00\.000Z$/s);
    const shown = await cli(['ledger', 'profile', 'show', 'erp']);
    expect(shown.code).toBe(0);
    expect(shown.stdout.split('\n').slice(0, 3)).toEqual([
      'Import profile "erp" (files naming their accounts in a column), saved 2026-11-25T12:00:00.000Z:',
      '  map            business_date=Datum,currency=Währung,balance=Schlusssaldo,account=Konto',
      '  date format    DD.MM.YYYY',
    ]);
    expect(shown.stdout).toContain('  encoding       windows-1252');

    // The next export: the profile and nothing else.
    const next = erp('erp-2.csv', '11.11.2026', '12.600.000,00', '2.500,00');
    const plain = await cli(['ledger', 'import', next, '--profile', 'erp']);
    expect(plain.stderr).toBe('');
    expect(plain.code).toBe(0);
    expect(plain.stdout.split('\n')).toEqual([
      expect.stringMatching(/^Imported 2 expected balances from erp-2\.csv for hausbank, shop-eu, 2026-11-11: 2 new, 0 changed, 0 unchanged, 0 removed\./),
      'Read with import profile "erp".',
    ]);
    expect(await stored('2026-11-11')).toEqual(['hausbank EUR 250000', 'shop-eu EUR 1260000000']);

    const unknown = await cli(['ledger', 'import', next, '--profile', 'sap']);
    expect(unknown).toMatchObject({ code: 2 });
    expect(unknown.stderr).toContain('There is no import profile "sap" (saved: erp). Save it with: wallet-recon ledger import FILE [options] --profile sap --save-profile');
  });
});

describe(`import hints name the option that fits the text seen (${backend})`, () => {
  it('suggests DD.MM.YYYY for a dotted date, --decimal-comma for 12.845.500,75 and --skip-rows for a title row', async () => {
    const dotted = file('dotted.csv', 'business_date,currency,balance,account\n02.11.2026,EUR,12.845.500,75,shop-eu\n'.replace('12.845.500,75', '"12.845.500,75"'));
    const refused = await cli(['ledger', 'import', dotted]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('dotted.csv line 2: business_date "02.11.2026" is not a real date in the form YYYY-MM-DD; pass --date-format, e.g. --date-format DD.MM.YYYY');
    expect(refused.stderr).toContain('dotted.csv line 2: balance "12.845.500,75" looks like a decimal comma; pass --decimal-comma');

    const titled = file('titled.csv', 'Kontostände Händlerkonto\nExport vom 03.11.2026\nbusiness_date;currency;balance;account\n2026-11-02;EUR;1,00;shop-eu\n');
    const title = await cli(['ledger', 'import', titled]);
    expect(title.code).toBe(1);
    expect(title.stderr).toContain('line 3 reads as the header: pass --skip-rows 2 to skip the lines above it');
    const oneMore = await cli(['ledger', 'import', titled, '--skip-rows', '1']);
    expect(oneMore.stderr).toContain('titled.csv line 2: the header must name the columns');
    expect(oneMore.stderr).toContain('line 3 reads as the header: pass --skip-rows 2 to skip the lines above it');
  });
});

describe('statements sample', () => {
  it('writes camt.053.001.08 with the entry status as Sts/Cd, as its schema has it', () => {
    const xml = writeCamt053({ iban: 'DE89370400440532013000', currency: 'EUR', opening: 0n, days: [{ sequence: 1, date: '2026-11-02', entries: [100n] }], camtVersion: 8 });
    expect(xml).toContain('camt.053.001.08');
    expect(xml).toContain('<Sts><Cd>BOOK</Cd></Sts>');
    expect(xml).not.toContain('<Sts>BOOK</Sts>');
  });
});

