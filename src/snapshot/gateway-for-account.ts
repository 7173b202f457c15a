import { baseUrlFor, type AccountConfig, type Config } from '../config/index.js';
import { ConfigError } from '../errors.js';
import { createGatewayClient, type GatewayClient } from '../gateway/index.js';
import type { Logger } from '../logger.js';
import type { MetricsRecorder } from '../metrics/metrics.js';

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
    apiSecret: account.apiSecret,
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
