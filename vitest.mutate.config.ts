import { defineConfig } from 'vitest/config';

/**
 * The tests Stryker runs for each mutant (`npm run mutate`): the unit tests of the mutated
 * modules only — no database, no global setup — so one mutant costs a fraction of a second.
 * fast-check runs with a fixed seed here, so two mutation runs judge a mutant the same way.
 */
export default defineConfig({
  test: {
    // Every unit test file of the mutated modules' folders: books-*.test.ts (books-formats tests the
    // amounts of src/books/books-file.ts) was left out, so 60 of its mutants were reached by no test.
    include: ['test/unit/{gateway,reconciliation,ledger,books,business,slot}-*.test.ts'],
    setupFiles: ['test/helpers/fast-check-fixed-seed.ts'],
    testTimeout: 30_000,
    pool: 'forks',
  },
});
