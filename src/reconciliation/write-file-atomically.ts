import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/**
 * Writes a file readable by its owner only (0600: reports hold balances) so that readers see
 * the old file or the whole new one, never a half-written one: temp file in the same folder,
 * flushed to disk, then renamed, which is atomic on one file system. Without the flush a crash
 * just after the rename can leave an empty file under the final name on some file systems.
 */
export async function writeFileAtomically(filePath: string, content: string): Promise<void> {
  const target = path.resolve(filePath);
  const folder = path.dirname(target);
  const temp = path.join(folder, `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const file = await open(temp, 'wx', 0o600);
    try {
      await file.writeFile(content);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncFolder(folder);
}

/** Makes the rename itself durable. Some platforms cannot open a folder for syncing: then the rename stands unsynced. */
async function syncFolder(folder: string): Promise<void> {
  let handle;
  try {
    handle = await open(folder, 'r');
    await handle.sync();
  } catch {
    // EISDIR/EPERM on platforms without directory fsync.
  } finally {
    await handle?.close();
  }
}
