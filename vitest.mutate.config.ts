import { defineConfig } from 'vitest/config';

/**
 * The tests Stryker runs for each mutant (`npm run mutate`): the unit tests of the mutated
 * modules only — no database, no global setup — so one mutant costs a fraction of a second.
 * fast-check runs with a fixed seed here, so two mutation runs judge a mutant the same way.
 */
export default defineConfig({
  test: {
    include: ['test/unit/{gateway,reconciliation,ledger,business,slot}-*.test.ts'],
    setupFiles: ['test/helpers/fast-check-fixed-seed.ts'],
    testTimeout: 30_000,
    pool: 'forks',
  },
});
