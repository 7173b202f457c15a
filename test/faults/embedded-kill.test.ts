import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open-database.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { collect, runCliProcess, spawnCli } from '../helpers/run-cli.js';

// kill -9 of an embedded `snapshot` at random moments: the database must open afterwards and
// hold only whole runs. Seeded, so a failure can be replayed (FAULTS_SEED).
const KILLS = 50;
const seed = Number(process.env.FAULTS_SEED ?? 20261126);

function random(state: { s: number }): number {
  // mulberry32: small, seedable, good enough to spread kill moments.
  state.s = (state.s + 0x6d2b79f5) | 0;
  let t = state.s;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

let sandbox: Sandbox;
let dataDir: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, wallets: 40, seed: 9 });
  dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'wr-faults-kill-')), 'data');
});
afterAll(async () => {
  await sandbox?.close();
  if (dataDir) rmSync(path.dirname(dataDir), { recursive: true, force: true });
});

describe('the embedded database survives kill -9', () => {
  it(`${KILLS} snapshots killed at random moments leave a database that opens and holds only whole runs`, { timeout: 1_500_000 }, async () => {
    sandbox.setFaults({ latencyMs: 5 });
    const env = {
      RECON_DATA_DIR: dataDir,
      GATEWAY_ENV: 'sandbox',
      GATEWAY_SANDBOX_URL: sandbox.url,
      GATEWAY_API_KEY: sandbox.apiKey,
      GATEWAY_API_SECRET: sandbox.apiSecret,
      GATEWAY_PER_PAGE: '4',
    };
    // A whole run first creates and migrates the folder; a second times a run to aim the kills.
    const first = await runCliProcess(['snapshot'], env);
    expect(first.code, first.stderr).toBe(0);
    const begun = Date.now();
    const second = await runCliProcess(['snapshot'], env);
    expect(second.code, second.stderr).toBe(0);
    const runMs = Date.now() - begun;
    const loopStarted = Date.now();

    const state = { s: seed };
    const outcomes = { killed: 0, finished: 0, failedToOpen: 0 };
    const failures: string[] = [];
    for (let i = 0; i < KILLS; i++) {
      const child = spawnCli(['snapshot'], env);
      const done = collect(child);
      // Anywhere from the process start to a little past a whole run: opening, migrating, capturing, writing, closing.
      const delay = Math.floor(random(state) * runMs * 1.2);
      const timer = setTimeout(() => child.kill('SIGKILL'), delay);
      const result = await done;
      clearTimeout(timer);
      if (i % 10 === 9) console.log(`[faults] kill -9: ${i + 1} of ${KILLS} after ${Math.round((Date.now() - loopStarted) / 1000)} s`);
      if (result.signal === 'SIGKILL') outcomes.killed++;
      else if (result.code === 0) outcomes.finished++;
      else {
        outcomes.failedToOpen++;
        failures.push(`kill ${i} (after ${delay} ms): exit ${result.code}: ${result.stderr.slice(0, 500)}`);
      }
    }
    // A process that was not killed must not have failed: a killed predecessor never leaves the folder unusable.
    expect(failures).toEqual([]);

    // It opens, and holds only whole runs.
    const check = async () => {
      const handle = await openDatabase({ dataDir, command: 'faults check' });
      try {
        const runs = await handle.db.selectFrom('snapshot_runs').select(['id', 'status', 'wallets_fetched']).orderBy('id').execute();
        const rows = await handle.db.selectFrom('balance_snapshots').select(['run_id', sql<string>`count(*)`.as('n')]).groupBy('run_id').execute();
        const rowsOf = new Map(rows.map((r) => [r.run_id, Number(r.n)]));
        return { runs, rowsOf };
      } finally {
        await handle.close();
      }
    };
    const after = await check();
    for (const run of after.runs) {
      if (run.status === 'succeeded') expect(rowsOf(after.rowsOf, run.id), `run ${run.id}`).toBe(run.wallets_fetched);
      else expect(rowsOf(after.rowsOf, run.id), `run ${run.id} (${run.status})`).toBe(0);
    }
    const running = after.runs.filter((r) => r.status === 'running').length;

    // The next open settles what the killed processes left running.
    const next = await runCliProcess(['snapshot'], env);
    expect(next.code, next.stderr).toBe(0);
    const settled = await check();
    expect(settled.runs.filter((r) => r.status === 'running')).toEqual([]);
    const succeeded = settled.runs.filter((r) => r.status === 'succeeded');
    for (const run of succeeded) expect(rowsOf(settled.rowsOf, run.id)).toBe(40);
    const byStatus = Object.fromEntries(['succeeded', 'failed', 'abandoned'].map((s) => [s, settled.runs.filter((r) => r.status === s).length]));
    console.log(
      `[faults] kill -9: seed ${seed}, a whole run ${runMs} ms, ${KILLS} kills in ${Math.round((Date.now() - loopStarted) / 1000)} s; ${outcomes.killed} killed, ${outcomes.finished} finished before their kill; ` +
        `${running} run(s) left running, settled by the next open; runs now ${JSON.stringify(byStatus)}, every succeeded run with all 40 wallet rows`,
    );
  });
});

function rowsOf(map: Map<number, number>, id: number): number {
  return map.get(id) ?? 0;
}
