/**
 * Maps `items` through `fn` with at most `limit` calls in flight; results keep input order.
 * On the first failure no new call starts, the running ones are awaited (so nothing is left
 * dangling), then that first error is thrown.
 */
export async function mapWithConcurrency<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index]!, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.error;
  return results;
}

/** Runs tasks with at most `limit` in flight, in the order they were given; `close()` refuses new ones. */
export interface Limiter {
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Tasks given after this, and those still waiting for a turn, are refused with `reason`. */
  close(reason: unknown): void;
  /** Resolves once fewer than `count` tasks wait for a turn (at once if already so). */
  whenWaitingBelow(count: number): Promise<void>;
}

/** A limiter for tasks that arrive over time (the single reads of a listing's pages as they come). */
export function createLimiter(limit: number): Limiter {
  let running = 0;
  let closed: { reason: unknown } | undefined;
  const waiting: Array<{ start: () => void; refuse: (reason: unknown) => void }> = [];
  const watchers: Array<{ count: number; resolve: () => void }> = [];
  const startNext = () => {
    while (running < limit && waiting.length > 0) waiting.shift()!.start();
    for (const watcher of watchers.filter((w) => waiting.length < w.count)) {
      watchers.splice(watchers.indexOf(watcher), 1);
      watcher.resolve();
    }
  };
  return {
    run<T>(task: () => Promise<T>): Promise<T> {
      if (closed) return Promise.reject(closed.reason);
      return new Promise<T>((resolve, reject) => {
        waiting.push({
          start: () => {
            running++;
            task()
              .then(resolve, reject)
              .finally(() => {
                running--;
                startNext();
              });
          },
          refuse: reject,
        });
        startNext();
      });
    },
    close(reason) {
      closed ??= { reason };
      for (const task of waiting.splice(0)) task.refuse(reason);
      startNext();
    },
    whenWaitingBelow(count) {
      if (waiting.length < count) return Promise.resolve();
      return new Promise<void>((resolve) => watchers.push({ count, resolve }));
    },
  };
}
