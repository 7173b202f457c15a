import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DATA_DIR_MARKER, prepareDataDir, restrictToOwner } from '../../src/db/embedded-data-dir.js';
import { ConfigError } from '../../src/errors.js';

const fresh = () => mkdtempSync(path.join(tmpdir(), 'wr-datadir-'));
const modeOf = (p: string) => statSync(p).mode & 0o777;

describe('the embedded data directory', () => {
  it('creates a missing folder owner-only and marks it as ours', () => {
    const dir = path.join(fresh(), 'nested', 'data');
    expect(prepareDataDir(dir)).toEqual({ marked: false });
    expect(modeOf(dir)).toBe(0o700);
    expect(readdirSync(dir)).toEqual([DATA_DIR_MARKER]);
    expect(modeOf(path.join(dir, DATA_DIR_MARKER))).toBe(0o600);
    // Marked: opened before by a version that makes its files owner-only.
    expect(prepareDataDir(dir)).toEqual({ marked: true });
  });

  it('takes an empty folder, and a PostgreSQL data directory of an earlier version, tightening it', () => {
    const empty = fresh();
    chmodSync(empty, 0o755);
    prepareDataDir(empty);
    expect(modeOf(empty)).toBe(0o700);
    const earlier = fresh();
    writeFileSync(path.join(earlier, 'PG_VERSION'), '17\n');
    chmodSync(earlier, 0o755);
    prepareDataDir(earlier);
    expect(modeOf(earlier)).toBe(0o700);
    expect(readdirSync(earlier).sort()).toEqual(['PG_VERSION', DATA_DIR_MARKER]);
  });

  it('refuses a folder of other files, leaving its permissions and content alone', () => {
    const home = fresh();
    writeFileSync(path.join(home, 'notes.txt'), 'mine');
    chmodSync(home, 0o755);
    expect(() => prepareDataDir(home)).toThrow(ConfigError);
    expect(() => prepareDataDir(home)).toThrow(`RECON_DATA_DIR points at ${home}, a folder that already holds other files and is not a wallet-recon data directory.`);
    expect(modeOf(home)).toBe(0o755);
    expect(readdirSync(home)).toEqual(['notes.txt']);
  });

  it('refuses a file', () => {
    const file = path.join(fresh(), 'data');
    writeFileSync(file, '');
    expect(() => prepareDataDir(file)).toThrow(/is a file, not a folder/);
  });

  it('takes group and other permissions off every file and folder inside', () => {
    const dir = fresh();
    mkdirSync(path.join(dir, 'base', '1'), { recursive: true, mode: 0o755 });
    writeFileSync(path.join(dir, 'base', '1', '112'), '', { mode: 0o666 });
    chmodSync(path.join(dir, 'base', '1', '112'), 0o666);
    restrictToOwner(dir);
    expect(modeOf(path.join(dir, 'base'))).toBe(0o700);
    expect(modeOf(path.join(dir, 'base', '1'))).toBe(0o700);
    expect(modeOf(path.join(dir, 'base', '1', '112'))).toBe(0o600);
    expect(existsSync(path.join(dir, 'base', '1', '112'))).toBe(true);
  });
});
