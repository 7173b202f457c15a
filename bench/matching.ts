/**
 * npm run bench:matching — 100,000 books entries matched against 100,000 bank statement entries
 * of one month through the built CLI (`wallet-recon match run`), in a fresh database on the
 * PostgreSQL server of BENCH_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres).
 * About 90 % of the lines match by reference (end-to-end id, half of them found in the remittance
 * text), 5 % by amount within the date window, 5 % one statement entry for two books lines by a
 * shared reference. Prints the time and the peak RSS of the command (/usr/bin/time) against the
 * targets, and exits 1 when one is missed. Size: BENCH_MATCHING_LINES (default 100000).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createBenchDatabase } from './fleet.js';

const TARGETS = { seconds: 60, peakRssMiB: 300 };
const LINES = Number(process.env.BENCH_MATCHING_LINES ?? '100000');
const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const bin = path.join(import.meta.dirname, '..', 'bin', 'wallet-recon.js');
const IBAN = 'DE89370400440532013000';

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

const dir = mkdtempSync(path.join(tmpdir(), 'wr-bench-matching-'));
const database = await createBenchDatabase(ADMIN_URL, `wr_bench_matching_${process.pid}`);
let failed = false;
try {
  const accounts = path.join(dir, 'accounts.yaml');
  writeFileSync(accounts, `bankAccounts:\n  - { name: eu-bank, iban: ${IBAN}, currency: EUR }\n`);
  const env = { DATABASE_URL: database.url, LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC', RECON_ACCOUNTS_FILE: accounts };
  await runCli(['migrate'], env);
  const { admin } = database;
  await admin.query(`set search_path to public`);
  const db = new (await import('pg')).default.Client({ connectionString: database.url });
  await db.connect();
  try {
    await db.query('begin');
    await db.query(`insert into statement_imports (imported_at, files, statements) values (now(), 'bench', 30)`);
    // One end-of-day statement a day of November, each with its share of the entries.
    await db.query(`
      insert into bank_statements (account, statement_id, format, intraday, sequence, business_date, currency, scale, opening, closing, entries, fingerprint, proof, import_id, source_file)
      select 'eu-bank', 'STMT-' || d, 'camt.053', false, d, date '2026-11-01' + (d - 1), 'EUR', 2, 0, 0, 0, 'bench-' || d, 'ok', 1, 'bench.xml'
      from generate_series(1, 30) d`);
    // i % 10 <> 0: by reference (half with the reference in the remittance text only);
    // i % 20 = 10: by amount (unique) within the window; i % 20 = 0: one entry for two books lines.
    await db.query(`
      insert into bank_statement_entries (statement_pk, position, amount, credit_debit, status, booking_date, value_date, reference, bank_reference, details, reversal)
      select (i % 30) + 1, i, amt, case when amt < 0 then 'debit' else 'credit' end, 'BOOK', date '2026-11-01' + (i % 30), date '2026-11-01' + (i % 30),
        case when i % 10 <> 0 and i % 2 = 1 then 'E2E-' || i when i % 20 = 0 then 'PO-' || i end,
        'B-' || i,
        case when i % 10 <> 0 and i % 2 = 0 then 'Invoice E2E-' || i || ' thank you' else 'transfer' end,
        false
      from (select i, case when i % 20 = 10 then 50000000 + i when i % 20 = 0 then -(2 * (1000 + i)) else -(1000 + i) end as amt from generate_series(1, ${LINES}) i) t`);
    await db.query(`
      insert into books_entries (account, currency, booking_date, value_date, amount, scale, reference, description, entry_key, imported_at)
      select 'eu-bank', 'EUR', least(date '2026-11-30', date '2026-11-01' + (i % 30) + (i % 2)), null, amt, 2, ref, 'bench', 'k' || i || '-' || part, now()
      from (
        select i, 1 as part, case when i % 20 = 10 then 50000000 + i when i % 20 = 0 then -(1000 + i) else -(1000 + i) end as amt,
          case when i % 10 <> 0 then 'E2E-' || i when i % 20 = 0 then 'PO-' || i end as ref
        from generate_series(1, ${LINES}) i
        union all
        select i, 2, -(1000 + i), 'PO-' || i from generate_series(20, ${LINES}, 20) i
      ) t`);
    await db.query('delete from reconciliation_owed');
    await db.query('commit');
    const counts = await db.query<{ books: string; statement: string }>(`select (select count(*) from books_entries) as books, (select count(*) from bank_statement_entries) as statement`);
    process.stderr.write(`seeded ${counts.rows[0]!.books} books entries and ${counts.rows[0]!.statement} statement entries of November 2026\n`);
    const run = await runCli(['match', 'run', '--account', 'eu-bank'], env);
    const byRule = await db.query<{ rule: string; n: string }>(`select rule, count(*) as n from entry_matches group by rule order by rule`);
    const unmatched = await db.query<{ books: string; statement: string }>(`
      select (select count(*) from books_entries e where not exists (select 1 from entry_match_members m where m.books_entry_id = e.id)) as books,
             (select count(*) from bank_statement_entries e where not exists (select 1 from entry_match_members m where m.statement_entry_id = e.id)) as statement`);
    console.log(`matches by rule: ${byRule.rows.map((r) => `${r.rule} ${r.n}`).join(', ')}; unmatched: ${unmatched.rows[0]!.books} books, ${unmatched.rows[0]!.statement} statement`);
    const checks = [
      { what: `time of match run (${LINES.toLocaleString('en-US')} × ${LINES.toLocaleString('en-US')} entries)`, value: `${run.seconds.toFixed(1)} s`, target: `≤ ${TARGETS.seconds} s`, ok: run.seconds <= TARGETS.seconds },
      { what: 'peak RSS of match run', value: `${run.peakRssMiB.toFixed(0)} MiB`, target: `≤ ${TARGETS.peakRssMiB} MiB`, ok: run.peakRssMiB <= TARGETS.peakRssMiB },
    ];
    for (const c of checks) console.log(`${c.ok ? 'OK  ' : 'MISS'} ${c.what}: ${c.value} (target ${c.target})`);
    failed = !checks.every((c) => c.ok);
  } finally {
    await db.end();
  }
} finally {
  await database.drop();
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
