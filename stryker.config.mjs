// Mutation testing of the modules that decide correctness: `npm run mutate` (see README, "Mutation testing").
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts' },
  plugins: ['@stryker-mutator/vitest-runner'],
  // Each mutant runs only the tests that reach it; static mutants (module-level constants) would
  // need a full run each and are left out.
  coverageAnalysis: 'perTest',
  ignoreStatic: true,
  // Results are reused for unchanged code and tests; the file stays out of git (.gitignore).
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  // The machine is shared: two test processes at most.
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
    'src/business-date/zoned-time.ts',
    'src/business-date/business-calendar.ts',
    'src/business-date/duration.ts',
    'src/scheduler/slot-schedule.ts',
  ],
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  thresholds: { high: 90, low: 90, break: 90 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
