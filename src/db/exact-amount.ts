/** An amount column as read (pg returns numeric as a string of digits) back to an exact integer; null stays null. */
export function exactAmount(value: string | null): bigint | null {
  return value === null ? null : BigInt(value);
}

/** An exact amount as a string of digits (null stays null): for JSON, CSV, tables and SQL parameters. */
export function amountText(value: bigint | null): string | null {
  return value === null ? null : value.toString();
}
