import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { writeFileAtomically } from '../../src/reports/write-file-atomically.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** The prototype of node's FileHandle, which node:fs/promises does not export. */
async function fileHandlePrototype(): Promise<{ sync(): Promise<void> }> {
  const handle = await open(import.meta.filename, 'r');
  await handle.close();
  return Object.getPrototypeOf(handle) as { sync(): Promise<void> };
}

describe('writeFileAtomically', () => {
  it('replaces the file whole, owner-only, leaving no temp file behind', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wr-atomic-'));
    const target = path.join(dir, 'report.csv');
    writeFileSync(target, 'old', { mode: 0o644 });
    await writeFileAtomically(target, 'new content');
    expect(readFileSync(target, 'utf8')).toBe('new content');
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['report.csv']);
  });

  it('flushes the new content to disk before the rename makes it visible', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wr-atomic-'));
    const target = path.join(dir, 'report.csv');
    const proto = await fileHandlePrototype();
    const original = proto.sync;
    const seen: Array<{ targetExists: boolean; tempContent: string | undefined }> = [];
    vi.spyOn(proto, 'sync').mockImplementation(async function (this: { fd: number }) {
      const temp = readdirSync(dir).find((name) => name.endsWith('.tmp'));
      seen.push({ targetExists: existsSync(target), tempContent: temp === undefined ? undefined : readFileSync(path.join(dir, temp), 'utf8') });
      return original.call(this);
    });
    await writeFileAtomically(target, 'balances');
    // First the file's own flush, with the whole content in the temp file and nothing renamed yet.
    expect(seen[0]).toEqual({ targetExists: false, tempContent: 'balances' });
    expect(readFileSync(target, 'utf8')).toBe('balances');
  });

  it('leaves the old file in place and no temp file when the folder does not exist', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wr-atomic-'));
    const target = path.join(dir, 'missing', 'report.csv');
    await expect(writeFileAtomically(target, 'x')).rejects.toThrow(
      `${target} cannot be written: the folder ${path.join(dir, 'missing')} does not exist (ENOENT); create it or choose another path`,
    );
    expect(readdirSync(dir)).toEqual([]);
  });

  it('names the target, never the temporary file, when the target is a folder', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wr-atomic-'));
    const target = path.join(dir, 'report.csv');
    mkdirSync(target);
    const error = await writeFileAtomically(target, 'x').then(() => undefined, (e: unknown) => e as Error);
    expect(error?.message).toBe(`${target} cannot be written: it is a folder (EISDIR); name a file`);
    expect(readdirSync(dir)).toEqual(['report.csv']);
  });
});
