import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import type { Clock } from '../clock.js';
import { ReconError } from '../errors.js';
import { registerBackfillCommand } from './backfill-command.js';
import { registerCasesCommand } from './cases-command.js';
import { registerDemoCommand } from './demo-command.js';
import { registerLedgerCommand } from './ledger-command.js';
import { registerMigrateCommand } from './migrate-command.js';
import { registerNotifyCommand } from './notify-command.js';
import { registerReconcileCommand } from './reconcile-command.js';
import { registerReportCommand } from './report-command.js';
import { registerRunsCommand } from './runs-command.js';
import { registerSandboxCommand } from './sandbox-command.js';
import { registerScheduleCommand } from './schedule-command.js';
import { registerSnapshotCommand } from './snapshot-command.js';
import { registerSqlCommand } from './sql-command.js';
import { processOutput, type Output } from './output.js';
import { createCliRuntime, type ShutdownBudget } from './runtime.js';

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
  0  success (every account succeeded; everything reconciled)
  1  a run or command failed
  2  usage or configuration error (nothing was touched)
  3  reconciliation found breaks, missing sides or gaps
  4  skipped: another process holds the lock`;

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

/** Builds the command tree; each command lives in its own module. */
export function buildProgram(runtime: ReturnType<typeof createCliRuntime>): Command {
  const program = new Command('wallet-recon')
    .description('Capture merchant wallet balances from the payment gateway into PostgreSQL and reconcile them with the books.')
    .version(readVersion(), '-V, --version', 'print the version')
    .showHelpAfterError('(run "wallet-recon --help" for the list of commands)')
    .showSuggestionAfterError(true)
    .addHelpText('after', `${EXAMPLES_HELP}\n${EXIT_CODES_HELP}\n\nConfiguration comes from the environment (and a .env file): see README.md.`)
    .exitOverride()
    .configureOutput({ writeOut: (s) => runtime.output.out(s.replace(/\n$/, '')), writeErr: (s) => runtime.output.err(s.replace(/\n$/, '')) });
  // In the order a newcomer meets them: try it, set up, capture, reconcile, run nightly.
  registerDemoCommand(program, runtime);
  registerMigrateCommand(program, runtime);
  registerSnapshotCommand(program, runtime);
  registerRunsCommand(program, runtime);
  registerLedgerCommand(program, runtime);
  registerReconcileCommand(program, runtime);
  registerReportCommand(program, runtime);
  registerCasesCommand(program, runtime);
  registerBackfillCommand(program, runtime);
  registerScheduleCommand(program, runtime);
  registerNotifyCommand(program, runtime);
  registerSqlCommand(program, runtime);
  registerSandboxCommand(program);
  for (const command of program.commands) command.exitOverride();
  return program;
}

/** Runs the CLI and returns the exit code; never calls process.exit itself. */
export async function runCli(
  argv: string[],
  options: { output?: Output; env?: NodeJS.ProcessEnv; signal?: AbortSignal; shutdown?: ShutdownBudget; clock?: Clock } = {},
): Promise<number> {
  const runtime = createCliRuntime(options.output ?? processOutput, options.env, options.signal, options.shutdown, options.clock);
  const program = buildProgram(runtime);
  let code: number;
  try {
    await program.parseAsync(argv);
    code = runtime.exitCode;
  } catch (error) {
    code = reportError(runtime, error);
  }
  // Stopped by a signal: the run was recorded as interrupted; the exit code says which signal.
  const signalled = signalExitCode(options.signal);
  return signalled !== undefined && runtime.exitOnSignal ? signalled : code;
}

/** 128 + the signal's number, as shells report a process ended by it: SIGINT 130, SIGTERM 143. */
export function signalExitCode(signal: AbortSignal | undefined): number | undefined {
  if (!signal?.aborted) return undefined;
  const name = signal.reason instanceof Error ? signal.reason.message : String(signal.reason);
  return name === 'SIGINT' ? 130 : name === 'SIGTERM' ? 143 : undefined;
}

/**
 * Prints an error once, as the sentence it is (no class name; the log does not repeat it on a
 * terminal), and returns its exit code. With LOG_LEVEL=debug the log gets the detail.
 */
function reportError(runtime: ReturnType<typeof createCliRuntime>, error: unknown): number {
  if (error instanceof CommanderError) {
    // --help and --version end through here with exit code 0.
    return error.exitCode === 0 ? 0 : 2;
  }
  const message = error instanceof ReconError ? error.message : `Unexpected error: ${error instanceof Error ? error.message : String(error)}`;
  runtime.output.err(message);
  try {
    runtime.logger().debug({ err: error }, 'the error above, in detail');
  } catch {
    // No logger without a valid configuration: the message printed is all there is.
  }
  return error instanceof ReconError ? error.exitCode : 1;
}
