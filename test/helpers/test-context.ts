import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock, systemClock, type Clock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/index.js';
import type { Logger } from '../../src/logger.js';
import { createSilentLogger } from '../../src/logger.js';
import type { TestDatabase } from './test-database.js';

/**
 * A context over a test database, configured only by `env` (never the developer's own
 * environment or .env), with fast retries so fault tests stay quick.
 */
export function createTestContext(
  t: TestDatabase,
  env: Record<string, string | undefined>,
  options: { logger?: Logger; clock?: Clock | FixedClock } = {},
): AppContext {
  const config = loadConfig({ env: { GATEWAY_RETRY_ATTEMPTS: '3', GATEWAY_RETRY_BASE_DELAY_MS: '20', GATEWAY_TIMEOUT_MS: '5000', ...env }, ignoreDotEnv: true });
  return {
    config,
    database: t.handle,
    logger: options.logger ?? createSilentLogger(),
    clock: options.clock ?? systemClock,
    close: async () => undefined,
  };
}

/** Environment pointing the default account at a sandbox. */
export function sandboxEnv(sandbox: { url: string; apiKey: string; apiSecret: string }, extra: Record<string, string> = {}): Record<string, string> {
  return { GATEWAY_ENV: 'sandbox', GATEWAY_SANDBOX_URL: sandbox.url, GATEWAY_API_KEY: sandbox.apiKey, GATEWAY_API_SECRET: sandbox.apiSecret, ...extra };
}

/** Writes a RECON_ACCOUNTS_FILE into a fresh temp folder and returns its path. */
export function writeAccountsFile(accounts: ReadonlyArray<{ name: string; apiKeyEnv: string; apiSecretEnv: string; environment?: 'live' | 'sandbox' }>): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'wr-accounts-')), 'accounts.json');
  writeFileSync(file, JSON.stringify({ accounts: accounts.map((a) => ({ environment: 'sandbox', ...a })) }));
  return file;
}
