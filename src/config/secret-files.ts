import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Config } from './config-types.js';

/**
 * Environment variables holding secrets. Each may instead be given as `<NAME>_FILE`, the path of
 * a file holding the value (Docker and Kubernetes secrets); values are never echoed in a message
 * and are removed from the process environment once read. The accounts file's `apiSecretEnv`
 * variables get the same treatment. A new secret variable only needs its name added here.
 */
export const SECRET_VARIABLES: readonly string[] = [
  'GATEWAY_API_SECRET',
  'DATABASE_URL',
  'DATABASE_PASSWORD',
  // Notification and metrics endpoints: a webhook or Slack URL is itself a credential, an SMTP or
  // Pushgateway URL may carry a password.
  'RECON_WEBHOOK_URL',
  'RECON_WEBHOOK_SECRET',
  'RECON_SLACK_WEBHOOK_URL',
  'RECON_SMTP_URL',
  'RECON_PUSHGATEWAY_URL',
  // The merchant's ledger database, read for the books.
  'RECON_BOOKS_DATABASE_URL',
  // The console's single sign-on client secret.
  'RECON_OIDC_CLIENT_SECRET',
];

/** A secret file holds one value; anything larger is the wrong file. */
const MAX_SECRET_FILE_BYTES = 64 * 1024;

/**
 * Fills each secret variable given as `<NAME>_FILE` from its file, in `env` (a private copy).
 * Returns the problems: both forms set, a file that cannot be read, is empty or is too large.
 * Only the path is ever quoted, never the content.
 */
export function resolveSecretFiles(env: Record<string, string | undefined>, names: Iterable<string>, cwd: string): string[] {
  const problems: string[] = [];
  for (const name of new Set(names)) {
    const fileVariable = `${name}_FILE`;
    const file = env[fileVariable];
    if (file === undefined) continue;
    if (env[name] !== undefined) {
      problems.push(`${name} and ${fileVariable} are both set; set only one of them (the file is the safer place for a secret)`);
      continue;
    }
    const read = readSecretFile(name, file, cwd);
    if ('problem' in read) problems.push(read.problem);
    else env[name] = read.value;
  }
  return problems;
}

/**
 * Reads the secret of variable `name` from `file` (relative to `cwd`): its value, or why it
 * cannot be used (quoting the path only). Also called again before each use of a gateway
 * secret given as a file, so a corrected file counts at the next attempt, without a restart.
 */
export function readSecretFile(name: string, file: string, cwd: string): { value: string } | { problem: string } {
  const where = `${name}_FILE (${file})`;
  try {
    const fullPath = path.resolve(cwd, file);
    if (statSync(fullPath).size > MAX_SECRET_FILE_BYTES) return { problem: `${where} is larger than 64 KiB; it should hold only the value of ${name}` };
    // Files written by `echo` or an editor end in a line break that is not part of the secret.
    const value = readFileSync(fullPath, 'utf8').replace(/[\r\n]+$/, '');
    return value === '' ? { problem: `${where} is empty; it should hold the value of ${name}` } : { value };
  } catch (error) {
    return { problem: `${where} could not be read: ${describeFileError(error)}` };
  }
}

function describeFileError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'there is no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied (the file must be readable by the user wallet-recon runs as)';
  if (code === 'EISDIR') return 'it is a folder, not a file';
  return code ?? 'unknown error';
}

/**
 * Removes the configuration's secret variables from the environment (by default the process's),
 * so that a diagnostic report or a child process does not carry them. Call once the
 * configuration is loaded; later loads must read from a copy taken before (`copyEnvironment`).
 */
export function removeSecretsFromEnvironment(config: Config, env: NodeJS.ProcessEnv = process.env): void {
  for (const name of config.secretVariables) delete env[name];
}

/** A private copy of the environment (by default the process's), to load the configuration from. */
export function copyEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env };
}
