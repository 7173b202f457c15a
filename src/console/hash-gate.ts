import { ReconError } from '../errors.js';

/** Every password check is slow on purpose (scrypt); the console runs at most this many at once. */
export const HASH_CONCURRENCY = 2;
/** At most this many checks wait for a turn, over all addresses… */
export const HASH_QUEUE_LIMIT = 32;
/** …and at most this many (running or waiting) per client address: one address cannot fill the queue. */
export const HASH_PER_ADDRESS_LIMIT = 5;
/** What a refused client is told to wait (Retry-After, seconds): about one check's time. */
export const HASH_RETRY_AFTER_SECONDS = 1;

/** The console is checking as many passwords as it will at once: try again in a moment (HTTP 503). */
export class SignInBusyError extends ReconError {
  override readonly code = 'E_SIGN_IN_BUSY';
  readonly retryAfterSeconds = HASH_RETRY_AFTER_SECONDS;
  constructor() {
    super(`The console is busy checking other sign-ins: try again in ${HASH_RETRY_AFTER_SECONDS} second${HASH_RETRY_AFTER_SECONDS === 1 ? '' : 's'}.`);
  }
}

/**
 * Bounded, fair password hashing. A few checks run at once, at most one per client address; the
 * rest wait in one queue per address, and addresses take turns (round robin), so a real person's
 * sign-in never waits behind an attacker's burst: at most behind the one check each other busy
 * address is running. Beyond the per-address or overall limit a check is refused at once
 * (SignInBusyError) instead of queueing: the CPU time one address can take is bounded.
 */
export class HashGate {
  #running = 0;
  #waiting = 0;
  /** Waiting starts per address; Map order is the turn order (a served address goes to the back). */
  readonly #queues = new Map<string, Array<() => void>>();
  readonly #runningOf = new Map<string, number>();
  readonly #inUse = new Map<string, number>();

  constructor(
    readonly concurrency = HASH_CONCURRENCY,
    readonly queueLimit = HASH_QUEUE_LIMIT,
    readonly perAddressLimit = HASH_PER_ADDRESS_LIMIT,
  ) {}

  /**
   * Takes a place for one check from `address`, synchronously: undefined when there is no room
   * (the caller answers 503 before recording anything). The place is then used with `run`.
   */
  reserve(address: string): { run<T>(task: () => Promise<T>): Promise<T> } | undefined {
    const used = this.#inUse.get(address) ?? 0;
    if (used >= this.perAddressLimit || this.#waiting >= this.queueLimit) return undefined;
    this.#inUse.set(address, used + 1);
    this.#waiting++;
    const turn = new Promise<void>((resolve) => {
      const queue = this.#queues.get(address) ?? [];
      queue.push(resolve);
      this.#queues.set(address, queue);
    });
    this.#pump();
    return {
      run: async <T>(task: () => Promise<T>): Promise<T> => {
        await turn;
        try {
          return await task();
        } finally {
          this.#running--;
          this.#add(this.#runningOf, address, -1);
          this.#add(this.#inUse, address, -1);
          this.#pump();
        }
      },
    };
  }

  #add(map: Map<string, number>, key: string, by: number): void {
    const value = (map.get(key) ?? 0) + by;
    if (value === 0) map.delete(key);
    else map.set(key, value);
  }

  #pump(): void {
    while (this.#running < this.concurrency) {
      let started = false;
      for (const [address, queue] of this.#queues) {
        if ((this.#runningOf.get(address) ?? 0) > 0) continue;
        const start = queue.shift()!;
        this.#queues.delete(address);
        if (queue.length > 0) this.#queues.set(address, queue);
        this.#waiting--;
        this.#running++;
        this.#add(this.#runningOf, address, 1);
        start();
        started = true;
        break;
      }
      if (!started) return;
    }
  }
}
