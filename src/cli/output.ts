import type { ProgressStream } from './progress-line.js';

/** Where commands print for people: stdout for results, stderr for problems. Injected in tests. */
export interface Output {
  out(text: string): void;
  err(text: string): void;
  readonly isTTY: boolean;
  /** Where live progress bars are drawn (stderr, so stdout stays clean to pipe); none when absent. */
  readonly progress?: ProgressStream;
  /**
   * The one line saying which database a command uses ("Database: embedded database in …"): on
   * stderr, like `err`; kept apart so a caller collecting output can tell it from the command's own.
   */
  database?(text: string): void;
  /** Standard input, for the commands that read a password from it; the process's own when absent. */
  readonly input?: NodeJS.ReadableStream;
}

/** The process's own stdout and stderr. */
export const processOutput: Output = {
  out: (text) => void process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => void process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  get isTTY() {
    return Boolean(process.stdout.isTTY);
  },
  progress: process.stderr,
  database: (text) => void process.stderr.write(`${text}\n`),
  // A getter: touching process.stdin opens it, which only the commands that read it should do.
  get input() {
    return process.stdin;
  },
};
