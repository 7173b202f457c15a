import { configProblems } from './config-problems.js';
import { resolveSecretFiles } from './secret-files.js';

/** The secret the sandbox emulator expects in Secret-Key (or SANDBOX_API_SECRET_FILE). */
export const SANDBOX_SECRET_VARIABLE = 'SANDBOX_API_SECRET';

/**
 * The secret the sandbox emulator expects, from SANDBOX_API_SECRET or SANDBOX_API_SECRET_FILE
 * (never from the command line, where `ps` shows it); undefined when neither is set.
 * Throws ConfigError for an unreadable file or both forms set.
 */
export function loadSandboxSecret(options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): string | undefined {
  const source = options.env ?? process.env;
  const env: Record<string, string | undefined> = { ...source };
  for (const key of Object.keys(env)) if (env[key] === '') env[key] = undefined;
  const problems = resolveSecretFiles(env, [SANDBOX_SECRET_VARIABLE], options.cwd ?? process.cwd());
  if (problems.length > 0) throw configProblems(problems);
  delete source[SANDBOX_SECRET_VARIABLE];
  return env[SANDBOX_SECRET_VARIABLE];
}
