import * as z from 'zod';

/**
 * A whole number of `unit` from `min` to `max`, refused in the operator's words
 * ("must be a whole number of milliseconds from 1 to 600000") rather than the validator's.
 */
export const wholeNumber = (unit: string, min: number, max: number) =>
  z.string().transform((v, ctx) => {
    const n = /^\s*\d+\s*$/.test(v) ? Number(v) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      ctx.addIssue({ code: 'custom', message: `must be a whole number of ${unit} from ${min} to ${max}` });
      return z.NEVER;
    }
    return n;
  });

export const positiveInt = (max: number, unit: string) => wholeNumber(unit, 1, max);

/** A yes/no switch written as 1/0, true/false, yes/no or on/off. */
export const trueOrFalse = (fallback: 'true' | 'false') =>
  z
    .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'], { error: 'must be true or false' })
    .default(fallback)
    .transform((v) => ['1', 'true', 'yes', 'on'].includes(v));
