import type { ParsedStatement } from './statement.js';

export type ProofVerdict = 'ok' | 'roll_forward_break' | 'sequence_gap';

/**
 * What a statement's proof found. `residual` is in minor units (a roll-forward break); `missing`
 * lists the sequence numbers between the previous statement's and this one's (a gap).
 */
export interface StatementProof {
  proof: ProofVerdict;
  residual: bigint | null;
  missing: { from: bigint; to: bigint } | null;
  /** In words, for people: what did not add up. */
  reason: string | null;
}

/**
 * What a proof needs of a statement, all in minor units: its booked balances, the sum of its
 * booked entries and its sequence number. The same whether read from a file or from the database.
 */
export interface ProvableStatement {
  opbd: bigint | null;
  prcd: bigint | null;
  /** CLBD; for an intraday report its interim booked balance (ITBD), if any. */
  closing: bigint | null;
  booked: bigint;
  sequence: bigint | null;
  intraday: boolean;
  /** Its closing date: a sequence restarting at 1 in a new year is no gap. */
  businessDate?: string;
}

/** The figures of a parsed statement its proof needs. */
export function provableOf(statement: Pick<ParsedStatement, 'balances' | 'entries' | 'sequence' | 'intraday'> & { businessDate?: string }): ProvableStatement {
  const balance = (code: string) => statement.balances.find((b) => b.code === code)?.amount ?? null;
  return {
    opbd: balance('OPBD'),
    prcd: balance('PRCD'),
    closing: balance(statement.intraday ? 'ITBD' : 'CLBD'),
    booked: statement.entries.filter((e) => e.status === 'BOOK').reduce((sum, e) => sum + e.amount, 0n),
    sequence: statement.sequence,
    intraday: statement.intraday,
    businessDate: statement.businessDate,
  };
}

/** The statement before this one of the same account (by closing date, then sequence). */
export interface PreviousStatement {
  closing: bigint;
  sequence: bigint | null;
  businessDate: string;
}

const OK: StatementProof = { proof: 'ok', residual: null, missing: null, reason: null };

/**
 * The proof of one statement, in this order (the first failure is the verdict):
 * 1. opening booked + Σ booked entries = closing booked, exactly (residual = closing − opening − Σ);
 * 2. PRCD, where given, = OPBD (residual = OPBD − PRCD);
 * 3. the sequence number follows the previous statement's (see proveSequence);
 * 4. the previous statement's closing booked = this opening booked (residual = opening − previous closing).
 * An intraday report (camt.052) has no closing: only a check of its interim booked balance, when it has one.
 */
export function proveStatement(statement: ProvableStatement, previous: PreviousStatement | null, rules: SequenceRules = {}): StatementProof {
  const { opbd, prcd, closing, booked } = statement;
  const opening = opbd ?? prcd;
  if (opening !== null && closing !== null) {
    const residual = closing - opening - booked;
    if (residual !== 0n) return { proof: 'roll_forward_break', residual, missing: null, reason: 'opening booked + booked entries ≠ closing booked' };
  }
  if (opbd !== null && prcd !== null && opbd !== prcd) {
    return { proof: 'roll_forward_break', residual: opbd - prcd, missing: null, reason: 'opening booked (OPBD) ≠ previously closed booked (PRCD)' };
  }
  if (statement.intraday || previous === null) return OK;
  const sequenceProof = proveSequence(statement, previous, rules.sequenceRestarts);
  if (sequenceProof !== null) return sequenceProof;
  if (opening !== null && opening !== previous.closing) {
    return { proof: 'roll_forward_break', residual: opening - previous.closing, missing: null, reason: `opening booked ≠ the closing booked of ${previous.businessDate}` };
  }
  return OK;
}

/** How a bank account's statement numbers run (its `sequenceRestarts` setting). */
export interface SequenceRules {
  /**
   * `yearly`: back to 1 on the first statement of each year (another number there is a gap from 1);
   * `never`: one sequence for ever (a 1 in a new year is a backward jump); absent: a 1 on the first
   * statement of a new year is a restart, another number continues the sequence.
   */
  sequenceRestarts?: 'yearly' | 'never';
}

/**
 * The sequence number against the previous end-of-day statement's, null when it follows it: the
 * next number, or a restart at 1 on the first statement of a new year. A number skipped is a gap
 * (`missing` the numbers between); a number lower than the previous one, or the same number on
 * another statement, is a backward jump (`missing` null, the reason says which).
 */
function proveSequence(statement: ProvableStatement, previous: PreviousStatement, restarts: SequenceRules['sequenceRestarts']): StatementProof | null {
  const { sequence } = statement;
  if (sequence === null || previous.sequence === null) return null;
  const year = statement.businessDate?.slice(0, 4);
  // A later year than the previous statement's; a statement without a date begins none (NaN).
  const newYear = Number(year) > Number(previous.businessDate.slice(0, 4));
  const gap = (from: bigint, to: bigint, reason: string): StatementProof => ({ proof: 'sequence_gap', residual: null, missing: { from, to }, reason });
  if (newYear && restarts !== 'never' && sequence === 1n) return null;
  if (newYear && restarts === 'yearly') return gap(1n, sequence - 1n, `the numbers restart at 1 each year (sequenceRestarts: yearly) and this is the first statement of ${year}`);
  if (sequence > previous.sequence + 1n) return gap(previous.sequence + 1n, sequence - 1n, `the previous statement, of ${previous.businessDate}, is number ${previous.sequence}`);
  if (sequence <= previous.sequence) {
    const what = sequence === previous.sequence ? `repeats the number of the previous statement, of ${previous.businessDate}` : `comes after number ${previous.sequence}, of ${previous.businessDate}: a backward jump`;
    const restart = newYear && sequence === 1n ? ' (sequenceRestarts: never)' : '';
    return { proof: 'sequence_gap', residual: null, missing: null, reason: `number ${sequence} ${what}${restart}` };
  }
  return null;
}

/** The missing sequence numbers for people and JSON: `3`, `3, 4` or `3 to 7` (a gap of thousands is one range). */
export function describeMissing(missing: { from: bigint; to: bigint }): string {
  const { from, to } = missing;
  return from === to ? `${from}` : to === from + 1n ? `${from}, ${to}` : `${from} to ${to}`;
}
