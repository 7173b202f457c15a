import type { Command } from 'commander';
import type { CliRuntime } from './runtime.js';

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
 * Every command in the order a newcomer meets them (try it, set up, capture, reconcile, run
 * nightly). Nothing here imports a command's module: `--version` and `--help` load none of
 * them, and a command loads only its own.
 */
export const COMMANDS: readonly CatalogEntry[] = [
  {
    name: 'demo',
    summary: 'the whole job against the bundled gateway emulator: snapshot, books with one deliberate break, reconcile, report',
    load: async () => (await import('./demo-command.js')).registerDemoCommand,
  },
  {
    name: 'migrate',
    summary: 'create or update the database schema (safe to run twice, or from two processes at once)',
    load: async () => (await import('./migrate-command.js')).registerMigrateCommand,
  },
  {
    name: 'snapshot',
    summary: 'capture every wallet balance of each configured account into the database now',
    load: async () => (await import('./snapshot-command.js')).registerSnapshotCommand,
  },
  {
    name: 'runs',
    summary: 'list recent snapshot runs with status, counts, duration and error',
    load: async () => (await import('./runs-command.js')).registerRunsCommand,
  },
  {
    name: 'ledger',
    summary: "the merchant's own books: expected balances per account, business date and currency",
    load: async () => (await import('./ledger-command.js')).registerLedgerCommand,
  },
  {
    name: 'books',
    summary: "books pulled from the merchant's ledger database by its query (RECON_BOOKS_SQL_FILE), by hand",
    load: async () => (await import('./books-command.js')).registerBooksCommand,
  },
  {
    name: 'statements',
    summary: 'bank statements (camt.053, camt.052, MT940) of the bank accounts: import them with their proofs, list them, write samples',
    load: async () => (await import('./statements-command.js')).registerStatementsCommand,
  },
  {
    name: 'reconcile',
    summary: "compare a business date's snapshot with the books and store the results (re-running replaces them)",
    load: async () => (await import('./reconcile-command.js')).registerReconcileCommand,
  },
  {
    name: 'report',
    summary: 'print or write the stored reconciliation results of a date or range (table, csv, json, html)',
    load: async () => (await import('./report-command.js')).registerReportCommand,
  },
  {
    name: 'cases',
    summary: 'discrepancy cases: list them, show one with its history, acknowledge, assign, note, resolve, accept, reopen',
    load: async () => (await import('./cases-command.js')).registerCasesCommand,
  },
  {
    name: 'backfill',
    summary: "fill missing snapshots over a range (a date whose capture window is open live, closed dates from the gateway's statements), then reconcile",
    load: async () => (await import('./backfill-command.js')).registerBackfillCommand,
  },
  {
    name: 'schedule',
    summary: 'run as the nightly worker: capture every account on RECON_SCHEDULE within its capture window, retry, then reconcile',
    load: async () => (await import('./schedule-command.js')).registerScheduleCommand,
  },
  {
    name: 'queue',
    summary: "the job queue of the current and previous night (PostgreSQL server): jobs by state, the oldest waiting; retry a dead-lettered job",
    load: async () => (await import('./queue-command.js')).registerQueueCommand,
  },
  {
    name: 'console',
    summary: 'serve the review console: the day, the cases and the maker-checker sign-off in a browser',
    load: async () => (await import('./console-command.js')).registerConsoleCommand,
  },
  {
    name: 'users',
    summary: "the review console's users: add (with a role), list, disable, set-role",
    load: async () => (await import('./users-command.js')).registerUsersCommand,
  },
  {
    name: 'signoff',
    summary: 'the maker-checker sign-off of a business date: prepare, approve, show',
    load: async () => (await import('./signoff-command.js')).registerSignoffCommand,
  },
  {
    name: 'notify',
    summary: 'notifications: send a test event to every configured channel, list the outbox, or queue a failed one again',
    load: async () => (await import('./notify-command.js')).registerNotifyCommand,
  },
  {
    name: 'sql',
    summary: "open psql on the database (the embedded one through its socket), or print how to connect, for the accounting queries of docs/accounting-and-sql.md",
    load: async () => (await import('./sql-command.js')).registerSqlCommand,
  },
  {
    name: 'sandbox',
    summary: 'run a local emulator of the payment gateway (token, balances, pagination, injectable faults)',
    load: async () => {
      const { registerSandboxCommand } = await import('./sandbox-command.js');
      return (program) => registerSandboxCommand(program);
    },
  },
];

/** The summary of a command, for its module's `.description()`. */
export function summaryOf(name: string): string {
  const entry = COMMANDS.find((c) => c.name === name);
  if (entry === undefined) throw new Error(`no command "${name}" in the catalog`);
  return entry.summary;
}

/** The command an argument list runs (`wallet-recon help X` asks about X), if it names one. */
export function commandNamed(argv: readonly string[]): (typeof COMMANDS)[number] | undefined {
  const words = argv.slice(2).filter((a) => !a.startsWith('-'));
  const name = words[0] === 'help' ? words[1] : words[0];
  return COMMANDS.find((c) => c.name === name);
}
