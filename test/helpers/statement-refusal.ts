import { expect } from 'vitest';
import { StatementFileError } from '../../src/statements/statement-file-error.js';

/** The message of the StatementFileError `fn` refuses with; fails the test if it throws nothing or something else. */
export function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(StatementFileError);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}
