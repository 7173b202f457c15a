import { inspect } from 'node:util';

/**
 * Values shorter than this are not masked by value: masking every "abc" in every log line would
 * garble the logs, and real API secrets, tokens and passwords are longer.
 */
export const MIN_MASKED_LENGTH = 6;
const MASK = '[redacted]';

/** Exact secret values in use in this process, with a count of their holders. */
const maskedValues = new Map<string, number>();

/** Adds a value the logger masks wherever it appears in a line (an error body that echoes it). */
export function registerSecretValue(value: string): void {
  if (value.length < MIN_MASKED_LENGTH) return;
  maskedValues.set(value, (maskedValues.get(value) ?? 0) + 1);
}

/** Removes a value registered by `registerSecretValue` (a token of a closed client). */
export function forgetSecretValue(value: string): void {
  const count = maskedValues.get(value);
  if (count === undefined) return;
  if (count <= 1) maskedValues.delete(value);
  else maskedValues.set(value, count - 1);
}

/**
 * Forgets every registered value. A process masks the secrets of its whole life; this is for a
 * test runner that runs several test files one after another in one process, so that each file
 * starts as it would in a process of its own (a value masked for one file hides nothing in the next).
 */
export function forgetAllSecretValues(): void {
  maskedValues.clear();
}

/**
 * Replaces every registered value in `text`, as written and as JSON escapes it (a value with a
 * quote or backslash appears escaped in a JSON log line). Longest first, so a value containing
 * another is masked whole.
 */
export function maskSecretValues(text: string): string {
  if (maskedValues.size === 0) return text;
  let out = text;
  for (const value of [...maskedValues.keys()].sort((a, b) => b.length - a.length)) {
    if (out.includes(value)) out = out.replaceAll(value, MASK);
    const escaped = JSON.stringify(value).slice(1, -1);
    if (escaped !== value && out.includes(escaped)) out = out.replaceAll(escaped, MASK);
  }
  return out;
}

/**
 * Holds a credential so that printing, logging or serializing it shows `[redacted]`;
 * only `reveal()` gives the value, and only the gateway client calls it. Its value is also
 * masked by the logger wherever it appears.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
    registerSecretValue(value);
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return MASK;
  }

  toJSON(): string {
    return MASK;
  }

  [inspect.custom](): string {
    return 'Secret([redacted])';
  }
}
