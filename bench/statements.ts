/**
 * npm run bench:statements — one camt.053 statement of 1,000,000 entries (about 150 MB) imported
 * through the built CLI (`wallet-recon statements import`) into a fresh database on the PostgreSQL
 * server of BENCH_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres). Prints the time
 * and the peak RSS of the command (/usr/bin/time) against the targets, checks what was stored
 * (entries, closing balance, proof ok, the original file's SHA-256), and exits 1 when a target is
 * missed. Size: BENCH_STATEMENT_ENTRIES (default 1000000).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createBenchDatabase } from './fleet.js';

const TARGETS = { seconds: 120, peakRssMiB: 300 };
const ENTRIES = Number(process.env.BENCH_STATEMENT_ENTRIES ?? '1000000');
const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const bin = path.join(import.meta.dirname, '..', 'bin', 'wallet-recon.js');
const IBAN = 'DE89370400440532013000';

async function runCli(args: string[], env: Record<string, string>): Promise<{ seconds: number; cpuSeconds: number; peakRssMiB: number; stdout: string }> {
  const started = process.hrtime.bigint();
  const child = spawn('/usr/bin/time', ['-f', 'PEAK_RSS_KB %M CPU %U %S', process.execPath, bin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const measured = /PEAK_RSS_KB (\d+) CPU ([\d.]+) ([\d.]+)/.exec(stderr);
  if (code !== 0) throw new Error(`wallet-recon ${args.join(' ')} exited ${code}: ${stderr}`);
  return { seconds, cpuSeconds: Number(measured?.[2]) + Number(measured?.[3]), peakRssMiB: Number(measured?.[1]) / 1024, stdout: stdout.trim() };
}

const major = (cents: bigint) => `${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`;

/** Writes the statement a chunk at a time; returns its closing balance in cents. */
async function writeStatement(file: string): Promise<bigint> {
  const out = createWriteStream(file);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  const opening = 100_000_000n;
  let closing = opening;
  for (let i = 1; i <= ENTRIES; i++) closing += i % 3 === 0 ? -BigInt(1000 + (i % 977)) : BigInt(2000 + (i % 1013));
  const bal = (code: string, amount: bigint, date: string) => `<Bal><Tp><CdOrPrtry><Cd>${code}</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">${major(amount)}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>${date}</Dt></Dt></Bal>\n`;
  await write(
    `<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08">\n<BkToCstmrStmt>\n<GrpHdr><MsgId>BENCH</MsgId><CreDtTm>2026-11-30T23:00:00Z</CreDtTm></GrpHdr>\n<Stmt>\n<Id>BENCH-2026-11-30</Id><ElctrncSeqNb>1</ElctrncSeqNb><CreDtTm>2026-11-30T23:00:00Z</CreDtTm>\n<Acct><Id><IBAN>${IBAN}</IBAN></Id><Ccy>EUR</Ccy></Acct>\n` +
      bal('OPBD', opening, '2026-11-29') +
      bal('CLBD', closing, '2026-11-30'),
  );
  let chunk = '';
  for (let i = 1; i <= ENTRIES; i++) {
    const debit = i % 3 === 0;
    const amount = debit ? BigInt(1000 + (i % 977)) : BigInt(2000 + (i % 1013));
    chunk += `<Ntry><NtryRef>N${i}</NtryRef><Amt Ccy="EUR">${major(amount)}</Amt><CdtDbtInd>${debit ? 'DBIT' : 'CRDT'}</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts><BookgDt><Dt>2026-11-30</Dt></BookgDt><ValDt><Dt>2026-11-30</Dt></ValDt><AcctSvcrRef>B${i}</AcctSvcrRef></Ntry>\n`;
    if (i % 10_000 === 0) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(`${chunk}</Stmt>\n</BkToCstmrStmt>\n</Document>\n`);
  out.end();
  await once(out, 'finish');
  return closing;
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

const dir = mkdtempSync(path.join(tmpdir(), 'wr-bench-statements-'));
const database = await createBenchDatabase(ADMIN_URL, `wr_bench_statements_${process.pid}`);
let failed = false;
try {
  const accounts = path.join(dir, 'accounts.yaml');
  writeFileSync(accounts, `bankAccounts:\n  - { name: eu-bank, iban: ${IBAN}, currency: EUR }\n`);
  const file = path.join(dir, 'statement-1m.xml');
  const closing = await writeStatement(file);
  const size = statSync(file).size;
  process.stderr.write(`wrote ${file}: ${ENTRIES.toLocaleString('en-US')} entries, ${(size / 1024 / 1024).toFixed(1)} MiB\n`);
  const env = { DATABASE_URL: database.url, LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC', RECON_ACCOUNTS_FILE: accounts };
  await runCli(['migrate'], env);
  const run = await runCli(['statements', 'import', file], env);
  process.stderr.write(`${run.stdout}\n`);
  // On a shared machine the wall time counts the waits for a core too: the command's own CPU time says what it costs.
  console.log(`CPU time of statements import (user + system, the wallet-recon process; the database server's is apart): ${run.cpuSeconds.toFixed(1)} s`);
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  try {
    const stored = await db.query<{ entries: string; closing: string; proof: string; file_sha256: string; rows: string }>(
      `select s.entries, s.closing::text as closing, s.proof, s.file_sha256, (select count(*) from bank_statement_entries e where e.statement_pk = s.id) as rows from bank_statements s`,
    );
    const row = stored.rows[0];
    const sha256 = await sha256Of(file);
    const checks = [
      { what: `time of statements import (${ENTRIES.toLocaleString('en-US')} entries, ${(size / 1024 / 1024).toFixed(0)} MiB)`, value: `${run.seconds.toFixed(1)} s`, target: `≤ ${TARGETS.seconds} s`, ok: run.seconds <= TARGETS.seconds },
      { what: 'peak RSS of statements import', value: `${run.peakRssMiB.toFixed(0)} MiB`, target: `≤ ${TARGETS.peakRssMiB} MiB`, ok: run.peakRssMiB <= TARGETS.peakRssMiB },
      { what: 'entries stored', value: String(row?.rows ?? 0), target: String(ENTRIES), ok: Number(row?.rows) === ENTRIES && Number(row?.entries) === ENTRIES },
      { what: 'closing balance and proof', value: `${row?.closing ?? '-'} ${row?.proof ?? '-'}`, target: `${closing} ok`, ok: row?.closing === String(closing) && row?.proof === 'ok' },
      { what: 'original file kept (SHA-256)', value: row?.file_sha256 ?? '-', target: sha256, ok: row?.file_sha256 === sha256 },
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
