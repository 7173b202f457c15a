import type { Clock } from '../clock.js';
import { InterruptedError } from '../errors.js';

/** Rejects with InterruptedError when the signal is (or becomes) aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new InterruptedError('the gateway client was stopped before the request started');
}

const stoppedWhileWaiting = (): InterruptedError => new InterruptedError('the gateway client was stopped while waiting to retry');

/**
 * Waits `ms`, or rejects with InterruptedError as soon as the signal aborts. On a real timer,
 * or on `clock` when one is given (a test's FixedClock waits in virtual time).
 */
export function sleep(ms: number, signal?: AbortSignal, clock?: Clock): Promise<void> {
  if (clock !== undefined) {
    if (signal?.aborted) return Promise.reject(stoppedWhileWaiting());
    return clock.sleep(ms, signal).catch((error: unknown) => {
      throw signal?.aborted ? stoppedWhileWaiting() : error;
    });
  }
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(stoppedWhileWaiting());
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(stoppedWhileWaiting());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
