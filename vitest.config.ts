import { availableParallelism } from 'node:os';
import { scratchFolder } from './test/helpers/scratch-folder.js';
import { configDefaults, defineConfig } from 'vitest/config';
import LongFilesFirst from './test/helpers/long-files-first.js';
import SlowestFilesReporter from './test/helpers/slowest-files-reporter.js';

/** Test files that replace modules with vi.mock. */
const MOCKING_FILES = ['test/unit/signoff-checks.test.ts'];

export default defineConfig({
  test: {
    // The embedded database takes seconds to start; HTTP fault tests wait on real timers.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One file per core. Vitest's default leaves one core to itself (a single worker on two
    // cores), but its main process is idle during a run and the files spend much of their time
    // waiting on child processes and sockets: on 2 cores, 2 workers took the server suite from
    // 120 s to 60 s, and 3 gained nothing more.
    maxWorkers: availableParallelism(),
    // PGlite's 9 MB of WebAssembly is compiled by the baseline compiler and again, in the
    // background, by the optimizing one, which the embedded database's short test runs do not
    // repay: baseline code only took the embedded suite's CPU time from about 190 s to 155 s with
    // a process per file, about 5 % with shared workers (the tier changes speed, not meaning).
    execArgv: ['--liftoff-only'],
    // A worker runs file after file instead of starting a process for each: the process start,
    // the imports and PGlite's compilation are paid once per worker, not once per file (server
    // suite: about 88 s of CPU time down to 70 s). Each file still starts from a clean slate: the
    // setup file resets what is process-wide and checks what an earlier file left.
    isolate: false,
    setupFiles: ['test/helpers/fresh-file-state.ts'],
    // The longest files start first, so the workers finish together (see long-files-first.ts).
    sequence: { sequencer: LongFilesFirst },
    // Test databases, data directories and books files go to memory where the machine has it:
    // creating a file on this machine's disk costs about 1.4 ms and an embedded database is a
    // thousand files (copying one: 1.3 s on disk, 0.08 s in memory).
    // The run's id names its server test databases, so its teardown drops those the workers kept.
    env: { TMPDIR: scratchFolder(), WALLET_RECON_TEST_RUN: String(process.pid) },
    globalSetup: ['test/helpers/build-cli.ts', 'test/helpers/global-setup.ts'],
    reporters: ['default', new SlowestFilesReporter()],
    // Four suites (see README, "Tests"): `npm test` runs the first two, everything that runs in the
    // test worker (commands in-process, as `runCli`); `npm run test:process` the files that start
    // the built CLI as a process of its own (stdin, signals, exit codes of the real binary, module
    // loading, file modes, two processes racing); `npm run test:browser` those that drive Chromium.
    // `npm run test:all` runs all four; CI runs all of them on the server and on the embedded database.
    // The database fault suite restarts its own PostgreSQL and kills writers: `npm run faults`.
    projects: [
      { extends: true, test: { name: 'suite', include: ['test/{unit,integration}/**/*.test.ts'], exclude: [...configDefaults.exclude, ...MOCKING_FILES] } },
      // vi.mock replaces a module for the whole worker when files share it (isolate: false above):
      // a file that mocks modules runs in a process of its own, so neither it nor the files after
      // it see the other's modules.
      { extends: true, test: { name: 'mocked', include: MOCKING_FILES, isolate: true } },
      { extends: true, test: { name: 'process', include: ['test/process/**/*.test.ts'] } },
      { extends: true, test: { name: 'browser', include: ['test/browser/**/*.test.ts'] } },
    ],
  },
});
