import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA_DIR_MARKER } from '../../src/db/embedded-data-dir.js';
import { runCliProcess } from '../helpers/run-cli.js';
import { copyEmbeddedTemplate } from '../helpers/test-database.js';

// Where the embedded database lives when RECON_DATA_DIR is not set (real processes: the working
// folder and XDG_DATA_HOME are theirs).
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'wr-datadir-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the embedded database by default', () => {
  it('lives in the user data directory, not in the folder a cron job starts in', async () => {
    const cwd = path.join(dir, 'cron-cwd');
    mkdirSync(cwd);
    const result = await runCliProcess(['runs'], { XDG_DATA_HOME: path.join(dir, 'xdg') }, cwd);
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(path.join(dir, 'xdg', 'wallet-recon', 'database', DATA_DIR_MARKER))).toBe(true);
    expect(existsSync(path.join(cwd, '.data'))).toBe(false);
    // One line says where the data went, so nobody fills a database they did not mean to.
    expect(result.stderr.trim()).toBe(`Database: embedded database in ${path.join(dir, 'xdg', 'wallet-recon', 'database')}`);
  }, 60_000);

  it("uses an existing checkout's .data/ with a notice, never a silent fresh database", async () => {
    const checkout = path.join(dir, 'checkout');
    mkdirSync(path.join(checkout, '.data'), { recursive: true, mode: 0o700 });
    // The checkout's database from earlier days (a copy of the suite's migrated template, so the
    // child opens it instead of spending seconds creating one), marked as wallet-recon's.
    copyEmbeddedTemplate(path.join(checkout, '.data'));
    writeFileSync(path.join(checkout, '.data', DATA_DIR_MARKER), 'wallet-recon\n');
    const result = await runCliProcess(['runs'], { XDG_DATA_HOME: path.join(dir, 'xdg2') }, checkout);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr.trim()).toBe(
      `Using the embedded database in ${path.join(checkout, '.data')}, found in this folder (new installations keep it in ${path.join(dir, 'xdg2', 'wallet-recon')}; set RECON_DATA_DIR to choose).`,
    );
    expect(existsSync(path.join(dir, 'xdg2'))).toBe(false);
  }, 60_000);
});
