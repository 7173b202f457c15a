import { ConfigError } from '../errors.js';
import { maskUrlPasswords } from '../logger.js';
import { SECRET_VARIABLES } from './secret-files.js';

/** One problem with one variable, quoting its value unless it is a secret (URL passwords masked). */
export function describeIssue(variable: string, value: string | undefined, message: string): string {
  const shown = value === undefined ? '' : SECRET_VARIABLES.includes(variable) ? ' (value hidden)' : `, got "${maskUrlPasswords(value)}"`;
  return `${variable} ${message}${shown}`;
}

/** The ConfigError (exit code 2) for the problems found. */
export function configProblems(problems: string[]): ConfigError {
  // One problem reads as one sentence on one line; several as a list.
  if (problems.length === 1) return new ConfigError(`${problems[0]!.replace(/[.]$/, '')}.`, problems);
  return new ConfigError(`The configuration has ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n${problems.map((p) => `  - ${p}`).join('\n')}`, problems);
}
