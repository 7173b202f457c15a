import { randomBytes } from 'node:crypto';
import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Writes a file readable by its owner only (0600: reports hold balances) so that readers see
 * the old file or the whole new one, never a half-written one: temp file in the same folder,
 * then rename, which is atomic on one file system.
 */
export async function writeFileAtomically(filePath: string, content: string): Promise<void> {
  const target = path.resolve(filePath);
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(temp, content, { mode: 0o600, flag: 'wx' });
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
