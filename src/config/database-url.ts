import { registerSecretValue, Secret } from '../secret.js';

/**
 * The connection string, with DATABASE_PASSWORD put into it when given separately (so one Docker
 * secret serves PostgreSQL and wallet-recon). Its password is masked in logs by value too.
 */
export function resolveDatabaseUrl(url: string | undefined, password: string | undefined, problems: string[]): Secret | undefined {
  if (url === undefined) {
    if (password !== undefined) problems.push('DATABASE_PASSWORD is set but DATABASE_URL is not; give DATABASE_URL without its password, e.g. postgres://recon@db:5432/recon');
    return undefined;
  }
  const parsed = new URL(url);
  if (password !== undefined) {
    if (parsed.password !== '') {
      problems.push('DATABASE_URL already contains a password and DATABASE_PASSWORD is set too; keep the password in one place only');
      return undefined;
    }
    if (parsed.username === '') {
      problems.push('DATABASE_PASSWORD is set but DATABASE_URL names no user; write it as postgres://USER@host:port/database');
      return undefined;
    }
    parsed.password = encodeURIComponent(password);
  }
  if (parsed.password !== '') registerSecretValue(decodeURIComponent(parsed.password));
  return new Secret(password === undefined ? url : parsed.href);
}
