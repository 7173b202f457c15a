import { addDays } from '../business-date/zoned-time.js';
import type { SampleStatements } from './sample-statements.js';

/**
 * A BAI2 file with one group per day (as-of date the day), one account in each: an 03 record
 * with the opening and closing ledger (010, 015) and available (040, 045) balances and the
 * day's total credits and debits (100, 400), a 16 record per entry (195 incoming wire, 495
 * outgoing wire), and every trailer's control total and record count as the specification
 * defines them. Amounts in the currency's minor units; `accountNumber` is the 03 record's
 * account (a bank account's `accountId`).
 */
export function writeBai2(sample: SampleStatements, accountNumber: string, fileId = '1'): string {
  const yymmdd = (date: string) => date.slice(2).replaceAll('-', '');
  const first = sample.days[0]?.date ?? '2026-01-01';
  const lines: string[] = [`01,BANKUS33,RECEIVER,${yymmdd(addDays(sample.days.at(-1)?.date ?? first, 1))},0600,${fileId},,,2/`];
  let fileTotal = 0n;
  let balance = sample.opening;
  for (const day of sample.days) {
    const opening = balance;
    const closing = day.closingOverride ?? opening + day.entries.reduce((a, b) => a + b, 0n);
    balance = closing;
    const credits = day.entries.filter((e) => e >= 0n);
    const debits = day.entries.filter((e) => e < 0n).map((e) => -e);
    const creditTotal = credits.reduce((a, b) => a + b, 0n);
    const debitTotal = debits.reduce((a, b) => a + b, 0n);
    const signed = (v: bigint) => (v < 0n ? `-${-v}` : `+${v}`);
    const account = [
      `03,${accountNumber},${sample.currency},010,${signed(opening)},,,015,${signed(closing)},,/`,
      `88,040,${signed(opening)},,,045,${signed(closing)},,/`,
      `88,100,${creditTotal},${credits.length},,400,${debitTotal},${debits.length},/`,
      ...day.entries.map((amount, i) => `16,${amount < 0n ? '495' : '195'},${amount < 0n ? -amount : amount},0,B${day.sequence}-${i + 1},${day.sequence}-${i + 1},entry ${i + 1} of statement ${day.sequence}/`),
    ];
    const accountTotal = opening + closing + opening + closing + creditTotal + debitTotal + day.entries.reduce((a, b) => a + (b < 0n ? -b : b), 0n);
    account.push(`49,${accountTotal},${account.length + 1}/`);
    lines.push(`02,RECEIVER,BANKUS33,1,${yymmdd(day.date)},2400,${sample.currency},2/`, ...account, `98,${accountTotal},1,${account.length + 2}/`);
    fileTotal += accountTotal;
  }
  lines.push(`99,${fileTotal},${sample.days.length},${lines.length + 1}/`);
  return `${lines.join('\n')}\n`;
}
