import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { DATA_DIR_MARKER } from '../../src/db/embedded-data-dir.js';
import { openDatabase } from '../../src/db/open-database.js';
import { ConfigError } from '../../src/errors.js';

/** Every file and folder under `dir` whose mode lets anyone but the owner in. */
function looseEntries(dir: string): string[] {
  const loose: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (statSync(full).mode & 0o077) loose.push(`${full} ${(statSync(full).mode & 0o777).toString(8)}`);
    if (entry.isDirectory()) loose.push(...looseEntries(full));
  }
  return loose;
}

describe('embedded database files', () => {
  it('are owner-only: the files of a new database and those written while it runs', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'wr-files-'));
    const dataDir = path.join(folder, 'data');
    try {
      const handle = await openDatabase({ dataDir, command: 'test' });
      try {
        await sql`create table written_later (x int)`.execute(handle.db);
        await sql`insert into written_later values (1)`.execute(handle.db);
      } finally {
        await handle.close();
      }
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      expect(readdirSync(dataDir).length).toBeGreaterThan(5);
      expect(looseEntries(dataDir)).toEqual([]);
    } finally {
      // A new database is 40 MB: not left in the temp folder by every run.
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('of a folder an earlier version wrote (no marker, files open to others) are made owner-only when it is opened', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'wr-files-'));
    const dataDir = path.join(folder, 'data');
    try {
      await (await openDatabase({ dataDir, command: 'test' })).close();
      // As versions before the marker left a database: PGlite's files as it wrote them, 0666.
      rmSync(path.join(dataDir, DATA_DIR_MARKER));
      chmodSync(path.join(dataDir, 'PG_VERSION'), 0o666);
      chmodSync(path.join(dataDir, 'base'), 0o755);
      const handle = await openDatabase({ dataDir, command: 'test' });
      await handle.close();
      expect(looseEntries(dataDir)).toEqual([]);
      expect(readdirSync(dataDir)).toContain(DATA_DIR_MARKER);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('are never put into a folder of other files', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'wr-files-'));
    writeFileSync(path.join(folder, 'thesis.docx'), 'mine');
    chmodSync(folder, 0o755);
    await expect(openDatabase({ dataDir: folder, command: 'test' })).rejects.toBeInstanceOf(ConfigError);
    expect(readdirSync(folder)).toEqual(['thesis.docx']);
    expect(statSync(folder).mode & 0o777).toBe(0o755);
    rmSync(folder, { recursive: true, force: true });
  });
});
