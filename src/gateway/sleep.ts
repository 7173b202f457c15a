import { systemClock, type Clock } from '../clock.js';
import { InterruptedError } from '../errors.js';

/** Rejects with InterruptedError when the signal is (or becomes) aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new InterruptedError('the gateway client was stopped before the request started');
}

const stoppedWhileWaiting = (): InterruptedError => new InterruptedError('the gateway client was stopped while waiting to retry');

/**
 * Waits `ms` on `clock` (real time unless a test passes its FixedClock, which waits in virtual
 * time), or rejects with InterruptedError as soon as the signal aborts.
 */
export function sleep(ms: number, signal?: AbortSignal, clock: Clock = systemClock): Promise<void> {
  if (signal?.aborted) return Promise.reject(stoppedWhileWaiting());
  return clock.sleep(ms, signal).catch((error: unknown) => {
    throw signal?.aborted ? stoppedWhileWaiting() : error;
  });
}
