import { afterAll } from 'vitest';
import { forgetAllSecretValues } from '../../src/secret.js';
import { keepEmbeddedDatabasesOpen, releaseAll } from './kept-embedded.js';

/**
 * Runs before each test file (vitest `setupFiles`). Test files share their worker process, one
 * after another, so each starts here from the state a process of its own would have:
 * - no secret values masked by an earlier file (one masked there would hide a leak here);
 * - the umask and the environment the worker started with: a file that changed them and did
 *   not restore them (an embedded database it never closed holds umask 077) fails the next file
 *   loudly instead of letting its tests pass on what it left.
 */
forgetAllSecretValues();

interface StartState {
  umask: number;
  env: string;
}
const globalState = globalThis as { __walletReconStartState?: StartState };
// Read by setting and putting back (process.umask() without an argument is deprecated).
const umask = process.umask(0o022);
process.umask(umask);
// VITEST_* are vitest's own, set for each file.
const env = JSON.stringify(
  Object.entries(process.env)
    .filter(([key]) => !key.startsWith('VITEST_'))
    .sort(([a], [b]) => a.localeCompare(b)),
);
const start = (globalState.__walletReconStartState ??= { umask, env });
if (umask !== start.umask) {
  throw new Error(`An earlier test file in this worker left the umask at ${umask.toString(8)} (it was ${start.umask.toString(8)}): an embedded database it did not close?`);
}
if (env !== start.env) {
  const before = new Map<string, string>(JSON.parse(start.env) as [string, string][]);
  const now = new Map(Object.entries(process.env).filter(([key]) => !key.startsWith('VITEST_')));
  const changed = [...new Set([...before.keys(), ...now.keys()])].filter((k) => before.get(k) !== now.get(k));
  throw new Error(`An earlier test file in this worker changed the environment and did not restore it: ${changed.join(', ')}.`);
}

// Embedded test databases are kept open between the commands a file runs in-process
// (kept-embedded.ts), and closed after the file.
keepEmbeddedDatabasesOpen();
afterAll(() => releaseAll(true));
