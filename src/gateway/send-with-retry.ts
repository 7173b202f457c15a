import type { Clock } from '../clock.js';
import { HttpError, NetworkError } from '../errors.js';
import type { Logger } from '../logger.js';
import { accountSuffix, attempts, gatewayErrorDetail, gatewaySaid, pathWithQuery, requestLabel } from './gateway-messages.js';
import type { HttpRequest, HttpResponse, HttpTransport } from './http-transport.js';
import { TransportFailure } from './http-transport.js';
import { backoffDelay, isRetryableStatus, parseRetryAfter } from './retry-policy.js';
import { sleep, throwIfAborted } from './sleep.js';

export interface RetrySettings {
  /** Retries after the first attempt. */
  retryAttempts: number;
  maxRetryAfterMs: number;
  retryBaseDelayMs: number;
  account: string | undefined;
  logger: Logger;
  signal?: AbortSignal;
  random?: () => number;
  /** Where the waits before a retry run and "now" for a Retry-After date comes from. */
  clock: Clock;
}

/**
 * Sends a request, repeating it on network errors, timeouts and transient statuses (408, 425,
 * 429, 5xx) with full-jitter backoff or the wait Retry-After asks for. Returns the first answer
 * whose status is not transient, whatever it is: the caller decides what 2xx, 3xx, 401 or 404
 * mean. Throws NetworkError or HttpError once the attempts are used up.
 */
export async function sendWithRetry(transport: HttpTransport, request: HttpRequest, settings: RetrySettings): Promise<HttpResponse> {
  const label = requestLabel(request.method, request.url);
  const where = accountSuffix(settings.account);
  const maxAttempts = settings.retryAttempts + 1;
  for (let attempt = 1; ; attempt++) {
    throwIfAborted(settings.signal);
    let delay: number;
    try {
      const response = await transport.send(request, attempt);
      if (!isRetryableStatus(response.status)) return response;
      const retryAfterHeader = response.headers['retry-after'];
      const retryAfter = parseRetryAfter(typeof retryAfterHeader === 'string' ? retryAfterHeader : undefined, settings.clock.now().getTime());
      if (retryAfter !== undefined && retryAfter > settings.maxRetryAfterMs) {
        throw new HttpError(
          `${label} answered ${response.status} and asked to wait ${Math.ceil(retryAfter / 1000)} s before retrying, more than the ${Math.round(settings.maxRetryAfterMs / 1000)} s allowed (maxRetryAfterMs); gave up after ${attempts(attempt)}${where}.`,
          response.status,
          request.method,
          request.url.pathname,
        );
      }
      if (attempt >= maxAttempts) {
        throw new HttpError(
          `${label} answered ${response.status} on every one of ${attempts(attempt)}; the gateway is failing or limiting us${gatewaySaid(gatewayErrorDetail(response.body))}${where}.`,
          response.status,
          request.method,
          request.url.pathname,
        );
      }
      delay = retryAfter ?? backoffDelay(attempt, settings.retryBaseDelayMs, settings.random);
      settings.logger.debug({ method: request.method, path: pathWithQuery(request.url), status: response.status, attempt, delayMs: delay }, 'gateway request will be retried');
    } catch (error) {
      if (!(error instanceof TransportFailure)) throw error;
      if (!error.retryable || attempt >= maxAttempts) {
        const what = error.kind === 'timeout' ? 'got no answer in time' : 'failed on the network';
        throw new NetworkError(`${label} ${what} after ${attempts(attempt)}: ${error.message}${where}.`, { cause: error });
      }
      delay = backoffDelay(attempt, settings.retryBaseDelayMs, settings.random);
      settings.logger.debug({ method: request.method, path: pathWithQuery(request.url), attempt, delayMs: delay, problem: error.message }, 'gateway request will be retried');
    }
    await sleep(delay, settings.signal, settings.clock);
  }
}
