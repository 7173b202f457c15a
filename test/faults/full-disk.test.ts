import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open-database.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { runCliProcess } from '../helpers/run-cli.js';

// A data directory on a small tmpfs of its own, filled to the brim. Mounting needs root.
const canMount = process.getuid?.() === 0 && spawnSync('mount', ['--version']).status === 0;

let sandbox: Sandbox;
let mountPoint: string | undefined;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, wallets: 40, seed: 9 });
});
afterAll(async () => {
  await sandbox?.close();
  if (mountPoint) {
    spawnSync('umount', [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  }
});

/** Writes a file until the file system says ENOSPC: not a byte is left. */
function fillToTheBrim(file: string): void {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    // The last partial block too.
    try {
      for (;;) writeSync(fd, chunk, 0, 512);
    } catch {
      // Full.
    }
  } finally {
    closeSync(fd);
  }
}

describe.skipIf(!canMount)('a full disk under the embedded database', () => {
  it('ends the run with an error naming RECON_DATA_DIR and the room needed, and works again once space is freed', async () => {
    mountPoint = mkdtempSync(path.join(tmpdir(), 'wr-faults-disk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=128m,mode=0700', 'tmpfs', mountPoint]);
    const dataDir = path.join(mountPoint, 'data');
    const env = { RECON_DATA_DIR: dataDir, GATEWAY_ENV: 'sandbox', GATEWAY_SANDBOX_URL: sandbox.url, GATEWAY_API_KEY: sandbox.apiKey, GATEWAY_API_SECRET: sandbox.apiSecret };
    const first = await runCliProcess(['snapshot'], env);
    expect(first.code, first.stderr).toBe(0);

    const filler = path.join(mountPoint, 'filler');
    fillToTheBrim(filler);
    const free = statfsSync(mountPoint);
    expect(Number(free.bavail)).toBe(0);
    const full = await runCliProcess(['snapshot'], env);
    expect(full.code).toBe(1);
    expect(full.stderr).toContain(`The disk of the embedded database is full: RECON_DATA_DIR (${dataDir}) has 0 MB free and wallet-recon needs at least 48 MB free there to write safely.`);
    expect(full.stderr).not.toMatch(/Unexpected error/);

    rmSync(filler);
    const after = await runCliProcess(['snapshot'], env);
    expect(after.code, after.stderr).toBe(0);
    const handle = await openDatabase({ dataDir, command: 'faults check' });
    try {
      const runs = await handle.db.selectFrom('snapshot_runs').select(['id', 'status', 'wallets_fetched']).orderBy('id').execute();
      expect(runs.map((r) => [r.status, r.wallets_fetched])).toEqual([
        ['succeeded', 40],
        ['succeeded', 40],
      ]);
      const rows = await handle.db.selectFrom('balance_snapshots').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
      expect(Number(rows.n)).toBe(80);
    } finally {
      await handle.close();
    }
    console.log(`[faults] full disk: 128 MB tmpfs filled to 0 bytes free: exit ${full.code}, "${full.stderr.trim().split('\n')[0]}"; after freeing it: exit ${after.code}, 2 whole runs of 40 wallets`);
  });
});
