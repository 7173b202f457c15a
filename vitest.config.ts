import { defineConfig } from 'vitest/config';
import SlowestFilesReporter from './test/helpers/slowest-files-reporter.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The embedded database takes seconds to start; HTTP fault tests wait on real timers.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['test/helpers/build-cli.ts', 'test/helpers/global-setup.ts'],
    reporters: ['default', new SlowestFilesReporter()],
  },
});
