/**
 * npm run bench — speed and memory of a snapshot against the bundled emulator.
 *
 * Scenarios: one account with many wallets, and many accounts with fewer wallets (memory must
 * stay flat as accounts grow). Uses the embedded database in a temp folder, or BENCH_DATABASE_URL.
 * Exits 1 when a target is missed. Sizes: BENCH_WALLETS (default 10000), BENCH_ACCOUNTS (default 20).
 *
 * Then the fleet (bench/fleet.ts): BENCH_FLEET accounts (default 100,1000) of 20 wallets at 20 ms
 * latency, 32 accounts at once, against the emulator in its own process, on the PostgreSQL server
 * of BENCH_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres; BENCH_FLEET=off skips it).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runSnapshotJob } from '../jobs/snapshot-job.js';
import type { AppContext } from '../src/app-context.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config/index.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { openDatabase } from '../src/db/open-database.js';
import { createSilentLogger } from '../src/logger.js';
import { startSandbox } from '../src/sandbox/index.js';
import { MAX_LOCK_SESSIONS } from '../src/snapshot/account-lock.js';
import { FLEET_SETTINGS, type FleetMeasurement } from './fleet.js';
import { measureStartup } from './startup.js';

const WALLETS = Number(process.env.BENCH_WALLETS ?? 10_000);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 20);
const TARGETS = {
  /** Seconds for one account of WALLETS wallets (1 token + WALLETS/100 pages + WALLETS single reads). */
  singleAccountSeconds: 60,
  /** Peak heap growth while capturing, in MiB. */
  peakHeapGrowthMiB: 150,
  /** Peak RSS of the largest fleet over the smallest: memory stays flat as accounts grow. */
  fleetRssRatio: 1.2,
  /** `--version` and `--help` against `node -e 0`: the CLI loads only what a command needs. */
  startupRatio: 2,
  /** 150 wallets at 50 ms latency against the critical path: reads start as each page is listed. */
  latencyBoundRatio: 1.15,
  /** A one-wallet snapshot on the server, beyond `node -e 0`, in ms: the fixed cost of a capture. */
  snapshotFixedCostMs: 300,
  /** Connections a process uses at most: its pool (10) and its few account-lock sessions. */
  fleetConnections: 10 + MAX_LOCK_SESSIONS,
};

const FLEET = process.env.BENCH_FLEET === 'off' ? [] : (process.env.BENCH_FLEET ?? '100,1000').split(',').map(Number);

/** The fleet in a process of its own, so its peak RSS is its own and not this one's embedded database's. */
async function runFleetProcess(adminUrl: string, counts: readonly number[]): Promise<FleetMeasurement[]> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', path.join(import.meta.dirname, 'fleet.ts'), adminUrl, counts.join(',')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw new Error(`the fleet benchmark process failed (exit ${code})`);
  return JSON.parse(output.trim().split('\n').at(-1)!) as FleetMeasurement[];
}

interface Measurement {
  seconds: number;
  peakHeapGrowthMiB: number;
  peakRssMiB: number;
  requests: number;
  wallets: number;
}

