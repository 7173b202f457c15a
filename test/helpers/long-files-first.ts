import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Test files that take the longest, most of it waiting on their own database work, timers and
 * sockets (the slowest-files list at the end of a run names them): started first, so the two
 * workers end together instead of one running such a file alone at the end. Vitest orders by the
 * durations it cached from the last run, but a fresh clone has none, and its order then left
 * `books-pull-hostile` (27 s) to start last (154 s instead of about 130 s for the whole run).
 * Only the order changes: each file still runs alone in its worker from a clean slate.
 */
const LONG_FILES = [
  'test/integration/books-pull-hostile.test.ts',
  'test/integration/day-scoped-queries.test.ts',
  'test/integration/books-pull.test.ts',
  'test/integration/console.test.ts',
  'test/integration/problem-caps-cli.test.ts',
  'test/integration/console-sign-in-attack.test.ts',
  'test/process/cli-snapshot.test.ts',
  'test/process/derived-times-cli.test.ts',
];

/** Vitest's order (the last run's longest first, when known), the files above before the rest. */
export default class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const at = LONG_FILES.indexOf(path.relative(this.ctx.config.root, file.moduleId).split(path.sep).join('/'));
      return at === -1 ? LONG_FILES.length : at;
    };
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
