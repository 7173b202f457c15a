import type { Command } from 'commander';
import type { CliRuntime } from './runtime.js';
import { COMMAND_SUMMARIES, type CommandName } from './command-summaries.js';

/** Adds a command, with its options and action, to the program. */
export type RegisterCommand = (program: Command, runtime: CliRuntime) => void;

interface CatalogEntry {
  readonly name: string;
  /** The one line `--help` lists; the command's own module uses it as its description too. */
  readonly summary: string;
  /** Loads the command's module (and what only it needs) when the command runs, never before. */
  readonly load: () => Promise<RegisterCommand>;
}

/**
 * Every command in the order a newcomer meets them, with its summary (command-summaries.ts).
 * Nothing here imports a command's module: `--version` and `--help` load none of them, and a
 * command loads only its own.
 */
const LOADERS: Readonly<Record<CommandName, () => Promise<RegisterCommand>>> = {
  demo: async () => (await import('./demo-command.js')).registerDemoCommand,
  migrate: async () => (await import('./migrate-command.js')).registerMigrateCommand,
  snapshot: async () => (await import('./snapshot-command.js')).registerSnapshotCommand,
  runs: async () => (await import('./runs-command.js')).registerRunsCommand,
  ledger: async () => (await import('./ledger-command.js')).registerLedgerCommand,
  books: async () => (await import('./books-command.js')).registerBooksCommand,
  statements: async () => (await import('./statements-command.js')).registerStatementsCommand,
  match: async () => (await import('./match-command.js')).registerMatchCommand,
  reconcile: async () => (await import('./reconcile-command.js')).registerReconcileCommand,
  report: async () => (await import('./report-command.js')).registerReportCommand,
  cases: async () => (await import('./cases-command.js')).registerCasesCommand,
  items: async () => (await import('./items-command.js')).registerItemsCommand,
  backfill: async () => (await import('./backfill-command.js')).registerBackfillCommand,
  schedule: async () => (await import('./schedule-command.js')).registerScheduleCommand,
  calendar: async () => (await import('./calendar-command.js')).registerCalendarCommand,
  queue: async () => (await import('./queue-command.js')).registerQueueCommand,
  console: async () => (await import('./console-command.js')).registerConsoleCommand,
  users: async () => (await import('./users-command.js')).registerUsersCommand,
  signoff: async () => (await import('./signoff-command.js')).registerSignoffCommand,
  'verify-pack': async () => (await import('./verify-pack-command.js')).registerVerifyPackCommand,
  notify: async () => (await import('./notify-command.js')).registerNotifyCommand,
  sql: async () => (await import('./sql-command.js')).registerSqlCommand,
  sandbox: async () => {
      const { registerSandboxCommand } = await import('./sandbox-command.js');
      return (program) => registerSandboxCommand(program);
    },
};

export const COMMANDS: readonly CatalogEntry[] = (Object.keys(COMMAND_SUMMARIES) as CommandName[]).map((name) => ({ name, summary: COMMAND_SUMMARIES[name], load: LOADERS[name] }));

/** The command an argument list runs (`wallet-recon help X` asks about X), if it names one. */
export function commandNamed(argv: readonly string[]): (typeof COMMANDS)[number] | undefined {
  const words = argv.slice(2).filter((a) => !a.startsWith('-'));
  const name = words[0] === 'help' ? words[1] : words[0];
  return COMMANDS.find((c) => c.name === name);
}
