import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.types.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  // The embedded database serves one handle at a time: the CLI opens it per command.
  if (backend === 'embedded') await t.handle.close();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-import-profiles-'));
  env = { DATABASE_URL: '', ...t.childEnv, LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC' };
});
afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const withDb = <T>(fn: (db: Kysely<Database>) => Promise<T>) => withDatabase(t, fn);
const cli = (args: string[], extraEnv: Record<string, string> = {}) => runCliInProcess(args, { ...env, ...extraEnv });
/** Each test but the first works on its own account of this accounts file, so profiles never cross tests. */
const accountsCli = (args: string[]) => {
  const accounts = path.join(dir, 'accounts.json');
  const account = (name: string) => ({ name, environment: 'sandbox', apiKeyEnv: 'GATEWAY_API_KEY', apiSecretEnv: 'GATEWAY_API_SECRET' });
  writeFileSync(accounts, JSON.stringify({ accounts: [account('corrections'), account('footers')] }));
  return cli(args, { RECON_ACCOUNTS_FILE: accounts });
};

function file(name: string, content: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return p;
}

async function stored(date: string, account = 'default') {
  const rows = await withDb((db) =>
    db.selectFrom('expected_balances').select(['currency', 'balance', 'source']).where('business_date', '=', date).where('account', '=', account).orderBy('currency').execute(),
  );
  return rows.map((r) => `${r.currency} ${r.balance} ${r.source}`);
}

/** The German bank-style export: a title row, semicolons, DD/MM/YYYY, decimal commas and a "Summe" row. */
function germanExport(name: string, day: string, rows: Array<[string, string]>): string {
  const [y, m, d] = day.split('-');
  return file(name, `Kontostände Händlerkonto\nDatum;Währung;Schlusssaldo\n${rows.map(([c, b]) => `${d}/${m}/${y};${c};${b}`).join('\n')}\nSumme;;999.999,99\n`);
}

const GERMAN_OPTIONS = ['--map', 'business_date=Datum,currency=Währung,balance=Schlusssaldo', '--date-format', 'DD/MM/YYYY', '--decimal-comma', '--skip-rows', '1'];

