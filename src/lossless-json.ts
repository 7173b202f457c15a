import { isLosslessNumber, LosslessNumber, parse, parseLosslessNumber } from 'lossless-json';

export { isLosslessNumber, LosslessNumber };

/** JSON integer syntax: what a balance must look like in the body, digit for digit. */
const INTEGER_TEXT = /^-?(0|[1-9]\d*)$/;

/**
 * Parses JSON keeping every number as a LosslessNumber (its exact source text), so a balance
 * beyond 2^53 stays exact and `1.0` can still be told apart from `1`. Throws SyntaxError.
 */
export function parseJsonLosslessly(text: string): unknown {
  return parse(text, undefined, parseLosslessNumber);
}

/** Whether a parsed value is a JSON number written as an integer (no fraction, no exponent). */
export function isJsonInteger(value: unknown): value is LosslessNumber {
  return isLosslessNumber(value) && INTEGER_TEXT.test(value.value);
}

/** What kind of JSON value this is, in words, for messages that must not echo the value itself. */
export function describeJsonValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (isLosslessNumber(value)) {
    if (INTEGER_TEXT.test(value.value)) return 'an integer';
    if (/[eE]/.test(value.value)) return 'a number in exponent notation';
    return 'a decimal number';
  }
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'boolean':
      return 'a boolean';
    case 'number':
    case 'bigint':
      return 'a number';
    default:
      return 'an object';
  }
}
