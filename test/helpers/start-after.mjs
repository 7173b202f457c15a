// Preloaded (`node --import`) into a CLI child whose test database the test worker still had open
// (test/helpers/kept-embedded.ts): the child waits, before the CLI starts, until the worker has
// closed it and created the file WR_TEST_START_AFTER names, so it finds the folder free as it
// would have without the keeping. The variable is removed before the CLI reads its environment.
import { existsSync } from 'node:fs';

const file = process.env.WR_TEST_START_AFTER;
delete process.env.WR_TEST_START_AFTER;
if (file) {
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + 60_000;
  while (!existsSync(file) && Date.now() < deadline) Atomics.wait(sleeper, 0, 0, 5);
}
