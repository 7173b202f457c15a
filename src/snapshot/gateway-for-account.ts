import { baseUrlFor, readSecretFile, type AccountConfig, type Config } from '../config/index.js';
import { ConfigError } from '../errors.js';
import { createGatewayClient, type GatewayClient } from '../gateway/index.js';
import type { Logger } from '../logger.js';
import type { MetricsRecorder } from '../metrics/metrics.js';
import { Secret } from '../secret.js';

/**
 * The account's API secret as it is now: a secret given as a file is read again (a worker
 * started before the operator corrected the file uses the corrected one at its next attempt);
 * one given directly is the value read at start. Throws a ConfigError naming the file variable
 * when the file can no longer be read.
 */
function currentSecret(account: AccountConfig, loaded: Secret): Secret {
  if (account.apiSecretFile === undefined) return loaded;
  const read = readSecretFile(account.apiSecretEnv, account.apiSecretFile, process.cwd());
  if ('problem' in read) throw new ConfigError(`Account "${account.name}": ${read.problem}.`, [read.problem]);
  return read.value === loaded.reveal() ? loaded : new Secret(read.value);
}

/** Builds the gateway client for one account from the validated configuration. */
export function createGatewayForAccount(
  config: Config,
  account: AccountConfig,
  logger: Logger,
  signal?: AbortSignal,
  metrics?: Pick<MetricsRecorder, 'recordGatewayRequest'>,
): GatewayClient {
  if (!account.apiKey || !account.apiSecret) {
    throw new ConfigError(`Account "${account.name}" has no credentials: set ${account.apiKeyEnv} and ${account.apiSecretEnv}.`);
  }
  const g = config.gateway;
  return createGatewayClient({
    baseUrl: baseUrlFor(config, account),
    apiKey: account.apiKey,
    apiSecret: currentSecret(account, account.apiSecret),
    authScheme: g.authScheme,
    timeoutMs: g.timeoutMs,
    concurrency: g.concurrency,
    perPage: g.perPage,
    maxRps: g.maxRps,
    retryAttempts: g.retryAttempts,
    maxRetryAfterMs: g.maxRetryAfterMs,
    retryBaseDelayMs: g.retryBaseDelayMs,
    maxPages: g.maxPages,
    logger,
    account: account.name,
    credentialNames: { apiKey: account.apiKeyEnv, apiSecret: account.apiSecretEnv },
    signal,
    onAttempt: metrics === undefined ? undefined : (path, status) => metrics.recordGatewayRequest(path, status),
  });
}
