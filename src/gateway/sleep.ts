import { InterruptedError } from '../errors.js';

/** Rejects with InterruptedError when the signal is (or becomes) aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new InterruptedError('the gateway client was stopped before the request started');
}

/** Waits `ms`, or rejects with InterruptedError as soon as the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new InterruptedError('the gateway client was stopped while waiting to retry'));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new InterruptedError('the gateway client was stopped while waiting to retry'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
