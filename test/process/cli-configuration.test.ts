import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCliProcess } from '../helpers/run-cli.js';

// Configuration mistakes as an operator meets them: through the built CLI, in a folder of its own.
let dir: string | undefined;
const freshFolder = () => (dir = mkdtempSync(path.join(tmpdir(), 'wr-cli-config-')));

afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('the CLI and its configuration', () => {
  it('refuses a malformed .env line with its file and line number, exit 2', async () => {
    const cwd = freshFolder();
    writeFileSync(path.join(cwd, '.env'), 'this is not valid\nRECON_TIMEZONE=Europe/Berlin\n');
    const result = await runCliProcess(['runs'], { RECON_DATA_DIR: 'memory://' }, cwd);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(
      `${path.join(cwd, '.env')}, line 1, is not a setting: write one setting per line as NAME=value (such as RECON_TIMEZONE=Europe/Berlin), and start a comment with #.`,
    );
  });

  it('warns on stderr about a misspelt variable and an in-memory database, and creates no folder "memory:"', async () => {
    const cwd = freshFolder();
    const result = await runCliProcess(['runs'], { RECON_DATA_DIR: 'memory://', RECON_TIMEZOME: 'Europe/Berlin' }, cwd);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('No snapshot runs yet.');
    expect(result.stderr).toContain('Warning: RECON_TIMEZOME (set in the environment) is not a variable wallet-recon reads, so it is ignored; did you mean RECON_TIMEZONE?\n');
    expect(result.stderr).toContain('Warning: RECON_DATA_DIR is memory://: the embedded database lives in memory and keeps nothing once the command ends.\n');
    expect(readdirSync(cwd)).toEqual([]);
    // A fresh in-memory database is created and migrated from nothing: slow on a busy machine.
  }, 120_000);
});

describe('--help', () => {
  it('lists the signal exit codes 130 and 143 beside the others, for the program and each command with a list', async () => {
    const help = await runCliProcess(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/\n {2}130 {2}stopped by Ctrl-C \(SIGINT\); a run under way is recorded as interrupted\n/);
    expect(help.stdout).toMatch(/\n {2}143 {2}stopped by SIGTERM/);
    for (const command of [['snapshot'], ['reconcile'], ['report'], ['cases'], ['backfill'], ['ledger', 'import'], ['notify', 'test']]) {
      const result = await runCliProcess([...command, '--help']);
      expect(result.stdout, command.join(' ')).toMatch(/Exit codes: .*, 130 stopped by Ctrl-C \(SIGINT\), 143 stopped by SIGTERM\.\n/);
    }
  }, 60_000);
});
