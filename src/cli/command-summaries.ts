/**
 * What each command does, in one line, in the order a newcomer meets them (try it, set up,
 * capture, reconcile, run nightly). `--help` lists these; each command's module takes its own as
 * its description. Apart from the catalog's loaders, so a command's module can read its summary
 * without importing the catalog that loads it.
 */
export const COMMAND_SUMMARIES = {
  demo: 'the whole job against the bundled gateway emulator: snapshot, books with one deliberate break, reconcile, report',
  migrate: 'create or update the database schema (safe to run twice, or from two processes at once)',
  snapshot: 'capture every wallet balance of each configured account into the database now',
  runs: 'list recent snapshot runs with status, counts, duration and error',
  ledger: "the merchant's own books: expected balances per account, business date and currency",
  books: "books pulled from the merchant's ledger database by its queries (balances: RECON_BOOKS_SQL_FILE, entries: RECON_BOOKS_ENTRIES_SQL_FILE), by hand",
  statements: 'bank statements (camt.053, camt.052, camt.054, MT940, MT942, BAI2) of the bank accounts: import them with their proofs, list them, give back their original files, write samples',
  match: 'books entries matched with bank statement entries: run the rules, list the matches, match or undo by hand with a note',
  reconcile: "compare a business date's snapshot with the books and store the results (re-running replaces them)",
  report: 'print or write the stored reconciliation results of a date or range (table, csv, json, html)',
  cases: 'discrepancy cases: list them, show one with its history, acknowledge, assign, note, resolve, accept, reopen',
  items: 'reconciling items that explain a difference (in transit, timing, fee, adjustment): add, clear with a note, list with their age',
  backfill: "fill missing snapshots over a range (a date whose capture window is open live, closed dates from the gateway's statements), then reconcile",
  schedule: 'run as the nightly worker: capture every account on RECON_SCHEDULE within its capture window, retry, then reconcile',
  calendar: "the database's business calendar (time zone, cut-off, capture window, deadlines): show it with its history, or change it from a business date on",
  queue: "the job queue of the current and previous night (PostgreSQL server): jobs by state, the oldest waiting; retry a dead-lettered job",
  console: 'serve the review console: the day, the cases and the maker-checker sign-off in a browser',
  users: "the review console's users: add (with a role), list, disable, enable, set-role, unlock, reset-password",
  signoff: 'the maker-checker sign-off of a business date: prepare, approve, reopen, show; verify every seal; export the evidence pack',
  'verify-pack': 'check an evidence pack offline (no database, no configuration): its signature, every file, the sign-off chain, the sealed reports',
  notify: 'notifications: send a test event to every configured channel, list the outbox, or queue a failed one again',
  sql: "open psql on the database (the embedded one through its socket), or print how to connect, for the accounting queries of docs/accounting-and-sql.md",
  sandbox: 'run a local emulator of the payment gateway (token, balances, pagination, injectable faults)',
} as const satisfies Record<string, string>;

export type CommandName = keyof typeof COMMAND_SUMMARIES;

/** The summary of a command, for its module's `.description()`. */
export function summaryOf(name: CommandName): string {
  return COMMAND_SUMMARIES[name];
}
