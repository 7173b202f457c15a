import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { runReconcileJob } from '../../jobs/reconcile-job.js';
import { runSnapshotJob } from '../../jobs/snapshot-job.js';
import { userDataRoot } from '../config/index.js';
import { listSnapshotRows } from '../db/balance-snapshot.repository.js';
import { findForeignContents } from '../db/database-contents.repository.js';
import { migrateToLatest } from '../db/migrate.js';
import { formatMoney } from '../money/format-amount.js';
import { importBooksFile } from '../books/index.js';
import { importStatementFiles, listStatementListings, writeCamt053 } from '../statements/index.js';
import type { AppContext } from '../app-context.js';
import { todayOf } from '../reconciliation/business-dates.js';
import { renderHtml } from '../reports/render-html.js';
import { renderTable } from '../reports/render-table.js';
import { loadCurrencyHistories, loadReport } from '../reports/report-data.js';
import { loadReportFacts } from '../reports/report-facts.js';
import { writeFileAtomically } from '../reports/write-file-atomically.js';
import { MAX_WALLETS, startSandbox } from '../sandbox/index.js';
import { UsageError } from '../errors.js';
import type { CliRuntime } from './runtime.js';
import { formatCapturedBalances, formatSnapshotSummary } from './snapshot-output.js';
import { summaryOf } from './command-summaries.js';

export { groupDigits } from '../money/format-amount.js';

/** The account every demo row belongs to: recognisable, and the only one a demo database may hold. */
export const DEMO_ACCOUNT = 'demo';
/** The demo's bank account: the gateway pays out into it, and its camt.053 statement is reconciled too. */
export const DEMO_BANK_ACCOUNT = 'demo-bank';
const DEMO_IBAN = 'DE89370400440532013000';

/** The deliberate break of the demo's books: 123.45 in EUR (12,345 minor units), else in the first currency. */
const DEMO_BREAK = 12_345n;

/** A path as a POSIX shell reads it back: bare when it is plain, else in single quotes. */
function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

