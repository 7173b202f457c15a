/**
 * CPU per capture once a process is warm: runSnapshotJob over N accounts × 20 wallets, ROUNDS times
 * in one process, against the emulator in its own process (LAT ms per request), on a new database
 * on the local PostgreSQL server (dropped after). Prints the CPU of this process per capture for
 * each round; the first rounds carry V8's warm-up. Profile it with node --cpu-prof.
 *   N=100 ROUNDS=4 node --import tsx bench/capture-cpu.ts
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runSnapshotJob } from '../jobs/snapshot-job.js';
import { createBenchDatabase, startEmulatorProcess } from './fleet.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config/index.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { openDatabase } from '../src/db/open-database.js';
import { createLogger } from '../src/logger.js';

const accounts = Number(process.env.N ?? 100), rounds = Number(process.env.ROUNDS ?? 3);
const bench = await createBenchDatabase(process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', `wr_capcpu_${process.pid}`);
const emulator = await startEmulatorProcess(20, Number(process.env.LAT ?? 20));
const dir = mkdtempSync(path.join(tmpdir(), 'wr-capcpu-'));
const database = await openDatabase({ databaseUrl: bench.url, dataDir: 'memory://', command: 'capcpu' });
await migrateToLatest(database.db);
const file = path.join(dir, 'a.json');
writeFileSync(file, JSON.stringify({ accounts: Array.from({ length: accounts }, (_, i) => ({ name: `f-${i}`, environment: 'sandbox', apiKeyEnv: 'K', apiSecretEnv: 'S' })) }));
const config = loadConfig({ env: { GATEWAY_SANDBOX_URL: emulator.url, RECON_ACCOUNTS_FILE: file, K: 'sandbox-key', S: 'sandbox-secret', GATEWAY_PER_PAGE: '100', GATEWAY_CONCURRENCY: '8', RECON_ACCOUNT_CONCURRENCY: '32', LOG_LEVEL: 'warn' }, ignoreDotEnv: true });
const logger = createLogger({ level: 'warn' } as never);
const ctx = { config, database, logger, clock: systemClock, close: async () => undefined } as never;
for (let r = 0; r < rounds; r++) {
  const c0 = process.cpuUsage();
  const res = await runSnapshotJob(ctx, { trigger: 'manual' });
  const c = process.cpuUsage(c0);
  const ok = res.accounts.filter((a: { status: string }) => a.status === 'succeeded').length;
  console.log(`round ${r}: ${ok}/${accounts} ok, CPU ${((c.user + c.system) / 1000 / accounts).toFixed(2)} ms per capture (user ${(c.user / 1000 / accounts).toFixed(2)}, sys ${(c.system / 1000 / accounts).toFixed(2)})`);
}
await database.close();
emulator.child.kill('SIGTERM');
await bench.drop();
rmSync(dir, { recursive: true, force: true });
