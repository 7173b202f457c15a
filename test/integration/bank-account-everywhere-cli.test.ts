import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AppContext } from '../../src/app-context.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { buildConsoleApp } from '../../src/console/console-app.js';
import { addUser } from '../../src/console/console-users.js';
import { openDatabase } from '../../src/db/open-database.js';
import { readSignoffReport } from '../../src/db/signoff.repository.js';
import { reopenSignoff } from '../../src/signoff/reopen.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { approveSignoff, prepareSignoff } from '../../src/signoff/signoff-service.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { writeCamt053 } from '../../src/statements/index.js';
import { ConsoleClient } from '../helpers/console-night.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

// Issue 44: one gateway account (shop, from the emulator) and one bank account (hausbank, camt
// statements) in Berlin. 1 December: both captured or stated, both with a break — the shop's
// accepted, the bank's acknowledged with a note. 2 December: the shop captured, the bank's
// statement not yet come (awaiting_statement). "Now" is the morning of 3 December.
const IBAN = 'DE89370400440532013000';
const D1 = '2026-12-01';
const D2 = '2026-12-02';
const NOW = '2026-12-03T06:00:00Z';
const ACK_NOTE = 'Die Bank hat eine Gebühr von 1,00 EUR doppelt belastet; Rückbuchung ist beantragt, Ticket BANK-4711, Antwort der Bank erwartet am Montag.';

let t: TestDatabase;
let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;
let shopCase: number;
let bankCase: number;

const cli = (args: string[], iso = NOW, extra: Record<string, string> = {}) => runCliInProcess(args, { ...env, ...extra }, { clock: new FixedClock(new Date(iso)) });
function file(name: string, content: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return p;
}

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  if (backend === 'embedded') await t.handle.close();
  sandbox = await startSandbox({ port: 0, wallets: 2, seed: 5 });
  dir = mkdtempSync(path.join(tmpdir(), 'wr-bank-everywhere-'));
  const accounts = file(
    'accounts.yaml',
    ['accounts:', '  - { name: shop, environment: sandbox, apiKeyEnv: SHOP_KEY, apiSecretEnv: SHOP_SECRET }', 'bankAccounts:', `  - { name: hausbank, iban: ${IBAN}, currency: EUR }`, ''].join('\n'),
  );
  env = {
    DATABASE_URL: '',
    ...t.childEnv,
    GATEWAY_SANDBOX_URL: sandbox.url,
    SHOP_KEY: sandbox.apiKey,
    SHOP_SECRET: sandbox.apiSecret,
    LOG_LEVEL: 'silent',
    RECON_TIMEZONE: 'Europe/Berlin',
    RECON_ACCOUNTS_FILE: accounts,
    RECON_ACTOR: 'anna',
  };
  // 00:10 in Berlin: the end of day of the date before.
  for (const at of ['2026-12-01T23:10:00Z', '2026-12-02T23:10:00Z']) {
    const snap = await cli(['snapshot', '--account', 'shop'], at);
    expect(snap.code, snap.stdout + snap.stderr).toBe(0);
  }
  const camt = file('hausbank.xml', writeCamt053({ iban: IBAN, currency: 'EUR', opening: 1_250_000_000n, days: [{ sequence: 1, date: D1, entries: [] }] }));
  expect((await cli(['statements', 'import', camt])).code).toBe(0);
  const [first, second] = sandbox.wallets;
  const books = file(
    'books.csv',
    [
      'account,business_date,currency,balance',
      `shop,${D1},${first!.currency},${first!.balance - 500n}`,
      `shop,${D1},${second!.currency},${second!.balance}`,
      `shop,${D2},${first!.currency},${first!.balance - 500n}`,
      `shop,${D2},${second!.currency},${second!.balance}`,
      `hausbank,${D1},EUR,1249999900`,
      `hausbank,${D2},EUR,1249999900`,
      '',
    ].join('\n'),
  );
  const imported = await cli(['ledger', 'import', '--amounts', 'minor', books]);
  expect(imported.code, imported.stderr).toBe(0);
  const cases = await withDatabase(t, (db) => db.selectFrom('reconciliation_cases').select(['id', 'account']).where('kind', '=', 'break').orderBy('id').execute());
  shopCase = cases.find((c) => c.account === 'shop')!.id;
  bankCase = cases.find((c) => c.account === 'hausbank')!.id;
  const acc = await cli(['cases', 'accept', String(shopCase), '--note', 'rounding at the gateway, fixed in January', '--until', '2026-12-31']);
  expect(acc.code, acc.stderr).toBe(0);
  expect((await cli(['cases', 'ack', String(bankCase), '--note', ACK_NOTE])).code).toBe(0);
}, 180_000);

