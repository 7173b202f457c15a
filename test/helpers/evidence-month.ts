import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runReconcileJob } from '../../jobs/reconcile-job.js';
import type { AppContext } from '../../src/app-context.js';
import { importBooksFile } from '../../src/books/index.js';
import { applyCaseAction } from '../../src/cases/case-actions.js';
import type { FixedClock } from '../../src/clock.js';
import { insertSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import { insertRunningRun, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { importStatementFiles, writeCamt053 } from '../../src/statements/index.js';
import { approveSignoff, prepareSignoff } from '../../src/signoff/signoff-service.js';

/** The month these helpers sign: three dates, and "now" for them (after all three closed). */
export const MONTH = '2026-10';
export const DATES = ['2026-10-05', '2026-10-06', '2026-10-07'] as const;
export const AFTER = '2026-10-12T06:00:00Z';
export const IBAN = 'DE89370400440532013000';
export const STATEMENT_FILE = 'eu-bank-2026-10.xml';

/** EUR on the gateway per date; from the second date on the books are 123.45 EUR short: a case, accepted. */
const GATEWAY_EUR = [1_000_000n, 1_250_000n, 1_100_000n];
const major = (minor: bigint) => `${minor / 100n}.${String(minor % 100n).padStart(2, '0')}`;

/** Environment of a gateway account "default" and a bank account "eu-bank", in UTC, cut-off at midnight. */
export function monthEnvironment(dir: string, extra: Record<string, string> = {}): Record<string, string> {
  const accounts = path.join(dir, 'accounts.yaml');
  writeFileSync(accounts, ['accounts:', '  - { name: default, apiKeyEnv: GATEWAY_API_KEY, apiSecretEnv: GATEWAY_API_SECRET, environment: sandbox }', 'bankAccounts:', `  - { name: eu-bank, iban: ${IBAN}, currency: EUR }`, ''].join('\n'));
  return { GATEWAY_API_KEY: 'k', GATEWAY_API_SECRET: 's', LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC', RECON_CUTOFF: '00:00', RECON_BOOKS_DEADLINE: '3d', RECON_ACCOUNTS_FILE: accounts, ...extra };
}

/** Writes an Ed25519 private key (PEM) for RECON_SIGNING_KEY_FILE. */
export function writeSigningKey(dir: string, name = 'signing-key.pem'): string {
  const file = path.join(dir, name);
  // Private to its owner: the configuration refuses a signing key others can read.
  writeFileSync(file, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

/**
 * Three dates of October, each captured (end of day), with its books and the bank's statement,
 * reconciled; the second date's EUR break is accepted with a note; then, unless `approve` is
 * false for a date, prepared by anna and approved by ben, a minute apart on `clock`.
 */
export async function produceSignedMonth(ctx: AppContext, clock: FixedClock, dir: string, approve: readonly boolean[] = [true, true, true]): Promise<void> {
  const db = ctx.database.db;
  for (const [i, date] of DATES.entries()) {
    const cutoffAt = new Date(new Date(`${date}T00:00:00Z`).getTime() + 86_400_000);
    const at = new Date(cutoffAt.getTime() - 300_000);
    const runId = await insertRunningRun(db, { account: 'default', environment: 'sandbox', trigger: 'schedule', businessDate: date, startedAt: at, timing: { cutoffAt, driftSeconds: -300, endOfDay: true } });
    await insertSnapshotRows(db, runId, 'default', at, [
      { currency: 'EUR', balance: GATEWAY_EUR[i]!, singleBalance: GATEWAY_EUR[i]! },
      { currency: 'USD', balance: 500_000n + BigInt(i), singleBalance: 500_000n + BigInt(i) },
    ]);
    await markRunSucceeded(db, runId, at, { walletsReported: 2, walletsFetched: 2, pagesFetched: 1, requests: 3 });
  }
  const statement = path.join(dir, STATEMENT_FILE);
  writeFileSync(statement, writeCamt053({ iban: IBAN, currency: 'EUR', opening: 2_000_000n, days: DATES.map((date, i) => ({ sequence: 20 + i, date, entries: [10_000n * BigInt(i + 1), -250n] })) }));
  await importStatementFiles(ctx, [statement]);
  let bank = 2_000_000n;
  const books = ['account,business_date,currency,balance'];
  for (const [i, date] of DATES.entries()) {
    bank += 10_000n * BigInt(i + 1) - 250n;
    books.push(`default,${date},EUR,${major(GATEWAY_EUR[i]! - (i >= 1 ? 12_345n : 0n))}`, `default,${date},USD,${major(500_000n + BigInt(i))}`, `eu-bank,${date},EUR,${major(bank)}`);
  }
  const booksFile = path.join(dir, 'books-2026-10.csv');
  writeFileSync(booksFile, `${books.join('\n')}\n`);
  await importBooksFile(ctx, booksFile);
  for (const date of DATES) await runReconcileJob(ctx, { date });
  const open = await db.selectFrom('reconciliation_cases').select('id').where('state', '=', 'open').execute();
  for (const c of open) await applyCaseAction(ctx, { caseId: c.id, action: 'accept', actor: 'anna', note: 'fee booked on the next day' });
  for (const [i, date] of DATES.entries()) {
    if (approve[i] === false) continue;
    await prepareSignoff(ctx, { name: 'anna', role: 'preparer' }, date, null);
    clock.advance(60_000);
    await approveSignoff(ctx, { id: 2, name: 'ben', role: 'approver' }, date, null);
    clock.advance(60_000);
  }
}
