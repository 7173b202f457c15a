import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import type { Clock } from '../clock.js';
import { ReconError } from '../errors.js';
import { DataDirFullError, isNoSpace, noSpaceError } from '../db/embedded-free-space.js';
import { commandNamed, COMMANDS } from './command-catalog.js';
import { processOutput, type Output } from './output.js';
import type { CliRuntime, ShutdownBudget } from './runtime.js';

const EXAMPLES_HELP = `
Examples:
  wallet-recon demo                                  try everything against the bundled emulator
  wallet-recon migrate                               create or update the schema
  wallet-recon snapshot --account eu-main            capture one account's balances now
  wallet-recon runs --limit 5                        the latest runs and their outcome
  wallet-recon ledger import books.csv               load the merchant's books (expected balances)
  wallet-recon reconcile --date 2026-11-20           compare a business date with the books
  wallet-recon report --from 2026-11-01 --to 2026-11-30 --format html --out nov.html
  wallet-recon cases --state active                  the discrepancies that need attention
  wallet-recon backfill --from 2026-11-18 --to 2026-11-20 --import statements.csv
  wallet-recon schedule                              the nightly worker
  wallet-recon notify test                           send a test event to every configured channel
  wallet-recon sql                                   psql on the database (the embedded one too)
  wallet-recon sandbox --port 4010 --wallets 12      the gateway emulator on its own`;

const EXIT_CODES_HELP = `
Exit codes:
  0    success (every account succeeded; everything reconciled)
  1    a run or command failed
  2    usage or configuration error (nothing was touched)
  3    reconciliation found breaks, missing sides or gaps
  4    skipped: another process holds the lock
  130  stopped by Ctrl-C (SIGINT); a run under way is recorded as interrupted
  143  stopped by SIGTERM, likewise (the worker, schedule, stops with 0 as it is its normal way to stop)`;

function readVersion(): string {
  // Sources run from src/cli, the build from dist/src/cli: walk up to the package.json.
  for (let dir = import.meta.dirname; ; dir = path.dirname(dir)) {
    try {
      return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      if (path.dirname(dir) === dir) return 'unknown';
    }
  }
}

/**
 * Builds the command tree: every command by name and summary, and the one `argv` runs with its
 * options and action. Only that command's module is loaded (with the runtime: configuration,
 * database, logger), so `--version` and `--help` start as fast as commander itself.
 */
export async function buildProgram(argv: readonly string[], output: Output, createRuntime: () => Promise<CliRuntime>): Promise<{ program: Command; runtime?: CliRuntime }> {
  const program = new Command('wallet-recon')
    .description('Capture merchant wallet balances from the payment gateway into PostgreSQL and reconcile them with the books.')
    .version(readVersion(), '-V, --version', 'print the version')
    .showHelpAfterError('(run "wallet-recon --help" for the list of commands)')
    .showSuggestionAfterError(true)
    .addHelpText('after', `${EXAMPLES_HELP}\n${EXIT_CODES_HELP}\n\nConfiguration comes from the environment (and a .env file): every variable is in docs/configuration.md.`)
    .exitOverride()
    .configureOutput({ writeOut: (s) => output.out(s.replace(/\n$/, '')), writeErr: (s) => output.err(s.replace(/\n$/, '')) });
  const chosen = commandNamed(argv);
  let runtime: CliRuntime | undefined;
  for (const entry of COMMANDS) {
    if (entry === chosen) {
      runtime = await createRuntime();
      (await entry.load())(program, runtime);
    } else {
      program.command(entry.name).description(entry.summary);
    }
  }
  for (const command of program.commands) command.exitOverride();
  return { program, runtime };
}

/** Runs the CLI and returns the exit code; never calls process.exit itself. */
export async function runCli(
  argv: string[],
  options: { output?: Output; env?: NodeJS.ProcessEnv; signal?: AbortSignal; shutdown?: ShutdownBudget; clock?: Clock } = {},
): Promise<number> {
  const output = options.output ?? processOutput;
  const createRuntime = async () => (await import('./runtime.js')).createCliRuntime(output, options.env, options.signal, options.shutdown, options.clock);
  let runtime: CliRuntime | undefined;
  let code: number;
  try {
    const built = await buildProgram(argv, output, createRuntime);
    runtime = built.runtime;
    await built.program.parseAsync(argv);
    code = runtime?.exitCode ?? 0;
  } catch (error) {
    code = reportError(output, runtime, error);
  }
  // Stopped by a signal: the run was recorded as interrupted; the exit code says which signal.
  const signalled = signalExitCode(options.signal);
  return signalled !== undefined && runtime?.exitOnSignal ? signalled : code;
}

/** 128 + the signal's number, as shells report a process ended by it: SIGINT 130, SIGTERM 143. */
export function signalExitCode(signal: AbortSignal | undefined): number | undefined {
  if (!signal?.aborted) return undefined;
  const name = signal.reason instanceof Error ? signal.reason.message : String(signal.reason);
  return name === 'SIGINT' ? 130 : name === 'SIGTERM' ? 143 : undefined;
}

/** A disk that filled up under the embedded database: said with the folder and the room needed. */
function explainNoSpace(runtime: CliRuntime | undefined, error: unknown): unknown {
  if (error instanceof DataDirFullError || !isNoSpace(error)) return error;
  try {
    const config = runtime?.config();
    if (config && config.databaseUrl === undefined) return noSpaceError(config.dataDir, error);
  } catch {
    // No configuration: the error as it is.
  }
  return error;
}

/**
 * Prints an error once, as the sentence it is (no class name; the log does not repeat it on a
 * terminal), and returns its exit code. With LOG_LEVEL=debug the log gets the detail.
 */
function reportError(output: Output, runtime: CliRuntime | undefined, error: unknown): number {
  if (error instanceof CommanderError) {
    // --help and --version end through here with exit code 0.
    return error.exitCode === 0 ? 0 : 2;
  }
  error = explainNoSpace(runtime, error);
  const message = error instanceof ReconError ? error.message : `Unexpected error: ${error instanceof Error ? error.message : String(error)}`;
  output.err(message);
  try {
    runtime?.logger().debug({ err: error }, 'the error above, in detail');
  } catch {
    // No logger without a valid configuration: the message printed is all there is.
  }
  return error instanceof ReconError ? error.exitCode : 1;
}
