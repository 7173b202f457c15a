import { inspect } from 'node:util';

/**
 * Holds a credential so that printing, logging or serializing it shows `[redacted]`;
 * only `reveal()` gives the value, and only the gateway client calls it.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return '[redacted]';
  }

  toJSON(): string {
    return '[redacted]';
  }

  [inspect.custom](): string {
    return 'Secret([redacted])';
  }
}