/** `wallet-recon demo`: the whole job against a local emulator, nothing to install or configure. */
export function registerDemoCommand(program: Command, runtime: CliRuntime): void {
  program
    .command('demo')
    .description(summaryOf('demo'))
    .option('--wallets <n>', 'how many wallets the emulator holds', '12')
    .option('--out <file>', 'where to write the HTML report (default: demo-report.html in the user data directory)')
    .addHelpText(
      'after',
      '\nWithout DATABASE_URL the demo uses its own embedded database (the "demo" folder in the user data directory,\n' +
        '~/.local/share/wallet-recon), never your real one. With DATABASE_URL it refuses a database that holds anything\n' +
        'but earlier demo data. Every row it writes belongs to the account "demo".\n\nExample:\n  npx wallet-recon demo',
    )
    .action(async (opts: { wallets: string; out?: string }) => {
      // The demo prints what matters itself; run-by-run log lines would drown it.
      if (!process.stderr.isTTY) runtime.defaultLogLevel = 'error';
      const wallets = Number(opts.wallets);
      if (!Number.isInteger(wallets) || wallets < 1 || wallets > MAX_WALLETS) {
        throw new UsageError(`--wallets must be a whole number from 1 to ${MAX_WALLETS} (got "${opts.wallets}").`);
      }
      const userConfig = runtime.config();
      const reportFile = path.resolve(opts.out ?? path.join(userDataRoot(), 'demo-report.html'));
      // A fresh random secret: the emulator is only reachable on loopback for this one run.
      const apiSecret = randomBytes(16).toString('hex');
      const sandbox = await startSandbox({ host: '127.0.0.1', port: 0, apiKey: 'demo-key', apiSecret, wallets, balances: 'merchant' });
      const scratch = mkdtempSync(path.join(tmpdir(), 'wallet-recon-demo-'));
      try {
        runtime.output.out(`Gateway emulator listening on ${sandbox.url} with ${sandbox.wallets.length} wallets.`);
        const accountsFile = path.join(scratch, 'accounts.json');
        writeFileSync(accountsFile, JSON.stringify({ accounts: [{ name: DEMO_ACCOUNT, environment: 'sandbox', apiKeyEnv: 'DEMO_API_KEY', apiSecretEnv: 'DEMO_API_SECRET', baseUrl: sandbox.url }], bankAccounts: [{ name: DEMO_BANK_ACCOUNT, iban: DEMO_IBAN, currency: 'EUR' }] }), { mode: 0o600 });
        // The demo's business day ends a minute before it starts (UTC), so its capture is that day's
        // end-of-day balance and the day can be reconciled at once: no date is before its cut-off.
        const dayEnded = new Date(runtime.clock.now().getTime() - 60_000);
        const cutoff = `${String(dayEnded.getUTCHours()).padStart(2, '0')}:${String(dayEnded.getUTCMinutes()).padStart(2, '0')}`;
        const overrides: Record<string, string> = {
          GATEWAY_ENV: 'sandbox',
          RECON_ACCOUNTS_FILE: accountsFile,
          DEMO_API_KEY: 'demo-key',
          DEMO_API_SECRET: apiSecret,
          RECON_TIMEZONE: 'UTC',
          RECON_CUTOFF: cutoff,
        };
        // Its own embedded database unless one is named: the demo never fills the real one.
        if (userConfig.databaseUrl === undefined && userConfig.dataDirSource !== 'RECON_DATA_DIR') overrides.RECON_DATA_DIR = path.join(userDataRoot(), 'demo');
        await runtime.withContext('wallet-recon demo', { migrate: 'never', configOverrides: overrides, exclusive: true }, async (ctx) => {
          const foreign = await findForeignContents(ctx.database.db, [DEMO_ACCOUNT, DEMO_BANK_ACCOUNT]);
          if (foreign.otherTables.length > 0 || foreign.otherAccounts.length > 0) {
            const what = foreign.otherTables.length > 0 ? `tables of another application (${foreign.otherTables.join(', ')})` : `data of other accounts (${foreign.otherAccounts.join(', ')})`;
            throw new UsageError(
              `The ${ctx.database.description} already holds ${what}: the demo writes only into an empty database or one an earlier demo filled. ` +
                'Unset DATABASE_URL and RECON_DATA_DIR to let the demo use its own embedded database.',
            );
          }
          const migrated = await migrateToLatest(ctx.database.db);
          // Which database is said on stderr with every command; here what the demo did to it.
          const n = migrated.applied.length;
          const views = migrated.views.length;
          runtime.output.out(
            n > 0
              ? `Prepared the demo's database (${ctx.database.description}): ${n} migration${n === 1 ? '' : 's'} applied.`
              : views > 0
                ? `Prepared the demo's database (${ctx.database.description}): ${views} view${views === 1 ? '' : 's'} made from ${views === 1 ? 'its definition' : 'their definitions'}.`
                : `The demo's database (${ctx.database.description}) is up to date.`,
          );

          const snapshot = await runSnapshotJob(ctx, { trigger: 'manual', signal: runtime.signal });
          runtime.output.out(`\n1. Snapshot\n${formatSnapshotSummary(snapshot.accounts)}`);
          const run = snapshot.accounts[0];
          const balances = run === undefined ? undefined : await formatCapturedBalances(ctx, run);
          if (run?.runId === undefined || run.businessDate === undefined || balances === undefined) return snapshot.exitCode;
          runtime.output.out(`\n${balances}`);

          // The books a merchant would keep, with one deliberate break in the first currency.
          const rows = await listSnapshotRows(ctx.database.db, run.runId);
          const planted = rows.find((r) => r.currency === 'EUR') ?? rows[0];
          const books = rows.map((r) => `${run.businessDate},${r.currency},${r === planted ? r.balance - DEMO_BREAK : r.balance}`);
          const booksFile = path.join(scratch, 'demo-books.csv');
          writeFileSync(booksFile, `business_date,currency,balance\n${books.join('\n')}\n`, { mode: 0o600 });
          // The emulator's integers are minor units; the demo's books repeat them as they are.
          const imported = await importBooksFile(ctx, booksFile, { account: DEMO_ACCOUNT, amounts: 'minor' });
          runtime.output.out(
            `\n2. Books\nImported ${imported.rows} expected balances for ${run.businessDate}` +
              (planted === undefined ? '.' : `, with one deliberate break: the books hold ${formatMoney(planted.balance - DEMO_BREAK, planted.currency)}, the gateway ${formatMoney(planted.balance, planted.currency)}.`),
          );

          runtime.output.out(`\n3. Bank statement\n${await importDemoStatement(ctx, scratch, run.businessDate)}`);

          await runReconcileJob(ctx, { date: run.businessDate, accounts: [DEMO_ACCOUNT, DEMO_BANK_ACCOUNT] });
          const range = { from: run.businessDate, to: run.businessDate };
          const report = await loadReport(ctx.database.db, range, { accounts: [DEMO_ACCOUNT, DEMO_BANK_ACCOUNT], today: todayOf(ctx).date, bankAccounts: [DEMO_BANK_ACCOUNT] });
          runtime.output.out(`\n4. Reconciliation\n${renderTable(report)}`);

          const now = ctx.clock.now();
          const html = renderHtml(report, await loadCurrencyHistories(ctx.database.db, range), now, await loadReportFacts(ctx.database.db, report.results, ctx.config, now));
          mkdirSync(path.dirname(reportFile), { recursive: true, mode: 0o700 });
          await writeFileAtomically(reportFile, html);
          const dataDir = ctx.config.databaseUrl === undefined ? ctx.config.dataDir : undefined;
          const consoleCommand = dataDir === undefined ? 'wallet-recon console' : `RECON_DATA_DIR=${shellQuote(dataDir)} wallet-recon console`;
          runtime.output.out(
            `\n5. Report\nThe HTML report is in ${reportFile}\n\n6. Console\nTo review the break in the browser, add a user and open the console on the demo's database${dataDir === undefined ? ' (with the same DATABASE_URL)' : ''}:\n` +
              `  ${dataDir === undefined ? '' : `RECON_DATA_DIR=${shellQuote(dataDir)} `}wallet-recon users add me --role admin\n  ${consoleCommand}\n` +
              `It opens on ${run.businessDate}, the demo's business date, with its break.\n\nNext: "wallet-recon --help" lists every command; README.md says how to point wallet-recon at your gateway.`,
          );
          return snapshot.exitCode;
        });
      } finally {
        rmSync(scratch, { recursive: true, force: true });
        await sandbox.close();
      }
    });
}

