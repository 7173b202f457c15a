import { formatAmount } from '../money/format-amount.js';
import { reconcileAccountDay, type BookBalance } from './reconcile-rules.js';
import type { ReconciliationResult } from './reconciliation-result.js';
import type { OpenItems } from './waterfall.js';

/** A bank account's end-of-day statement for the date, as the rules need it (amounts in the comparison scale). */
export interface BankStatementSide {
  id: number;
  closing: bigint;
  proof: 'ok' | 'roll_forward_break' | 'sequence_gap';
  /** The residual of a roll-forward break, in the comparison scale. */
  residual: bigint | null;
  /** The missing sequence numbers of a gap, as people read them (`3`, `3 to 7`). */
  missing: string | null;
  reason: string | null;
  /** Another end-of-day statement of the date that nothing orders before this one, with another closing. */
  conflict?: { statementId: string; closing: bigint } | null;
  statementId?: string;
}

export interface BankDayInput {
  account: string;
  businessDate: string;
  /** The bank account's currency: the statement's, and the one its books are compared in. */
  currency: string;
  /** The comparison scale of that currency, for the amounts in notes. */
  scale: number;
  /** The statement closing on the date, or null when none was imported. */
  statement: BankStatementSide | null;
  /** The closing booked balance of the account's previous statement, for the movement. */
  previousClosing: bigint | null;
  books: readonly BookBalance[];
  withoutBooks: 'await' | 'miss';
  /** Until the statement deadline a date without statement awaits it; after, it has none. */
  withoutStatement: 'await' | 'miss';
  /** When the statement was due, for the note of `no_statement`. */
  statementDueAt: string;
  toleranceFor: (currency: string, balance: bigint) => bigint;
  /** The reconciling items open on the date for a currency, at the comparison scale. */
  itemsFor?: (currency: string) => OpenItems | undefined;
}

/**
 * The bank leg: the closing booked balance of the statement ending on the date is the bank
 * account's balance, compared with its books by the very rules the gateway's wallets go through
 * (reconcileAccountDay: tolerance, books awaited then missed, movement). What is the bank's own:
 * a date without statement awaits it (`awaiting_statement`, no verdict) until its deadline,
 * then is `no_statement`; a statement that fails its proof is never green — its result is
 * `roll_forward_break` or `sequence_gap` whatever the books say.
 */
export function reconcileBankDay(input: BankDayInput): ReconciliationResult[] {
  const { account, businessDate, currency, statement } = input;
  const bank = { source: 'bank' as const, bankStatementId: statement?.id ?? null };
  if (statement === null) {
    const expected = input.books.find((b) => b.currency === currency)?.balance ?? null;
    const status = input.withoutStatement === 'await' ? 'awaiting_statement' : 'no_statement';
    return [
      {
        account,
        businessDate,
        currency,
        gatewayBalance: null,
        singleBalance: null,
        expectedBalance: expected,
        previousBalance: input.previousClosing,
        movement: null,
        difference: null,
        status,
        runId: null,
        note: status === 'no_statement' ? `no statement closing on ${businessDate} had been imported by ${input.statementDueAt} (RECON_STATEMENT_DEADLINE after the cut-off)` : null,
        ...bank,
      },
    ];
  }
  const results = reconcileAccountDay({
    account,
    businessDate,
    snapshot: { runId: null, balances: [{ currency, balance: statement.closing, singleBalance: null }] },
    previous: input.previousClosing === null ? null : { balances: [{ currency, balance: input.previousClosing }] },
    books: input.books,
    withoutBooks: input.withoutBooks,
    toleranceFor: input.toleranceFor,
    itemsFor: input.itemsFor,
  });
  return results.map((r) => {
    if (r.currency === currency && statement.conflict) {
      const { conflict } = statement;
      const note = `two end-of-day statements of ${businessDate} with no sequence or creation time to order them close differently: ${statement.statementId ?? `#${statement.id}`} at ${formatAmount(statement.closing, currency, input.scale)} ${currency}, ${conflict.statementId} at ${formatAmount(conflict.closing, currency, input.scale)} ${currency}`;
      return { ...r, status: 'conflicting_statements' as const, note, ...bank };
    }
    if (r.currency !== currency || statement.proof === 'ok') return { ...r, ...bank };
    const note =
      statement.proof === 'sequence_gap'
        ? statement.missing === null
          ? `statement sequence out of order: ${statement.reason}`
          : `statement sequence number${statement.missing.match(/,| to /) ? 's' : ''} ${statement.missing} missing (${statement.reason})`
        : `the statement does not roll forward: residual ${formatAmount(statement.residual ?? 0n, currency, input.scale)} ${currency} (${statement.reason})`;
    return { ...r, status: statement.proof, note, ...bank };
  });
}
