// Mutation testing of the modules that decide correctness: `npm run mutate` (see README, "Mutation testing").
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  // Every test file takes part in the first run, not only those vitest finds importing the mutated
  // file ("related"): per-test coverage then picks each mutant's tests from what really ran, so a
  // test that reaches a module other than by a static import still counts. Today's tests all
  // import what they cover (related mode gave the same scores); this costs the first run seconds.
  vitest: { configFile: 'vitest.mutate.config.ts', related: false },
  plugins: ['@stryker-mutator/vitest-runner'],
  // Each mutant runs only the tests that reach it; static mutants (module-level constants) would
  // need a full run each and are left out.
  coverageAnalysis: 'perTest',
  ignoreStatic: true,
  // Results are reused for unchanged code and tests; the file stays out of git (.gitignore).
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  // The machine is shared (two cores): two test processes at most. A whole run of every file
  // takes long on a loaded machine; while working on one file, pass --concurrency 1.
  concurrency: 2,
  mutate: [
    'src/gateway/link-header-parser.ts',
    'src/gateway/paginate.ts',
    'src/gateway/balance-listing.ts',
    'src/gateway/token-response.ts',
    'src/gateway/response-schemas.ts',
    'src/gateway/retry-policy.ts',
    'src/reconciliation/reconcile-rules.ts',
    'src/books/books-file.ts',
    // Amounts: parsing text into minor units, scales, formatting for people.
    'src/books/amount-text.ts',
    'src/money/amount-scale.ts',
    'src/money/format-amount.ts',
    'src/money/number-style.ts',
    // Tolerances: RECON_TOLERANCE(_<CODE>) read, cut to the minor unit, and per balance (the
    // lines after businessCalendarOf; the schedule check above them needs a whole config).
    'src/config/business-settings.ts:22-102',
    // Derived states: the bank leg's rules, results' counts and exit codes, a case's acceptance
    // scope and current date, and books or statements awaited until their deadline on the clock.
    'src/reconciliation/bank-rules.ts',
    'src/reconciliation/reconciliation-result.ts',
    'src/cases/case-rules.ts',
    'src/reconciliation/awaited-deadlines.ts',
    'src/db/state-on-clock.ts',
    // Sign-off checks: what blocks a signature, what changed since, seals and locks.
    'src/signoff/settle-check.ts',
    'src/signoff/sealed-inputs.ts',
    'src/signoff/seal.ts',
    'src/signoff/date-lock.ts',
    'src/business-date/zoned-time.ts',
    'src/business-date/business-calendar.ts',
    'src/business-date/duration.ts',
    'src/scheduler/slot-schedule.ts',
    // Bank statements (#40): the readers of every format, amounts and dates exactly as written,
    // and the proofs (roll-forward, sequence numbers) and the days a bank books.
    'src/statements/camt-reader.ts',
    'src/statements/mt940-reader.ts',
    'src/statements/bai2-reader.ts',
    'src/statements/statement-amount.ts',
    'src/statements/statement-dates.ts',
    'src/statements/statement-proof.ts',
    'src/config/bank-calendar-settings.ts',
    // Reconciling items (#38): age in business days, buckets, overdue state, per-currency totals, the waterfall.
    'src/items/item-rules.ts',
    'src/items/open-item-totals.ts',
    'src/reconciliation/waterfall.ts',
    // Matching (#38): books entries with statement entries, by reference, amount and date, groups.
    'src/matching/match-rules.ts',
  ],
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  thresholds: { high: 90, low: 90, break: 90 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