async function measure(fn: () => Promise<{ requests: number; wallets: number }>): Promise<Measurement> {
  global.gc?.();
  const baseHeap = process.memoryUsage().heapUsed;
  let peakHeap = baseHeap;
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peakHeap = Math.max(peakHeap, m.heapUsed);
    peakRss = Math.max(peakRss, m.rss);
  }, 25);
  const started = performance.now();
  const outcome = await fn();
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  return { seconds, peakHeapGrowthMiB: (peakHeap - baseHeap) / 2 ** 20, peakRssMiB: peakRss / 2 ** 20, ...outcome };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wr-bench-'));
  const sandbox = await startSandbox({ port: 0, wallets: WALLETS, seed: 11 });
  const small = await startSandbox({ port: 0, wallets: Math.max(1, Math.floor(WALLETS / ACCOUNTS)), seed: 12 });
  const database = await openDatabase({ databaseUrl: process.env.BENCH_DATABASE_URL, dataDir: path.join(dir, 'data'), command: 'bench' });
  await migrateToLatest(database.db);
  const contextFor = (env: Record<string, string>): AppContext => ({
    config: loadConfig({ env: { GATEWAY_PER_PAGE: '100', GATEWAY_CONCURRENCY: '16', RECON_ACCOUNT_CONCURRENCY: '2', ...env }, ignoreDotEnv: true }),
    database,
    logger: createSilentLogger(),
    clock: systemClock,
    close: async () => undefined,
  });

  try {
    const one = await measure(async () => {
      const ctx = contextFor({ GATEWAY_SANDBOX_URL: sandbox.url, GATEWAY_API_KEY: sandbox.apiKey, GATEWAY_API_SECRET: sandbox.apiSecret });
      const result = await runSnapshotJob(ctx, { trigger: 'manual' });
      const run = result.accounts[0]!;
      if (run.status !== 'succeeded') throw new Error(`bench run failed: ${run.error}`);
      return { requests: run.requests ?? 0, wallets: run.walletsFetched ?? 0 };
    });

    const accountsFile = path.join(dir, 'accounts.json');
    writeFileSync(
      accountsFile,
      JSON.stringify({ accounts: Array.from({ length: ACCOUNTS }, (_, i) => ({ name: `acct-${i}`, environment: 'sandbox', apiKeyEnv: 'K', apiSecretEnv: 'S' })) }),
    );
    const many = await measure(async () => {
      const ctx = contextFor({ GATEWAY_SANDBOX_URL: small.url, RECON_ACCOUNTS_FILE: accountsFile, K: small.apiKey, S: small.apiSecret });
      const result = await runSnapshotJob(ctx, { trigger: 'manual' });
      const failed = result.accounts.filter((a) => a.status !== 'succeeded');
      if (failed.length > 0) throw new Error(`bench runs failed: ${failed.map((f) => f.error).join('; ')}`);
      return { requests: result.accounts.reduce((n, a) => n + (a.requests ?? 0), 0), wallets: result.accounts.reduce((n, a) => n + (a.walletsFetched ?? 0), 0) };
    });

    const row = (name: string, m: Measurement) =>
      `${name.padEnd(34)} ${String(m.wallets).padStart(7)} ${String(m.requests).padStart(8)} ${m.seconds.toFixed(2).padStart(8)} ${(m.wallets / m.seconds).toFixed(0).padStart(10)} ${m.peakHeapGrowthMiB.toFixed(1).padStart(10)} ${m.peakRssMiB.toFixed(0).padStart(8)}`;
    console.log(`database: ${database.description}; emulator in this process (its memory is included)`);
    console.log(`${'scenario'.padEnd(34)} ${'wallets'.padStart(7)} ${'requests'.padStart(8)} ${'seconds'.padStart(8)} ${'wallets/s'.padStart(10)} ${'heap+ MiB'.padStart(10)} ${'rss MiB'.padStart(8)}`);
    console.log(row(`1 account x ${WALLETS} wallets`, one));
    console.log(row(`${ACCOUNTS} accounts x ${Math.floor(WALLETS / ACCOUNTS)} wallets`, many));

    const misses: string[] = [];
    if (one.seconds > TARGETS.singleAccountSeconds) misses.push(`single account took ${one.seconds.toFixed(1)} s (target ${TARGETS.singleAccountSeconds} s)`);
    for (const [name, m] of [['single account', one], ['many accounts', many]] as const) {
      if (m.peakHeapGrowthMiB > TARGETS.peakHeapGrowthMiB) misses.push(`${name} heap grew ${m.peakHeapGrowthMiB.toFixed(0)} MiB (target ${TARGETS.peakHeapGrowthMiB} MiB)`);
    }
    const adminUrl = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
    if (process.env.BENCH_STARTUP !== 'off') {
      const start = await measureStartup(adminUrl);
      console.log('');
      console.log('start-up of the built CLI (median of fresh processes: 15 each for node, --version and --help, 7 for a snapshot, 3 at 50 ms latency):');
      console.log(`  node -e 0                 ${start.nodeMs.toFixed(0).padStart(5)} ms`);
      console.log(`  wallet-recon --version    ${start.versionMs.toFixed(0).padStart(5)} ms  (${(start.versionMs / start.nodeMs).toFixed(2)}x node; target ${TARGETS.startupRatio}x)`);
      console.log(`  wallet-recon --help       ${start.helpMs.toFixed(0).padStart(5)} ms  (${(start.helpMs / start.nodeMs).toFixed(2)}x node; target ${TARGETS.startupRatio}x)`);
      console.log(`  snapshot, 1 wallet        ${start.snapshotMs.toFixed(0).padStart(5)} ms  (+${(start.snapshotMs - start.nodeMs).toFixed(0)} ms over node; target +${TARGETS.snapshotFixedCostMs} ms)`);
      for (const [name, ms] of [['--version', start.versionMs], ['--help', start.helpMs]] as const) {
        if (ms > TARGETS.startupRatio * start.nodeMs) misses.push(`${name} took ${ms.toFixed(0)} ms, more than ${TARGETS.startupRatio}x node -e 0 (${start.nodeMs.toFixed(0)} ms)`);
      }
      const latencyRatio = start.latencyBoundMs / start.latencyCriticalPathMs;
      console.log(`  snapshot, 150 wallets at 50 ms latency ${start.latencyBoundMs.toFixed(0).padStart(5)} ms  (${latencyRatio.toFixed(2)}x its critical path of ${start.latencyCriticalPathMs.toFixed(0)} ms; target ${TARGETS.latencyBoundRatio}x)`);
      if (latencyRatio > TARGETS.latencyBoundRatio) misses.push(`150 wallets at 50 ms took ${latencyRatio.toFixed(2)}x the critical path (target ${TARGETS.latencyBoundRatio}x)`);
      if (start.snapshotMs - start.nodeMs > TARGETS.snapshotFixedCostMs) misses.push(`a one-wallet snapshot took ${(start.snapshotMs - start.nodeMs).toFixed(0)} ms beyond node -e 0 (target ${TARGETS.snapshotFixedCostMs} ms)`);
    }
    if (FLEET.length > 0) {
      const fleet = await runFleetProcess(adminUrl, FLEET);
      console.log('');
      console.log(
        `fleet (a process of its own, after a warm-up pass): ${FLEET_SETTINGS.wallets} wallets per account, ${FLEET_SETTINGS.latencyMs} ms latency, ${FLEET_SETTINGS.accountConcurrency} accounts at once; emulator in another process; PostgreSQL server`,
      );
      console.log(`${'accounts'.padStart(8)} ${'requests'.padStart(8)} ${'seconds'.padStart(8)} ${'critical path s'.padStart(16)} ${'x critical'.padStart(10)} ${'peak rss MiB'.padStart(12)} ${'peak heap MiB'.padStart(13)} ${'pg connections'.padStart(14)}`);
      const line = (m: FleetMeasurement) =>
        `${String(m.accounts).padStart(8)} ${String(m.requests).padStart(8)} ${m.seconds.toFixed(2).padStart(8)} ${m.criticalPathSeconds.toFixed(2).padStart(16)} ${(m.seconds / m.criticalPathSeconds).toFixed(2).padStart(10)} ${m.peakRssMiB.toFixed(0).padStart(12)} ${m.peakHeapMiB.toFixed(0).padStart(13)} ${String(m.peakConnections).padStart(14)}`;
      for (const m of fleet) console.log(line(m));
      const [smallest, largest] = [fleet[0]!, fleet.at(-1)!];
      const ratio = largest.peakRssMiB / smallest.peakRssMiB;
      console.log(`peak RSS ${largest.accounts} vs ${smallest.accounts} accounts: ${ratio.toFixed(2)}x (target at most ${TARGETS.fleetRssRatio}x)`);
      if (ratio > TARGETS.fleetRssRatio) misses.push(`fleet RSS grew ${ratio.toFixed(2)}x from ${smallest.accounts} to ${largest.accounts} accounts (target ${TARGETS.fleetRssRatio}x)`);
      for (const m of fleet) {
        if (m.peakConnections > TARGETS.fleetConnections) misses.push(`${m.accounts} accounts used ${m.peakConnections} database connections (target at most ${TARGETS.fleetConnections})`);
      }
    }
    console.log(misses.length === 0 ? 'all targets met' : `targets missed:\n  ${misses.join('\n  ')}`);
    process.exitCode = misses.length === 0 ? 0 : 1;
  } finally {
    await database.close();
    await sandbox.close();
    await small.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
