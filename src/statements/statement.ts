/** The formats a statement file can be in, as detected from its content. */
export type StatementFormat = 'camt.053' | 'camt.052' | 'camt.054' | 'mt940' | 'mt942' | 'bai2';

/**
 * One balance of a statement: its ISO 20022 code (MT940's tags mapped to them: `:60F:` OPBD,
 * `:62F:` CLBD, `:64:` CLAV, `:65:` FWAV), amount in the currency's minor units (debit
 * negative) and date.
 */
export interface StatementBalance {
  code: string;
  amount: bigint;
  date: string;
}

/** One entry (camt `Ntry`, MT940 `:61:`): amount signed in minor units (debit negative). */
export interface StatementEntry {
  amount: bigint;
  creditDebit: 'credit' | 'debit';
  /** `BOOK`, `PDNG` or `INFO`: only booked entries move the booked balance. */
  status: string;
  bookingDate: string | null;
  valueDate: string | null;
  /** The account owner's reference (camt EndToEndId/NtryRef, MT940 reference). */
  reference: string | null;
  /** The bank's reference (camt AcctSvcrRef, MT940 `//` bank reference). */
  bankReference: string | null;
  details: string | null;
  reversal: boolean;
  /** camt `Chrgs`: the charges of the entry, signed (a charge taken is negative), kept apart from its amount; null or absent when none are named. */
  charges?: bigint | null;
}

/** camt `StmtPgntn`: which page of its statement a `Stmt` is. */
export interface StatementPage {
  number: number;
  last: boolean;
}

/**
 * A statement as read from a file: what the proofs, the import and the bank leg of
 * reconciliation need, whatever format it came in.
 */
export interface ParsedStatement {
  format: StatementFormat;
  /** Where it was read, for messages: `FILE (Stmt[2])` or `FILE (statement 101, line 4)`. */
  where: string;
  /** The account as the statement names it: an IBAN, or another identifier. */
  iban: string | null;
  accountId: string | null;
  /** camt `Stmt/Id` (`Rpt/Id`); MT940 `<:28C: statement number>/<closing date>`. */
  statementId: string;
  /** camt `ElctrncSeqNb`; MT940 the `:28C:` statement number; null when the statement has none. */
  sequence: bigint | null;
  currency: string;
  /** camt.052 intraday reports: their balances are stored, never taken as a closing balance. */
  intraday: boolean;
  /** The date of the closing booked balance (intraday: of the latest balance). */
  businessDate: string;
  fromDate: string | null;
  toDate: string | null;
  balances: StatementBalance[];
  entries: StatementEntry[];
  /** When the bank made it (camt `CreDtTm` of the statement, else of the message), as written. */
  createdAt?: string | null;
  /** A page of a statement sent in several (camt `StmtPgntn`); absent or null for a whole statement. */
  page?: StatementPage | null;
}

/** The booked balance a statement opens with: OPBD, else PRCD (the same balance by definition). */
export function openingBooked(statement: Pick<ParsedStatement, 'balances'>): bigint | null {
  return (statement.balances.find((b) => b.code === 'OPBD') ?? statement.balances.find((b) => b.code === 'PRCD'))?.amount ?? null;
}

/** The closing booked balance (CLBD), null for an intraday report. */
export function closingBooked(statement: Pick<ParsedStatement, 'balances' | 'intraday'>): bigint | null {
  if (statement.intraday) return null;
  return statement.balances.find((b) => b.code === 'CLBD')?.amount ?? null;
}
