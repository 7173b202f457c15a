import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database.types.js';

/**
 * Whether some of `accounts` still lacks a succeeded end-of-day run of `businessDate` finished at
 * or after `finishedAfter` (the slot): the question each capture job asks to know if it was the
 * night's last. One query with the names as one array parameter, stopping at the first account
 * found pending, looked for from the end of the list: jobs are planned, and so mostly taken, in
 * the list's order, so until the night's last captures the first account looked at is pending.
 * Asked once per capture, it stays cheap however many accounts there are (the full list of
 * pending accounts, asked each time, made the night quadratic in its accounts).
 */
export async function someAccountWithoutEndOfDay(db: Kysely<Database>, accounts: readonly string[], businessDate: string, finishedAfter: Date): Promise<boolean> {
  if (accounts.length === 0) return false;
  const rows = await sql<{ account: string }>`
    select a.account from unnest(${reversedArrayLiteral(accounts)}::text[]) as a(account)
    where not exists (
      select 1 from snapshot_runs r
      where r.account = a.account and r.business_date = ${businessDate} and r.status = 'succeeded' and r.end_of_day and r.finished_at >= ${finishedAfter}
    )
    limit 1`.execute(db);
  return rows.rows.length > 0;
}

// The fleet's names are the same at every capture of a night: their array literal is made once
// (written element by element by the driver, 1,000 names cost a capture a third of a millisecond).
let lastLiteral: { accounts: readonly string[]; literal: string } | undefined;

/** `accounts` in reverse order as a PostgreSQL text[] literal, every element quoted. */
export function reversedArrayLiteral(accounts: readonly string[]): string {
  const last = lastLiteral;
  if (last && last.accounts.length === accounts.length && last.accounts.every((name, i) => name === accounts[i])) return last.literal;
  const quoted = [...accounts].reverse().map((name) => `"${name.replace(/[\\"]/g, '\\$&')}"`);
  lastLiteral = { accounts: [...accounts], literal: `{${quoted.join(',')}}` };
  return lastLiteral.literal;
}
