import { accessSync, constants, mkdirSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

// tmpfs's magic number in statfs(2).
const TMPFS = 0x01021994;
const SHARED_MEMORY = '/dev/shm';

/**
 * The folder the test workers use as TMPDIR: one of this run's own in /dev/shm when that is a
 * writable tmpfs (Linux), else the system's temporary folder. Made at the first call; the
 * global setup's teardown removes it with whatever a test left there.
 */
export function scratchFolder(): string {
  const existing = process.env.WALLET_RECON_TEST_SCRATCH;
  if (existing) return existing;
  let folder = tmpdir();
  try {
    if (statfsSync(SHARED_MEMORY).type === TMPFS) {
      accessSync(SHARED_MEMORY, constants.W_OK);
      folder = path.join(SHARED_MEMORY, `wallet-recon-tests-${process.pid}`);
      mkdirSync(folder, { recursive: true, mode: 0o700 });
    }
  } catch {
    folder = tmpdir();
  }
  process.env.WALLET_RECON_TEST_SCRATCH = folder;
  return folder;
}

/** Removes this run's scratch folder (never the system's temporary folder itself). */
export function removeScratchFolder(): void {
  const folder = process.env.WALLET_RECON_TEST_SCRATCH;
  if (folder?.startsWith(`${SHARED_MEMORY}/wallet-recon-tests-`)) rmSync(folder, { recursive: true, force: true });
}
