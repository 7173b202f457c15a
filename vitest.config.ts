import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import SlowestFilesReporter from './test/helpers/slowest-files-reporter.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The embedded database takes seconds to start; HTTP fault tests wait on real timers.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One file per core. Vitest's default leaves one core to itself (a single worker on two
    // cores), but its main process is idle during a run and the files spend much of their time
    // waiting on child processes and sockets: on 2 cores, 2 workers took the server suite from
    // 120 s to 60 s, and 3 gained nothing more.
    maxWorkers: availableParallelism(),
    // Most test files start the embedded database, in each worker process: PGlite's 9 MB
    // of WebAssembly is compiled twice, by the baseline compiler and again, in the background, by
    // the optimizing one. A test file is over before the optimized code pays off; baseline code
    // only cut the embedded suite's CPU time by a fifth (same results: the tier changes speed,
    // not meaning).
    execArgv: ['--liftoff-only'],
    // A worker runs file after file instead of starting a process for each: the process start,
    // the imports and PGlite's compilation are paid once per worker, not once per file (the
    // suites took a quarter less CPU). Each file still starts from a clean slate; the setup file
    // checks and resets what is process-wide.
    isolate: false,
    setupFiles: ['test/helpers/fresh-file-state.ts'],
    globalSetup: ['test/helpers/build-cli.ts', 'test/helpers/global-setup.ts'],
    reporters: ['default', new SlowestFilesReporter()],
  },
});
