import { defineConfig } from 'vitest/config';

/**
 * The tests Stryker runs for each mutant (`npm run mutate`): the unit tests of the mutated
 * modules only — no database, no global setup — so one mutant costs a fraction of a second.
 * fast-check runs with a fixed seed here, so two mutation runs judge a mutant the same way.
 */
export default defineConfig({
  test: {
    // Every unit test file of the mutated modules' folders (a folder left out leaves its mutants
    // reached by no test: books-*.test.ts once left 60 of src/books/books-file.ts's uncovered).
    // money: amounts and scales; tolerance: RECON_TOLERANCE per currency; signoff, cases: the
    // pure sign-off checks and case rules; bank-rules and format-amount: older names of the same;
    // matching and items: the rules that match entries and age reconciling items.
    // statement, mt940, bai2: the statement readers, proofs and bank calendars.
    include: ['test/unit/{gateway,reconciliation,ledger,books,business,slot,money,tolerance,signoff,cases,bank,format,matching,items,statement,mt940,bai2}-*.test.ts'],
    setupFiles: ['test/helpers/fast-check-fixed-seed.ts'],
    testTimeout: 30_000,
    pool: 'forks',
  },
});
