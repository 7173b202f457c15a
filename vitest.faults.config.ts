import { defineConfig } from 'vitest/config';

// `npm run faults`: the database fault suite (test/faults). Each file restarts or stops a
// PostgreSQL cluster of its own, kills embedded writers or fills a small file system, so the
// files run one at a time (they measure recovery, and two at once on a small machine would mostly
// measure each other). CI runs it after the server suite.
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    testTimeout: 240_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    globalSetup: ['test/helpers/build-cli.ts'],
  },
});
