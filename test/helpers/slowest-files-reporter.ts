import path from 'node:path';
import type { Reporter, TestModule, Vitest } from 'vitest/node';

/**
 * Prints the ten test files that took longest, after vitest's own summary, so a file that grows
 * slow is seen in every run. A file's time is its import plus its tests and hooks, as run (with
 * several workers, files overlap: the times add up to more than the run's).
 */
export default class SlowestFilesReporter implements Reporter {
  #vitest: Vitest | undefined;
  readonly #count: number;

  constructor(count = 10) {
    this.#count = count;
  }

  onInit(vitest: Vitest): void {
    this.#vitest = vitest;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const rows = testModules
      .map((m) => {
        const d = m.diagnostic();
        return { file: path.relative(this.#vitest?.config.root ?? process.cwd(), m.moduleId), importMs: d.collectDuration, testsMs: d.duration, totalMs: d.collectDuration + d.duration };
      })
      .sort((a, b) => b.totalMs - a.totalMs)
      .slice(0, this.#count);
    if (rows.length === 0) return;
    const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    const width = Math.max(...rows.map((r) => r.file.length));
    const lines = rows.map((r) => `  ${r.file.padEnd(width)}  ${seconds(r.totalMs).padStart(7)}  (import ${seconds(r.importMs)}, tests ${seconds(r.testsMs)})`);
    const log = (text: string) => (this.#vitest ? this.#vitest.logger.log(text) : console.log(text));
    log(`\n Slowest ${rows.length} test files:\n${lines.join('\n')}\n`);
  }
}