describe(`saved import profiles (${backend})`, () => {
  it('saves the German export options for the default account, prints them, and imports the next export with no options', async () => {
    const none = await cli(['ledger', 'profile', 'show']);
    expect(none).toMatchObject({ code: 0, stdout: 'No account has a saved import profile. Save one with: wallet-recon ledger import FILE [options] --save-profile' });

    const first = germanExport('kontostand-1.csv', '2026-11-19', [['EUR', '1.234,56'], ['JPY', '250.000'], ['USD', '(2.000,10)']]);
    const saved = await cli(['ledger', 'import', first, ...GERMAN_OPTIONS, '--save-profile']);
    expect(saved.stderr).toBe('');
    expect(saved.code).toBe(0);
    expect(saved.stdout.split('\n')).toEqual([
      'Imported 3 expected balances from kontostand-1.csv for default, 2026-11-19: 3 new, 0 changed, 0 unchanged, 0 removed.',
      'Saved these options as the import profile of account "default" ("wallet-recon ledger profile show" prints it).',
      'Skipped line 6: a total row ("Summe").',
    ]);
    expect(await stored('2026-11-19')).toEqual(['EUR 123456 kontostand-1.csv', 'JPY 250000 kontostand-1.csv', 'USD -200010 kontostand-1.csv']);
    const profileRow = await withDb((db) => db.selectFrom('import_profiles').select(['account', 'settings']).execute());
    expect(profileRow).toEqual([
      { account: 'default', settings: { map: { business_date: 'Datum', currency: 'Währung', balance: 'Schlusssaldo' }, dateFormat: 'DD/MM/YYYY', decimalMark: 'comma', skipRows: 1 } },
    ]);

    const shown = await cli(['ledger', 'profile', 'show', '--account', 'default']);
    expect(shown.code).toBe(0);
    const lines = shown.stdout.split('\n');
    expect(lines[0]).toMatch(/^Import profile of account "default", saved \d{4}-\d\d-\d\dT[\d:.]+Z:$/);
    expect(lines.slice(1)).toEqual([
      '  map            business_date=Datum,currency=Währung,balance=Schlusssaldo',
      '  date format    DD/MM/YYYY',
      '  decimal mark   comma',
      '  amounts        (default: major)',
      '  skip rows      1',
      '  skip footer    0',
      '  encoding       (default: UTF-8, or as a byte order mark says)',
      "  replace day    no: an import that would remove a day's other currencies is refused without --replace-day",
      'Options given to "wallet-recon ledger import" win over a profile.',
    ]);

    // The next morning: no options at all.
    const next = germanExport('kontostand-2.csv', '2026-11-20', [['EUR', '1.300,00'], ['JPY', '1.500'], ['USD', '0,10']]);
    const plain = await cli(['ledger', 'import', next]);
    expect(plain.stderr).toBe('');
    expect(plain).toMatchObject({ code: 0 });
    expect(plain.stdout.split('\n')).toEqual([
      'Imported 3 expected balances from kontostand-2.csv for default, 2026-11-20: 3 new, 0 changed, 0 unchanged, 0 removed.',
      'Read with the import profile of account "default".',
      'Skipped line 6: a total row ("Summe").',
    ]);
    expect(await stored('2026-11-20')).toEqual(['EUR 130000 kontostand-2.csv', 'JPY 1500 kontostand-2.csv', 'USD 10 kontostand-2.csv']);

    // An option given wins over the profile for this import only.
    const iso = file('iso-dates.csv', 'Kontostände\nDatum;Währung;Schlusssaldo\n2026-11-18;EUR;5,00\n');
    const overridden = await cli(['ledger', 'import', iso, '--date-format', 'YYYY-MM-DD']);
    expect(overridden).toMatchObject({ code: 0, stderr: '' });
    expect(await stored('2026-11-18')).toEqual(['EUR 500 iso-dates.csv']);
    expect((await cli(['ledger', 'profile', 'show'])).stdout).toContain('  date format    DD/MM/YYYY');
  });

  it("refuses an import that would remove a day's other currencies until --replace-day or the profile consents", async () => {
    const day = '2026-11-17';
    const full = file('full.csv', `business_date,currency,balance\n${day},EUR,1.00\n${day},GBP,2.00\n${day},USD,3.00\n`);
    expect((await accountsCli(['ledger', 'import', full, '--account', 'corrections', '--decimal-point'])).code).toBe(0);
    const correction = file('correction.csv', `business_date,currency,balance\n${day},EUR,1.50\n`);

    const dry = await accountsCli(['ledger', 'import', correction, '--account', 'corrections', '--decimal-point', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("The import would be refused: it removes a day's stored currencies the file lacks; pass --replace-day to allow that, or add their rows.");

    const refused = await accountsCli(['ledger', 'import', correction, '--account', 'corrections', '--decimal-point']);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toBe(
      "correction.csv would remove 2 stored balances of the days it lists, because it lacks their currencies: corrections 2026-11-17 GBP (2.00), corrections 2026-11-17 USD (3.00). Each day in a books file is taken as that day's complete books: pass --replace-day to remove them (save that consent with --save-profile), or add their rows. Nothing was imported.",
    );
    expect(await stored(day, 'corrections')).toEqual(['EUR 100 full.csv', 'GBP 200 full.csv', 'USD 300 full.csv']);

    const replaced = await accountsCli(['ledger', 'import', correction, '--account', 'corrections', '--decimal-point', '--replace-day']);
    expect(replaced).toMatchObject({ code: 0, stderr: '' });
    expect(replaced.stdout).toContain(': 0 new, 1 changed, 0 unchanged, 2 removed.');
    expect(await stored(day, 'corrections')).toEqual(['EUR 150 correction.csv']);

    // Consent saved in the profile (the other saved options stay): the next correction needs no flag.
    expect((await accountsCli(['ledger', 'import', full, '--account', 'corrections', '--decimal-point', '--replace-day', '--save-profile'])).code).toBe(0);
    expect((await accountsCli(['ledger', 'profile', 'show', '--account', 'corrections'])).stdout).toContain("  replace day    yes: an import may remove a day's currencies the file lacks");
    const again = await accountsCli(['ledger', 'import', correction, '--account', 'corrections', '--decimal-point']);
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(await stored(day, 'corrections')).toEqual(['EUR 150 correction.csv']);
  });

  it('skips footer rows with --skip-footer and refuses options that make no sense', async () => {
    const withFooter = file('footer.csv', 'business_date,currency,balance\n2026-11-16,EUR,1.25\nexported by ERP,,\nend of report,,\n');
    const imported = await accountsCli(['ledger', 'import', withFooter, '--account', 'footers', '--skip-footer', '2']);
    expect(imported.stderr).toBe('');
    expect(imported.stdout.split('\n').slice(-2)).toEqual(['Skipped line 3: footer (--skip-footer).', 'Skipped line 4: footer (--skip-footer).']);
    expect(await stored('2026-11-16', 'footers')).toEqual(['EUR 125 footer.csv']);

    const dryProfile = await accountsCli(['ledger', 'import', withFooter, '--account', 'footers', '--dry-run', '--save-profile']);
    expect(dryProfile.code).toBe(2);
    expect(dryProfile.stderr).toContain('--save-profile saves the options of an import that is written');
    const badCount = await accountsCli(['ledger', 'import', withFooter, '--account', 'footers', '--skip-rows', 'two']);
    expect(badCount.code).toBe(2);
    expect(badCount.stderr).toContain('--skip-rows "two" must be a number of rows');
    const unknown = await accountsCli(['ledger', 'profile', 'show', '--account', 'nobody']);
    expect(unknown.code).toBe(2);
  });
});
