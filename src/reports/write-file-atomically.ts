import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { InterruptedError, ReconError } from '../errors.js';

/**
 * Writes a file readable by its owner only (0600: reports hold balances) so that readers see
 * the old file or the whole new one, never a half-written one: temp file in the same folder,
 * flushed to disk, then renamed, which is atomic on one file system. Without the flush a crash
 * just after the rename can leave an empty file under the final name on some file systems.
 */
export async function writeFileAtomically(filePath: string, content: string | Iterable<string> | AsyncIterable<string>, options: { signal?: AbortSignal } = {}): Promise<void> {
  const target = path.resolve(filePath);
  const folder = path.dirname(target);
  const temp = path.join(folder, `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const { signal } = options;
  // A failure to produce the content (a database error mid-stream, a stop signal) is no failure to write the file.
  let sourceError: { error: unknown } | undefined;
  const stopIfAborted = () => {
    if (signal?.aborted !== true) return;
    const error = new InterruptedError(`stopped by ${stopName(signal)} before ${target} was written`);
    sourceError = { error };
    throw error;
  };
  stopIfAborted();
  liveTemps.add(temp);
  removeTempsAtExit();
  try {
    const file = await open(temp, 'wx', 0o600);
    try {
      if (typeof content === 'string') await file.writeFile(content);
      else {
        // A streamed report: each chunk is written before the next is read, so memory holds one.
        const chunks = Symbol.asyncIterator in content ? content[Symbol.asyncIterator]() : content[Symbol.iterator]();
        let sourceFailed = false;
        try {
          for (;;) {
            stopIfAborted();
            let step: IteratorResult<string>;
            try {
              step = await chunks.next();
            } catch (error) {
              sourceFailed = true;
              sourceError = { error };
              throw error;
            }
            if (step.done === true) break;
            await file.write(step.value);
          }
        } catch (error) {
          // Stopped here (a write failed, a stop signal): the source's own clean-up (a cursor's
          // transaction) runs before the temp file goes.
          if (!sourceFailed) await Promise.resolve(chunks.return?.()).catch(() => undefined);
          throw error;
        }
      }
      await file.sync();
    } finally {
      await file.close();
    }
    // A stop while the file was flushed: the report is not put in place.
    stopIfAborted();
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    if (sourceError !== undefined && sourceError.error === error) throw error;
    throw new ReconError(whyNotWritten(error, target, folder), { cause: error });
  } finally {
    liveTemps.delete(temp);
  }
  await syncFolder(folder);
}

/** SIGINT or SIGTERM: the reason the CLI's entry point aborts its signal with. */
function stopName(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason.message : String(reason);
}

// Temp files being written: a process ended while writing one (a second stop signal, the forced
// exit after the shutdown budget) removes them on its way out, so no half report is left behind.
const liveTemps = new Set<string>();
let exitHookInstalled = false;

function removeTempsAtExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const temp of liveTemps) rmSync(temp, { force: true });
  });
}

/**
 * Why `target` could not be written, in words naming the target and its folder: node's own
 * message names the temporary file, a name the operator never chose and cannot find afterwards.
 */
function whyNotWritten(error: unknown, target: string, folder: string): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      // The temporary file is created beside the target, so the folder must be writable too.
      return `${target} cannot be written: permission denied (${code}); the file is first written beside it, so the folder ${folder} must be writable by this user, and an existing ${path.basename(target)} replaceable`;
    case 'ENOENT':
      return `${target} cannot be written: the folder ${folder} does not exist (ENOENT); create it or choose another path`;
    case 'ENOTDIR':
      return `${target} cannot be written: part of the path ${folder} is a file, not a folder (ENOTDIR)`;
    case 'EISDIR':
      return `${target} cannot be written: it is a folder (EISDIR); name a file`;
    case 'EROFS':
      return `${target} cannot be written: the file system is read-only (EROFS)`;
    case 'ENOSPC':
    case 'EDQUOT':
      return `${target} cannot be written: no space left on the disk (${code})`;
    default: {
      const text = error instanceof Error ? error.message.replace(/'[^']*\.tmp'/g, `'${target}'`) : String(error);
      return `${target} cannot be written: ${text}`;
    }
  }
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
