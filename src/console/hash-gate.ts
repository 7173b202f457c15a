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
 * rest wait in one queue per address, and addresses take turns (the one served longest ago first), so a real person's
 * sign-in never waits behind an attacker's burst: at most behind the one check each other busy
 * address is running. Beyond the per-address or overall limit a check is refused at once
 * (SignInBusyError) instead of queueing: the CPU time one address can take is bounded.
 */
export class HashGate {
  #running = 0;
  #waiting = 0;
  /** Waiting starts per address. */
  readonly #queues = new Map<string, Array<() => void>>();
  readonly #runningOf = new Map<string, number>();
  readonly #inUse = new Map<string, number>();
  /** When each address with checks in flight was last served (a sequence number). */
  readonly #servedAt = new Map<string, number>();
  #served = 0;

  constructor(
    readonly concurrency = HASH_CONCURRENCY,
    readonly queueLimit = HASH_QUEUE_LIMIT,
    readonly perAddressLimit = HASH_PER_ADDRESS_LIMIT,
  ) {}

  /**
   * Takes a place for one check from `address`, synchronously: undefined when there is no room
   * (the caller answers 503 before recording anything). The place is then used with `run`.
   */
  /** Whether `reserve` would find room now. */
  hasRoom(address: string): boolean {
    return (this.#inUse.get(address) ?? 0) < this.perAddressLimit && this.#waiting < this.queueLimit;
  }

  reserve(address: string): { run<T>(task: () => Promise<T>): Promise<T> } | undefined {
    const used = this.#inUse.get(address) ?? 0;
    if (!this.hasRoom(address)) return undefined;
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
          if (!this.#inUse.has(address)) this.#servedAt.delete(address);
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
      // The waiting address served longest ago (or never) goes first: one that just had a
      // check waits behind everyone else's first.
      let next: string | undefined;
      for (const [address] of this.#queues) {
        if ((this.#runningOf.get(address) ?? 0) > 0) continue;
        if (next === undefined || (this.#servedAt.get(address) ?? -1) < (this.#servedAt.get(next) ?? -1)) next = address;
      }
      if (next === undefined) return;
      const queue = this.#queues.get(next)!;
      const start = queue.shift()!;
      if (queue.length === 0) this.#queues.delete(next);
      this.#servedAt.set(next, this.#served++);
      this.#waiting--;
      this.#running++;
      this.#add(this.#runningOf, next, 1);
      start();
    }
  }
}
