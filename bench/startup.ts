/**
 * Start-up of the built CLI, as a person or cron meets it: the median wall time of several runs of
 * `node -e 0`, `wallet-recon --version`, `--help`, and a snapshot's fixed cost (one wallet, no
 * latency, PostgreSQL server) — each a fresh process.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { migrateToLatest } from '../src/db/migrate.js';
import { openDatabase } from '../src/db/open-database.js';
import { startSandbox } from '../src/sandbox/index.js';
import { createBenchDatabase, startEmulatorProcess } from './fleet.js';

const bin = path.join(import.meta.dirname, '..', 'bin', 'wallet-recon.js');

export interface StartupMeasurement {
  nodeMs: number;
  versionMs: number;
  helpMs: number;
  snapshotMs: number;
  /** 150 wallets at 50 ms per request, against the emulator in its own process. */
  latencyBoundMs: number;
  /** What the latency allows: 1 token + 2 pages + 19 rounds of 8 single reads, at 50 ms, plus `node -e 0`. */
  latencyCriticalPathMs: number;
}

const LATENCY = { wallets: 150, latencyMs: 50, perPage: 100, concurrency: 8 };

async function medianMs(args: string[], env: Record<string, string | undefined>, runs: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const [code] = (await once(child, 'close')) as [number | null];
    if (code !== 0) throw new Error(`${args.slice(1).join(' ') || args.join(' ')} exited ${code}: ${stderr.trim()}`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

export async function measureStartup(adminUrl: string, runs = 7): Promise<StartupMeasurement> {
  const bench = await createBenchDatabase(adminUrl, `wr_bench_start_${process.pid}`);
  const sandbox = await startSandbox({ port: 0, wallets: 1 });
  try {
    const database = await openDatabase({ databaseUrl: bench.url, dataDir: 'memory://', command: 'bench startup' });
    await migrateToLatest(database.db);
    await database.close();
    const env = { DATABASE_URL: bench.url, GATEWAY_SANDBOX_URL: sandbox.url, GATEWAY_API_KEY: sandbox.apiKey, GATEWAY_API_SECRET: sandbox.apiSecret, LOG_LEVEL: 'silent' };
    // The quick ones are a few tens of milliseconds each, where one slow start moves a median of
    // seven: they run twice as often.
    const nodeMs = await medianMs(['-e', '0'], {}, runs * 2 + 1);
    const measured = {
      nodeMs,
      versionMs: await medianMs([bin, '--version'], {}, runs * 2 + 1),
      helpMs: await medianMs([bin, '--help'], {}, runs * 2 + 1),
      snapshotMs: await medianMs([bin, 'snapshot', '--quiet'], env, runs),
    };
    const slow = await startEmulatorProcess(LATENCY.wallets, LATENCY.latencyMs);
    try {
      const roundTrips = 1 + Math.ceil(LATENCY.wallets / LATENCY.perPage) + Math.ceil(LATENCY.wallets / LATENCY.concurrency);
      const latencyEnv = { ...env, GATEWAY_SANDBOX_URL: slow.url, GATEWAY_PER_PAGE: String(LATENCY.perPage), GATEWAY_CONCURRENCY: String(LATENCY.concurrency) };
      return { ...measured, latencyBoundMs: await medianMs([bin, 'snapshot', '--quiet'], latencyEnv, 3), latencyCriticalPathMs: roundTrips * LATENCY.latencyMs + nodeMs };
    } finally {
      slow.child.kill('SIGTERM');
    }
  } finally {
    await sandbox.close();
    await bench.drop();
  }
}
