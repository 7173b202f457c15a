/**
 * npm run bench:startup — the fixed cost of a command on the embedded database against the
 * PostgreSQL server: `--version`, `runs`, `report --date` and a one-wallet `snapshot` against the
 * bundled emulator, each a fresh process of the built CLI under /usr/bin/time (wall time, CPU time
 * of the process, peak RSS), BENCH_STARTUP_RUNS times each (default 7), medians printed as a table.
 * The server database is made on BENCH_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres)
 * and dropped; the embedded one is a folder in the temp directory. BENCH_BIN runs another build
 * (a checkout's bin/wallet-recon.js) for a before/after comparison.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startSandbox } from '../src/sandbox/index.js';
import { createBenchDatabase } from './fleet.js';

const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 7);
const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const bin = process.env.BENCH_BIN ?? path.join(import.meta.dirname, '..', 'bin', 'wallet-recon.js');

interface Sample {
  wall: number;
  cpu: number;
  rssMiB: number;
}

/** One run of the CLI under /usr/bin/time. */
async function runOnce(args: string[], env: Record<string, string>): Promise<Sample> {
  const child = spawn('/usr/bin/time', ['-f', 'BENCH_TIME %e %U %S %M', process.execPath, bin, ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  const m = /BENCH_TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(stderr);
  if (code !== 0 || !m) throw new Error(`wallet-recon ${args.join(' ')} exited ${code}: ${stderr}`);
  return { wall: Number(m[1]), cpu: Number(m[2]) + Number(m[3]), rssMiB: Number(m[4]) / 1024 };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measure(args: string[], env: Record<string, string>): Promise<Sample> {
  await runOnce(args, env); // warm the page cache: every run then reads the same files from memory
  const samples: Sample[] = [];
  for (let i = 0; i < RUNS; i++) samples.push(await runOnce(args, env));
  return { wall: median(samples.map((s) => s.wall)), cpu: median(samples.map((s) => s.cpu)), rssMiB: median(samples.map((s) => s.rssMiB)) };
}

const dir = mkdtempSync(path.join(tmpdir(), 'wr-bench-startup-'));
const sandbox = await startSandbox({ port: 0, wallets: 1 });
const server = await createBenchDatabase(ADMIN_URL, `wr_bench_embedded_start_${process.pid}`);
const statementDate = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);
const rows: Array<{ command: string; database: string; sample: Sample }> = [];
try {
  const gateway = { GATEWAY_SANDBOX_URL: sandbox.url, GATEWAY_API_KEY: sandbox.apiKey, GATEWAY_API_SECRET: sandbox.apiSecret, LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC' };
  const databases = { embedded: { ...gateway, RECON_DATA_DIR: path.join(dir, 'data') }, server: { ...gateway, DATABASE_URL: server.url } };
  // A reconciled date to report: its statement imported by backfill (which reconciles it), a capture for `runs`.
  const statements = path.join(dir, 'statements.csv');
  writeFileSync(statements, `business_date,currency,balance\n${statementDate},USD,100000\n`);
  for (const env of Object.values(databases)) {
    await runOnce(['migrate'], env);
    await runOnce(['snapshot', '--quiet'], env);
    await runOnce(['backfill', '--from', statementDate, '--to', statementDate, '--import', statements], env).catch(() => undefined);
  }
  rows.push({ command: '--version', database: '-', sample: await measure(['--version'], {}) });
  for (const [command, args] of [
    ['runs', ['runs']],
    [`report --date`, ['report', '--date', statementDate]],
    ['snapshot (1 wallet)', ['snapshot', '--quiet']],
  ] as const) {
    for (const [database, env] of Object.entries(databases)) rows.push({ command, database, sample: await measure([...args], env) });
  }
} finally {
  await sandbox.close();
  await server.drop();
  rmSync(dir, { recursive: true, force: true });
}

console.log(`| command | database | wall (median of ${RUNS}) | CPU time | peak RSS |`);
console.log('|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.command} | ${r.database} | ${r.sample.wall.toFixed(2)} s | ${r.sample.cpu.toFixed(2)} s | ${r.sample.rssMiB.toFixed(0)} MiB |`);
