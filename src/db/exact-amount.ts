/** An amount column as read (pg returns numeric as a string of digits) back to an exact integer; null stays null. */
export function exactAmount(value: string | null): bigint | null {
  return value === null ? null : BigInt(value);
}
