/**
 * npm run bench:evidence — the evidence pack of a month at 200 accounts × 50 currencies: a month
 * of reconciled history (bench/history.ts) on the PostgreSQL server, each date signed off
 * (prepared and approved rows written as the sign-off service writes them, with a small sealed
 * report), then `wallet-recon signoff export --month` run by the built CLI as a fresh process
 * under /usr/bin/time: wall seconds, peak RSS and the pack's size, then verify-pack likewise.
 * Not a timed test: it prints the figures.
 *
 * BENCH_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres) names the server;
 * BENCH_EVIDENCE_SIZE (default 200x50x30) accounts × currencies × days.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { sql } from 'kysely';
import { businessCalendarOf } from '../src/config/business-settings.js';
import { loadConfig } from '../src/config/index.js';
import { addDays } from '../src/business-date/zoned-time.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { openDatabase } from '../src/db/open-database.js';
import { accountNames, generateHistory, type HistoryShape } from './history.js';

const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const [ACCOUNTS, CURRENCIES, DAYS] = (process.env.BENCH_EVIDENCE_SIZE ?? '200x50x30').split('x').map(Number) as [number, number, number];
const BIN = path.join(import.meta.dirname, '..', 'bin', 'wallet-recon.js');
const LAST = '2026-09-30';
const NOW = new Date('2026-10-20T06:00:00Z');
const NAME = `wr_evidence_${ACCOUNTS}x${CURRENCIES}x${DAYS}`;

async function timed(args: string[], env: Record<string, string>): Promise<{ seconds: number; rssMiB: number; code: number | null; stdout: string; stderr: string }> {
  const started = performance.now();
  const child = spawn('/usr/bin/time', ['-f', '%M', process.execPath, BIN, ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  const lines = stderr.trim().split('\n');
  return { seconds: (performance.now() - started) / 1000, rssMiB: Number(lines.at(-1)) / 1024, code, stdout, stderr: lines.slice(0, -1).join('\n') };
}

const dir = mkdtempSync(path.join(tmpdir(), 'wr-evidence-bench-'));
const shape: HistoryShape = { accounts: ACCOUNTS, currencies: CURRENCIES, days: DAYS, lastDate: LAST };
const accountsFile = path.join(dir, 'accounts.json');
writeFileSync(accountsFile, JSON.stringify({ accounts: accountNames(shape).map((name) => ({ name, environment: 'sandbox', apiKeyEnv: 'BENCH_KEY', apiSecretEnv: 'BENCH_SECRET' })) }));
const url = new URL(ADMIN_URL);
url.pathname = `/${NAME}`;
const env = { DATABASE_URL: url.toString(), RECON_ACCOUNTS_FILE: accountsFile, BENCH_KEY: 'k', BENCH_SECRET: 's', LOG_LEVEL: 'error', RECON_TIMEZONE: 'UTC' };
const config = loadConfig({ env, ignoreDotEnv: true });

const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`drop database if exists "${NAME}" with (force)`);
await admin.query(`create database "${NAME}"`);
await admin.end();
const generated = performance.now();
const database = await openDatabase({ databaseUrl: url.toString(), dataDir: '', command: 'bench', timeouts: { connectMs: 10_000, statementMs: 600_000, idleInTransactionMs: 600_000 } });
await migrateToLatest(database.db);
const calendar = businessCalendarOf(config);
await generateHistory(database.db, shape, (d) => calendar.cutoffOf(d), NOW);
// Each date signed off: prepared, then approved, in chain order (the database's triggers seal them).
const accounts = accountNames(shape);
for (let i = 0; i < DAYS; i++) {
  const date = addDays(LAST, -(DAYS - 1) + i);
  const html = `<!doctype html><title>${date}</title><p>Sealed report of ${date} (bench).</p>\n`;
  const row = await database.db
    .insertInto('signoffs')
    .values({ account_set: accounts, business_date: date, prepared_by: 'anna', prepared_at: NOW, report_sha256: createHash('sha256').update(html).digest('hex'), report_html: html, inputs: JSON.stringify({ accountSet: accounts, accounts: [] }) })
    .returning('id')
    .executeTakeFirstOrThrow();
  await database.db.updateTable('signoffs').set({ approved_by: 'ben', approved_at: NOW }).where('id', '=', row.id).execute();
}
const rows = await sql<{ n: string }>`select count(*)::text as n from reconciliation_results where business_date > ${addDays(LAST, -DAYS)}::date`.execute(database.db);
await database.close();
console.log(`generated ${ACCOUNTS} accounts × ${CURRENCIES} currencies × ${DAYS} days (${rows.rows[0]!.n} results) in ${((performance.now() - generated) / 1000).toFixed(1)} s`);

const out = path.join(dir, 'pack.zip');
const month = LAST.slice(0, 7);
const exported = await timed(['signoff', 'export', '--month', month, '--out', out], env);
if (exported.code !== 0) throw new Error(`signoff export exited ${exported.code}: ${exported.stderr}`);
console.log(`signoff export --month ${month}: ${exported.seconds.toFixed(1)} s, peak RSS ${exported.rssMiB.toFixed(0)} MiB, pack ${(statSync(out).size / 1024 / 1024).toFixed(1)} MiB`);
const verified = await timed(['verify-pack', out], {});
console.log(`verify-pack: exit ${verified.code}, ${verified.seconds.toFixed(1)} s, peak RSS ${verified.rssMiB.toFixed(0)} MiB${verified.code === 0 ? '' : `: ${verified.stderr}`}`);
rmSync(dir, { recursive: true, force: true });
