/**
 * npm run bench:backfill — `wallet-recon backfill --import` of the gateway's statements for 10
 * accounts × 20 currencies over 1 year and over 3 years (one CSV with an account column, one row
 * per account, date and currency), through the built CLI as a fresh process, timed, with its
 * peak RSS as the kernel counts it (/usr/bin/time). Each size runs on a new database on the
 * PostgreSQL server of BENCH_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres) and
 * on a new embedded database (BENCH_BACKFILL_DATABASES=server,embedded). Prints a table with the
 * 3-year/1-year ratio and exits 1 when memory is not bounded: 3 years within 1.2× the peak RSS of
 * 1 year, and under 300 MiB. Sizes in days: BENCH_BACKFILL_DAYS (default 365,1095).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createBenchDatabase } from './fleet.js';

const TARGETS = { rssRatio: 1.2, peakRssMiB: 300 };
const ACCOUNTS = 10;
// ISO 4217 codes with two decimals: the statement's integers are minor units.
const CURRENCIES = ['AUD', 'BGN', 'BRL', 'CAD', 'CHF', 'CNY', 'CZK', 'DKK', 'EUR', 'GBP', 'HKD', 'ILS', 'INR', 'MXN', 'MYR', 'NOK', 'NZD', 'PLN', 'SEK', 'USD'];
const DAYS = (process.env.BENCH_BACKFILL_DAYS ?? '365,1095').split(',').map(Number);
const DATABASES = (process.env.BENCH_BACKFILL_DATABASES ?? 'server,embedded').split(',') as Array<'server' | 'embedded'>;
const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const bin = path.join(import.meta.dirname, '..', 'bin', 'wallet-recon.js');
// The range ends well before today: every date is closed, so each is imported, none captured live.
const LAST_DAY = Date.UTC(2026, 9, 31);
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Writes the statements of `days` days up to LAST_DAY: account, business_date, currency, balance (minor units). */
async function writeStatements(file: string, days: number): Promise<{ from: string; to: string; rows: number }> {
  const out = createWriteStream(file);
  const write = (text: string) => (out.write(text) ? Promise.resolve() : once(out, 'drain').then(() => undefined));
  await write('account,business_date,currency,balance\n');
  let chunk = '';
  let rows = 0;
  for (let d = days - 1; d >= 0; d--) {
    const date = isoDay(LAST_DAY - d * 86_400_000);
    for (let a = 0; a < ACCOUNTS; a++) {
      for (let c = 0; c < CURRENCIES.length; c++) {
        chunk += `acct-${a},${date},${CURRENCIES[c]},${123_456_789 + rows * 7919}\n`;
        rows++;
      }
    }
    if (chunk.length > 1 << 16) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(chunk);
  out.end();
  await once(out, 'close');
  return { from: isoDay(LAST_DAY - (days - 1) * 86_400_000), to: isoDay(LAST_DAY), rows };
}

/** Runs the built CLI under /usr/bin/time: its wall time and the kernel's peak RSS of the process. */
async function runCli(args: string[], env: Record<string, string>): Promise<{ seconds: number; peakRssMiB: number; code: number | null }> {
  const started = process.hrtime.bigint();
  const child = spawn('/usr/bin/time', ['-f', 'PEAK_RSS_KB %M', process.execPath, bin, ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const kb = Number(/PEAK_RSS_KB (\d+)/.exec(stderr)?.[1]);
  // 3: the dates reconcile with results that did not match (no books were imported): expected here.
  if (code !== 0 && code !== 3) throw new Error(`wallet-recon ${args.join(' ')} exited ${code}: ${stderr}`);
  return { seconds, peakRssMiB: kb / 1024, code };
}

interface Row {
  database: 'server' | 'embedded';
  days: number;
  rows: number;
  seconds: number;
  peakRssMiB: number;
}

const dir = mkdtempSync(path.join(tmpdir(), 'wr-bench-backfill-'));
const accountsFile = path.join(dir, 'accounts.json');
writeFileSync(accountsFile, JSON.stringify({ accounts: Array.from({ length: ACCOUNTS }, (_, a) => ({ name: `acct-${a}`, environment: 'sandbox', apiKeyEnv: 'BENCH_KEY', apiSecretEnv: 'BENCH_SECRET' })) }));
// No gateway is asked: every date is past its capture window.
const baseEnv = { RECON_ACCOUNTS_FILE: accountsFile, BENCH_KEY: 'k', BENCH_SECRET: 's', GATEWAY_SANDBOX_URL: 'http://127.0.0.1:9', RECON_TIMEZONE: 'UTC', LOG_LEVEL: 'silent' };
const results: Row[] = [];
try {
  for (const days of DAYS) {
    const file = path.join(dir, `statements-${days}.csv`);
    const { from, to, rows } = await writeStatements(file, days);
    for (const database of DATABASES) {
      const args = ['backfill', '--from', from, '--to', to, '--import', file];
      let run: Awaited<ReturnType<typeof runCli>>;
      if (database === 'server') {
        const db = await createBenchDatabase(ADMIN_URL, `wr_bench_backfill_${process.pid}_${days}`);
        try {
          const env = { ...baseEnv, DATABASE_URL: db.url };
          await runCli(['migrate'], env);
          run = await runCli(args, env);
        } finally {
          await db.drop();
        }
      } else {
        const dataDir = path.join(dir, `data-${days}`);
        try {
          // Migrated first, as on the server: the backfill alone is measured.
          await runCli(['migrate'], { ...baseEnv, RECON_DATA_DIR: dataDir });
          run = await runCli(args, { ...baseEnv, RECON_DATA_DIR: dataDir });
        } finally {
          rmSync(dataDir, { recursive: true, force: true });
        }
      }
      process.stderr.write(`${database} ${days} days (${rows.toLocaleString('en-US')} rows): ${run.seconds.toFixed(1)} s, ${run.peakRssMiB.toFixed(0)} MiB\n`);
      results.push({ database, days, rows, seconds: run.seconds, peakRssMiB: run.peakRssMiB });
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const fmt = (n: number, digits = 1) => n.toFixed(digits);
console.log('| database | days | statement rows | wall time | peak RSS |');
console.log('|---|---|---|---|---|');
for (const r of results) console.log(`| ${r.database} | ${r.days} | ${r.rows.toLocaleString('en-US')} | ${fmt(r.seconds)} s | ${fmt(r.peakRssMiB, 0)} MiB |`);
console.log('');
let ok = true;
for (const database of DATABASES) {
  const mine = results.filter((r) => r.database === database);
  if (mine.length === 0) continue;
  const smallest = mine[0]!;
  const largest = mine[mine.length - 1]!;
  const peak = Math.max(...mine.map((r) => r.peakRssMiB));
  const checks = [
    { what: `${database}: peak RSS`, value: `${fmt(peak, 0)} MiB`, target: `≤ ${TARGETS.peakRssMiB} MiB`, ok: peak <= TARGETS.peakRssMiB },
    ...(mine.length > 1
      ? [
          { what: `${database}: RSS of ${largest.days} over ${smallest.days} days`, value: `${fmt(largest.peakRssMiB / smallest.peakRssMiB, 2)}×`, target: `≤ ${TARGETS.rssRatio}×`, ok: largest.peakRssMiB / smallest.peakRssMiB <= TARGETS.rssRatio },
          { what: `${database}: time of ${largest.days} over ${smallest.days} days`, value: `${fmt(largest.seconds / smallest.seconds, 2)}×`, target: `(linear: ${fmt(largest.days / smallest.days, 1)}×)`, ok: true },
        ]
      : []),
  ];
  for (const c of checks) {
    console.log(`${c.ok ? 'OK  ' : 'MISS'} ${c.what}: ${c.value} (target ${c.target})`);
    ok &&= c.ok;
  }
}
process.exitCode = ok ? 0 : 1;
