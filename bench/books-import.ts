/**
 * npm run bench:books — a books CSV of 100,000 and of 1,000,000 lines imported through the built
 * CLI (`wallet-recon ledger import`) into a fresh database on the PostgreSQL server of
 * BENCH_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres), each command a process of
 * its own, timed, with its peak RSS as the kernel counts it (/usr/bin/time). Then the same file
 * again (every key unchanged, compared set-based). Prints each figure against its target and
 * exits 1 when one is missed. Sizes: BENCH_BOOKS_LINES (default 100000,1000000).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createBenchDatabase } from './fleet.js';

const TARGETS = {
  /** Peak RSS of the largest import, MiB. */
  peakRssMiB: 300,
  /** Time of the largest over the smallest, for ten times the lines: linear, with room for noise. */
  timeRatio: 12,
};

const LINES = (process.env.BENCH_BOOKS_LINES ?? '100000,1000000').split(',').map(Number);
const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const bin = path.join(import.meta.dirname, '..', 'bin', 'wallet-recon.js');

// ISO 4217 codes with two decimals: a merchant's books are one row per day and currency.
const CURRENCIES = ['AUD', 'BGN', 'BRL', 'CAD', 'CHF', 'CNY', 'CZK', 'DKK', 'EUR', 'GBP', 'HKD', 'ILS', 'INR', 'MXN', 'MYR', 'NOK', 'NZD', 'PHP', 'PLN', 'RON', 'SEK', 'SGD', 'THB', 'TRY', 'USD', 'ZAR', 'AED', 'SAR', 'QAR', 'EGP', 'MAD', 'PEN', 'COP', 'ARS', 'UYU', 'GEL', 'KZT', 'UAH', 'RSD', 'MKD'];

/** Writes `lines` rows: CURRENCIES per day, days counting back from yesterday, amounts with thousands separators. */
async function writeBooks(file: string, lines: number): Promise<void> {
  const out = createWriteStream(file);
  const write = (text: string) => (out.write(text) ? Promise.resolve() : once(out, 'drain').then(() => undefined));
  await write('business_date,currency,balance\n');
  const day = Date.UTC(2026, 10, 26);
  let chunk = '';
  for (let i = 0; i < lines; i++) {
    const date = new Date(day - Math.floor(i / CURRENCIES.length) * 86_400_000).toISOString().slice(0, 10);
    const cents = BigInt(i) * 7919n + 123_456_789n;
    chunk += `${date},${CURRENCIES[i % CURRENCIES.length]},"${(cents / 100n).toLocaleString('en-US')}.${(cents % 100n).toString().padStart(2, '0')}"\n`;
    if (chunk.length > 1 << 16) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(chunk);
  out.end();
  await once(out, 'close');
}

/** Runs the built CLI under /usr/bin/time: its wall time and the kernel's peak RSS of the process. */
async function runCli(args: string[], env: Record<string, string>): Promise<{ seconds: number; peakRssMiB: number; stdout: string }> {
  const started = process.hrtime.bigint();
  const child = spawn('/usr/bin/time', ['-f', 'PEAK_RSS_KB %M', process.execPath, bin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const kb = Number(/PEAK_RSS_KB (\d+)/.exec(stderr)?.[1]);
  if (code !== 0) throw new Error(`wallet-recon ${args.join(' ')} exited ${code}: ${stderr}`);
  return { seconds, peakRssMiB: kb / 1024, stdout: stdout.trim() };
}

interface Row {
  lines: number;
  firstSeconds: number;
  firstRssMiB: number;
  againSeconds: number;
  againRssMiB: number;
}

const dir = mkdtempSync(path.join(tmpdir(), 'wr-bench-books-'));
const rows: Row[] = [];
try {
  for (const lines of LINES) {
    const file = path.join(dir, `books-${lines}.csv`);
    await writeBooks(file, lines);
    const database = await createBenchDatabase(ADMIN_URL, `wr_bench_books_${process.pid}_${lines}`);
    try {
      const env = { DATABASE_URL: database.url, LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC' };
      await runCli(['migrate'], env);
      const first = await runCli(['ledger', 'import', file, '--decimal-point'], env);
      const again = await runCli(['ledger', 'import', file, '--decimal-point'], env);
      process.stderr.write(`${lines} lines: ${first.stdout}\n${' '.repeat(String(lines).length)} again: ${again.stdout}\n`);
      rows.push({ lines, firstSeconds: first.seconds, firstRssMiB: first.peakRssMiB, againSeconds: again.seconds, againRssMiB: again.peakRssMiB });
    } finally {
      await database.drop();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const smallest = rows[0]!;
const largest = rows[rows.length - 1]!;
const ratio = largest.firstSeconds / smallest.firstSeconds;
const peak = Math.max(...rows.map((r) => Math.max(r.firstRssMiB, r.againRssMiB)));
const fmt = (n: number, digits = 1) => n.toFixed(digits);
console.log('| lines | import (new keys) | peak RSS | import again (unchanged) | peak RSS |');
console.log('|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.lines.toLocaleString('en-US')} | ${fmt(r.firstSeconds)} s | ${fmt(r.firstRssMiB, 0)} MiB | ${fmt(r.againSeconds)} s | ${fmt(r.againRssMiB, 0)} MiB |`);
const checks = [
  { what: `peak RSS of the largest import (${largest.lines.toLocaleString('en-US')} lines)`, value: `${fmt(peak, 0)} MiB`, target: `≤ ${TARGETS.peakRssMiB} MiB`, ok: peak <= TARGETS.peakRssMiB },
  ...(rows.length > 1 ? [{ what: `time of ${largest.lines.toLocaleString('en-US')} over ${smallest.lines.toLocaleString('en-US')} lines`, value: `${fmt(ratio)}×`, target: `≤ ${TARGETS.timeRatio}×`, ok: ratio <= TARGETS.timeRatio }] : []),
];
console.log('');
for (const c of checks) console.log(`${c.ok ? 'OK  ' : 'MISS'} ${c.what}: ${c.value} (target ${c.target})`);
process.exitCode = checks.every((c) => c.ok) ? 0 : 1;