/**
 * The demo bank account's day: a camt.053 statement closing on the date (continuing the previous
 * demo statement, so its proofs hold on every run) and books that agree with it, both imported.
 */
async function importDemoStatement(ctx: AppContext, scratch: string, businessDate: string): Promise<string> {
  const earlier = (await listStatementListings(ctx, { accounts: [DEMO_BANK_ACCOUNT] })).filter((s) => s.business_date < businessDate && s.closing !== null).at(-1);
  const opening = earlier === undefined ? 5_000_000n : BigInt(earlier.closing!.replace('.', ''));
  const sequence = earlier === undefined || earlier.sequence === null ? 1 : Number(earlier.sequence) + 1;
  const day = { sequence, date: businessDate, entries: [1_250_000n, -3_500n] };
  const statementFile = path.join(scratch, `demo-bank-${businessDate}.xml`);
  writeFileSync(statementFile, writeCamt053({ iban: DEMO_IBAN, currency: 'EUR', opening, days: [day], camtVersion: 8 }), { mode: 0o600 });
  const imported = await importStatementFiles(ctx, [statementFile]);
  const closing = opening + 1_250_000n - 3_500n;
  const booksFile = path.join(scratch, 'demo-bank-books.csv');
  writeFileSync(booksFile, `business_date,currency,balance\n${businessDate},EUR,${closing}\n`, { mode: 0o600 });
  await importBooksFile(ctx, booksFile, { account: DEMO_BANK_ACCOUNT, amounts: 'minor' });
  const proof = imported.proofs.find((p) => p.businessDate === businessDate)?.proof ?? 'ok';
  return (
    `Wrote a camt.053 statement of bank account "${DEMO_BANK_ACCOUNT}" (IBAN ${DEMO_IBAN}) closing on ${businessDate} at ${formatMoney(closing, 'EUR')}, ` +
    `imported it (${imported.outcomes[0]?.outcome ?? 'unchanged'}, proof ${proof}) with books that agree with it.`
  );
}
