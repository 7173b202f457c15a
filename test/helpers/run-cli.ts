import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { runCli } from '../../src/cli/main.js';
import type { Clock } from '../../src/clock.js';
import type { Output } from '../../src/cli/output.js';
import { isKeptOpen, releaseFolder } from './kept-embedded.js';

const root = path.join(import.meta.dirname, '..', '..');
// The built CLI, as users run it: test/helpers/build-cli.ts bundles the sources before the suite.
const bin = path.join(root, 'bin', 'wallet-recon.js');
const startAfter = pathToFileURL(path.join(import.meta.dirname, 'start-after.mjs')).href;

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Environment for a child: only what the test gives, plus PATH/HOME, so the developer's own settings never leak in. */
export function childEnvironment(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', ...env };
}

/**
 * Starts the built CLI in a child process. WebAssembly is compiled by V8's baseline tier only, as
 * in the test workers: a child on the embedded database otherwise compiles PGlite's 9 MB module a
 * second time, optimized, for a process that lives a second (the tier changes speed, not meaning).
 */
export function spawnCli(args: string[], env: Record<string, string | undefined> = {}, cwd = root): ChildProcess {
  if (isKeptOpen(env.RECON_DATA_DIR)) {
    // The worker still has the test database open (kept-embedded.ts): the child starts once it is closed.
    const signal = path.join(mkdtempSync(path.join(tmpdir(), 'wr-start-after-')), 'closed');
    void releaseFolder(env.RECON_DATA_DIR).finally(() => writeFileSync(signal, ''));
    return spawn(process.execPath, ['--liftoff-only', '--import', startAfter, bin, ...args], { cwd, env: { ...childEnvironment(env), WR_TEST_START_AFTER: signal }, stdio: ['ignore', 'pipe', 'pipe'] });
  }
  return spawn(process.execPath, ['--liftoff-only', bin, ...args], { cwd, env: childEnvironment(env), stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs the CLI to completion and collects its output. */
export async function runCliProcess(args: string[], env: Record<string, string | undefined> = {}, cwd = root): Promise<CliResult> {
  // A test database this worker keeps open between in-process commands is closed for the child.
  await releaseFolder(env.RECON_DATA_DIR);
  const child = spawnCli(args, env, cwd);
  return collect(child);
}

export function collect(child: ChildProcess): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Runs the CLI in this process with a collecting output: fast, for commands that need no signals. */
export async function runCliInProcess(
  args: string[],
  env: Record<string, string | undefined>,
  options: { clock?: Clock; input?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string; database: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  // The "Database: …" line is collected apart, so tests of a command's own stderr read only that.
  const database: string[] = [];
  // Standard input as a pipe gives it (`printf '%s' "$PASSWORD" | wallet-recon …`): empty when none is given.
  const input = Readable.from(options.input === undefined ? [] : [Buffer.from(options.input)]);
  const output: Output = { out: (s) => void out.push(s), err: (s) => void err.push(s), isTTY: false, database: (s) => void database.push(s), input };
  // A copy, as each real process has its own environment: the CLI removes the secrets from it.
  const code = await runCli(['node', 'wallet-recon', ...args], { output, env: { ...env }, clock: options.clock });
  return { code, stdout: out.join('\n'), stderr: err.join('\n'), database };
}
