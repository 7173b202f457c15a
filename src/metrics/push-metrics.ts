import { Pushgateway } from 'prom-client';
import type { Logger } from '../logger.js';
import { maskUrlPasswords } from '../logger.js';
import type { Secret } from '../secret.js';
import type { Metrics } from './metrics.js';

/**
 * Pushes a one-shot command's metrics to the Pushgateway under `job`, with pushAdd (POST): only
 * the metrics pushed now are replaced, so a failed run does not erase the last success the
 * previous push recorded. A push that fails is logged and never changes the command's outcome.
 */
export async function pushMetrics(options: { url: Secret; job: string; metrics: Metrics; logger: Logger }): Promise<boolean> {
  const gateway = new Pushgateway(options.url.reveal(), { timeout: 10_000 }, options.metrics.registry);
  try {
    await gateway.pushAdd({ jobName: options.job });
    options.logger.debug({ job: options.job }, 'metrics pushed to the Pushgateway');
    return true;
  } catch (error) {
    // The message may quote the URL; the password in it is masked, the rest of the URL is not a secret of the gateway.
    const reason = maskUrlPasswords(error instanceof Error ? error.message : String(error)).slice(0, 200);
    options.logger.warn({ job: options.job, reason }, `could not push metrics to the Pushgateway (RECON_PUSHGATEWAY_URL): ${reason}`);
    return false;
  }
}