afterAll(async () => {
  await sandbox?.close();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** A context on the test database, with its own handle while the embedded one is closed between CLI commands. */
async function withContext<T>(fn: (ctx: AppContext) => Promise<T>, extra: Record<string, string> = {}): Promise<T> {
  const handle = backend === 'postgres' ? t.handle : await openDatabase({ dataDir: t.childEnv.RECON_DATA_DIR!, command: 'test of a bank account everywhere' });
  try {
    return await fn({ ...createTestContext(t, { ...env, ...extra }, { clock: new FixedClock(new Date(NOW)) }), database: handle });
  } finally {
    if (backend === 'embedded') await handle.close();
  }
}

const PASSWORD = 'vera-viewer-pw-44';

/** The console's pages for a signed-in viewer, on the clock of NOW. */
function consolePages(urls: readonly string[], extra: Record<string, string> = {}): Promise<string[]> {
  return withContext(async (ctx) => {
    const known = await ctx.database.db.selectFrom('console_users').select('name').where('name', '=', 'vera').executeTakeFirst();
    if (known === undefined) await addUser(ctx, 'vera', 'viewer', PASSWORD, 'test');
    const app = await buildConsoleApp({ ctx });
    try {
      const client = new ConsoleClient(app);
      expect((await client.signIn('vera', PASSWORD)).statusCode).toBe(303);
      const pages: string[] = [];
      for (const url of urls) {
        const page = await client.get(url);
        expect(page.statusCode, `${url}: ${page.body}`).toBe(200);
        pages.push(page.body);
      }
      return pages;
    } finally {
      await app.close();
    }
  }, extra);
}

/** The overview's cell of an account on a date: its text. */
function overviewCell(page: string, account: string, date: string): string | undefined {
  return new RegExp(`title="${account}, ${date}: ([^"]*)"`).exec(page)?.[1];
}

/** Lines of a command's output or page that speak of the bank account and use a gateway word of it. */
function gatewayWordsOfBank(text: string): string[] {
  const plain = text.replace(/<[^>]+>/g, ' ');
  return plain.split('\n').filter((line) => line.includes('hausbank') && !line.includes('shop') && /captur|snapshot|gateway/i.test(line));
}

describe(`a bank account beside a gateway account (${backend})`, { timeout: 180_000 }, () => {
  it('the overview shows the bank date awaiting its statement as "awaiting statement" and the accepted gateway break as "accepted", neither as a break', async () => {
    const [overview] = await consolePages(['/overview']);
    expect(overviewCell(overview!, 'hausbank', D2)).toBe('awaiting statement');
    expect(overviewCell(overview!, 'shop', D1)).toBe('accepted');
    expect(overviewCell(overview!, 'hausbank', D1)).toBe('1 break');
    expect(overview).not.toMatch(/shop, 2026-12-0[12]: \d+ break/);
  });

  it('reconcile without --date reconciles the latest closed date of both accounts, the bank one awaiting its statement, with a source column', async () => {
    const reconciled = await cli(['reconcile']);
    expect(reconciled.code, reconciled.stdout + reconciled.stderr).toBe(0);
    expect(reconciled.stdout).not.toContain('captured');
    expect(reconciled.stdout).toContain(`Reconciliation ${D2}`);
    expect(reconciled.stdout).toMatch(/^account\s+source\s+matched/m);
    expect(reconciled.stdout).toMatch(/^hausbank\s+bank\s+0\s+0\s+0\s+0\s+0\s+0\s+0\s+0\s+0\s+0\s+0\s+0\s+1$/m);
    expect(reconciled.stdout).toMatch(/^shop\s+gateway\s+1\s/m);
    expect(reconciled.stdout).toContain(`bank statement not imported yet: hausbank ${D2}`);
    const stored = await withDatabase(t, (db) => db.selectFrom('reconciliation_results').select(['status', 'source']).where('account', '=', 'hausbank').where('business_date', '=', D2).execute());
    expect(stored).toEqual([{ status: 'awaiting_statement', source: 'bank' }]);
  });

  it('the sealed report tells the story: the acknowledged break with its whole note and author, the acceptance with reason and end, the reopening; signoff show and the HTML report agree', async () => {
    const sealed = await withContext(async (ctx) => {
      await addUser(ctx, 'anna', 'preparer', 'anna-preparer-pw-44', 'test');
      const ben = await addUser(ctx, 'ben', 'approver', 'ben-approver-pw-44', 'test');
      await prepareSignoff(ctx, { name: 'anna', role: 'preparer' }, D1, null);
      await approveSignoff(ctx, { id: ben.id, name: 'ben', role: 'approver' }, D1, null);
      await reopenSignoff(ctx, { name: 'ben', role: 'approver' }, D1, 'the bank fee must be booked on the 1st', null);
      const second = await prepareSignoff(ctx, { name: 'anna', role: 'preparer' }, D1, null);
      await approveSignoff(ctx, { id: ben.id, name: 'ben', role: 'approver' }, D1, null);
      return (await readSignoffReport(ctx.database.db, second.id))!.html;
    });
    const text = sealed.replace(/<[^>]+>/g, '').replaceAll('&#39;', "'");
    expect(text).toContain(`#${bankCase} hausbank EUR break: acknowledged`);
    expect(text).toContain(`latest note by anna, 2026-12-03 07:00 CET (acknowledged): ${ACK_NOTE}`);
    expect(text).toContain(`#${shopCase} shop EUR break: accepted`);
    expect(text).toContain('accepted until 2026-12-31 by anna, 2026-12-03 07:00 CET, reason: rounding at the gateway, fixed in January');
    expect(text).toContain('Sign-off #1: prepared by anna, 2026-12-03 07:00 CET; approved by ben, 2026-12-03 07:00 CET; reopened by ben, 2026-12-03 07:00 CET, why: the bank fee must be booked on the 1st');
    expect(text).toContain('1 result needs attention, 1 accepted');

    const shown = await cli(['signoff', 'show', '--date', D1]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^#1 .*reopened by ben, 2026-12-03 07:00:00 CET: the bank fee must be booked on the 1st$/m);
    const [day] = await consolePages([`/day?date=${D1}`]);
    expect(day).toMatch(/<tr><td>#1<\/td>.*<td>reopened by ben, 2026-12-03 07:00 CET: the bank fee must be booked on the 1st<\/td><\/tr>/);

    const out = path.join(dir, 'approved.html');
    expect((await cli(['report', '--date', D1, '--format', 'html', '--out', out])).code).toBe(0);
    const report = readFileSync(out, 'utf8');
    expect(report).toMatch(/<th>Prepared by<\/th><td>anna<\/td><th>Date<\/th><td>2026-12-03 07:00 CET/);
    expect(report).toMatch(/<th>Approved by<\/th><td>ben<\/td><th>Date<\/th><td>2026-12-03 07:00 CET/);
    expect(report).toContain('bank statement STMT-2026-12-01-1 (camt.053, hausbank.xml), proof ok');
    expect(report).not.toMatch(/\d{2}:\d{2} Europe\/Berlin \(/);
    expect(report).toMatch(/thead th \{[^}]*word-break: normal; overflow-wrap: normal; hyphens: none/);
    // The summary shows the statuses that occur: matched and breaks, not a zero for each of fifteen.
    expect(/<table id="summary">\s*<thead>(.*?)<\/thead>/s.exec(report)?.[1]).toBe('<tr><th>account</th><th>source</th><th class="amount">matched</th><th class="amount">breaks</th></tr>');
  });

  it('no command or page says captured, snapshot or gateway of the bank account: cases, backfill, sign-off refusal, metrics', async () => {
    const shown = await cli(['cases', 'show', String(bankCase)]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^business date\s+status\s+difference\s+bank\s+books\s+run$/m);
    expect(shown.stdout).not.toMatch(/gateway|captur|snapshot/);
    expect(shown.stdout).toContain('age 2 days, 1 occurrence,');

    const backfill = await cli(['backfill', '--from', D1, '--to', D2, '--dry-run']);
    expect(backfill.stdout).toContain('hausbank: a bank account: its balances come from its bank statements');
    expect(backfill.stdout).not.toMatch(/hausbank: GAP/);
    expect(backfill.code, backfill.stdout).toBe(0);

    const refused = await withContext((ctx) => prepareSignoff(ctx, { name: 'anna', role: 'preparer' }, D2, null).then(() => '', (error: Error) => error.message));
    expect(refused).toContain('hausbank is awaiting_statement (its bank statement has not been imported');
    expect(refused).not.toMatch(/hausbank is (capture_window|not_captured)/);

    const exported = await withContext(async (ctx) => {
      const metrics = new Metrics({ perAccount: true, accounts: ['shop'], bankAccounts: ['hausbank'], processDefaults: false, db: ctx.database.db });
      return metrics.registry.metrics();
    });
    expect(exported).toContain(`wallet_recon_last_statement_business_date_seconds{account="hausbank"} ${Date.parse(`${D1}T00:00:00Z`) / 1000}`);
    expect(exported).toMatch(/wallet_recon_reconciliation_results\{status="awaiting_statement",account="hausbank"\} 1/);
    expect(exported).not.toMatch(/last_success_timestamp_seconds\{account="hausbank"/);

    // One at a time: the embedded database serves one command at a time.
    const outputs = [];
    for (const args of [['reconcile'], ['report', '--date', D1], ['report', '--date', D2], ['cases'], ['cases', 'show', String(bankCase)], ['statements', 'list'], ['signoff', 'show', '--date', D1], ['calendar', 'show'], ['runs']]) outputs.push(await cli(args));
    const pages = await consolePages(['/overview', `/day?date=${D1}`, `/day?date=${D2}`, `/cases/${bankCase}`, '/cases']);
    const html = path.join(dir, 'walk.html');
    expect((await cli(['report', '--date', D1, '--format', 'html', '--out', html])).code).toBe(0);
    for (const text of [...outputs.map((o) => o.stdout + o.stderr), ...pages, readFileSync(html, 'utf8')]) expect(gatewayWordsOfBank(text)).toEqual([]);

    // The range's chart draws the bank's stated balance beside the shop's captured one.
    const range = await cli(['report', '--from', D1, '--to', D2, '--format', 'html']);
    expect(range.code, range.stderr).toBe(0);
    expect(range.stdout).toMatch(new RegExp(`<title>hausbank bank ${D1}: `));
    expect(range.stdout).toMatch(new RegExp(`<title>shop gateway ${D1}: `));
  });

  it('with RECON_LOCALE=de-DE the tables of reconcile and cases and the HTML report write 12.499.999,00; en-US 12,499,999.00', async () => {
    for (const [locale, books, difference] of [['de-DE', '12.499.999,00', '1,00'], ['en-US', '12,499,999.00', '1.00']] as const) {
      const reconciled = await cli(['reconcile'], NOW, { RECON_LOCALE: locale });
      expect(reconciled.stdout).toMatch(new RegExp(`^${D2}\\s+hausbank\\s+bank\\s+EUR\\s+awaiting_statement\\s+${books.replace(/\./g, '\\.')}$`, 'm'));
      const cases = await cli(['cases'], NOW, { RECON_LOCALE: locale });
      expect(cases.stdout).toMatch(new RegExp(`hausbank\\s+EUR\\s+break\\s+acknowledged\\s+2\\s+1\\s+${difference.replace('.', '\\.')}`));
      const html = path.join(dir, `${locale}.html`);
      expect((await cli(['report', '--date', D2, '--format', 'html', '--out', html], NOW, { RECON_LOCALE: locale })).code).toBe(0);
      expect(readFileSync(html, 'utf8')).toContain(`<td class="amount">${books}</td>`);
    }
  });
});
