import type { Transaction } from 'kysely';
import type { AppContext } from '../app-context.js';
import { bankBooksOn, toleranceFor, type BankAccountConfig } from '../config/index.js';
import { findClosingStatement, findPreviousClosing } from '../db/bank-statement.repository.js';
import type { Database } from '../db/database.types.js';
import { readBooksDay } from '../db/books-day.repository.js';
import { listDatesWithStatus, markOwed } from '../db/reconciliation-owed.repository.js';
import { currencyDecimals, rescaleAmount } from '../money/format-amount.js';
import { statementAwaitedOn, statementDueAt } from './awaited-deadlines.js';
import { reconcileBankDay } from './bank-rules.js';
import { applyBooksProofs, booksOfDay } from './books-day.js';
import { totalOpenItems } from '../items/open-item-totals.js';
import { listOpenItems } from '../items/open-items.js';
import type { ReconciliationResult } from './reconciliation-result.js';

/** Amounts stored in another scale, brought to the currency's ISO 4217 decimals (exact: never fewer digits). */
function toScale(amount: bigint, from: number | null | undefined, to: number): bigint {
  return from === null || from === undefined || from === to ? amount : rescaleAmount(amount, from, to);
}

/**
 * One bank account's results for a date, read inside the reconcile's transaction: its
 * statement closing on the date (if imported), the previous closing, and its books, through
 * the bank rules (which are the gateway's rules plus the statement's own states).
 */
export async function reconcileBankLeg(
  ctx: AppContext,
  trx: Transaction<Database>,
  bank: BankAccountConfig,
  businessDate: string,
  withoutBooks: 'await' | 'miss',
): Promise<ReconciliationResult[]> {
  const scale = currencyDecimals(bank.currency)!;
  const statement = await findClosingStatement(trx, bank.name, businessDate);
  // A day the bank does not book (its calendar) has no statement to await nor miss: no bank
  // result at all; the next statement's opening is proved against the closing before it.
  if (statement === undefined && !bankBooksOn(bank.calendar, businessDate)) return [];
  const previous = await findPreviousClosing(trx, bank.name, businessDate);
  // A closing imported for the date, else the previous closing plus the entries since.
  const books = booksOfDay(await readBooksDay(trx, bank.name, businessDate), (currency, amount, from) => toScale(amount, from, currencyDecimals(currency) ?? from ?? 0));
  const items = totalOpenItems(await listOpenItems(trx, bank.name, businessDate, bank), (currency, amount, from) => toScale(amount, from, currencyDecimals(currency) ?? from));
  const booksImportId = books.reduce<number | null>((id, row) => (row.importId !== null && (id === null || row.importId > id) ? row.importId : id), null);
  const results = reconcileBankDay({
    account: bank.name,
    businessDate,
    currency: bank.currency,
    scale,
    statement:
      statement === undefined
        ? null
        : {
            id: statement.id,
            closing: toScale(statement.closing, statement.scale, scale),
            proof: statement.proof,
            residual: statement.proofResidual === null ? null : toScale(statement.proofResidual, statement.scale, scale),
            missing: statement.proofMissing,
            reason: statement.proofReason,
            statementId: statement.statementId,
            conflict: statement.conflict === null ? null : { statementId: statement.conflict.statementId, closing: toScale(statement.conflict.closing, statement.scale, scale) },
          },
    previousClosing: previous === undefined ? null : toScale(previous.closing, previous.scale, scale),
    books,
    withoutBooks,
    withoutStatement: statementAwaitedOn(ctx, businessDate) ? 'await' : 'miss',
    statementDueAt: statementDueAt(ctx, businessDate).toISOString(),
    toleranceFor: (currency, balance) => toleranceFor(ctx.config, currency, currencyDecimals(currency) ?? 0, balance),
    itemsFor: (currency) => items.get(currency),
  });
  return applyBooksProofs(results, books, (currency) => currencyDecimals(currency) ?? scale).map((r) => ({ ...r, booksImportId, scale: r.currency === null ? null : (currencyDecimals(r.currency) ?? scale) }));
}

/**
 * Marks owed the bank dates awaiting their statement whose deadline passed: the only input of
 * the bank leg that changes without a row changing (time). They become `no_statement`. A date is
 * followed once it has results — its books arrived, or it was reconciled by name — never merely
 * because a day passed: banks send no statement for days they are closed.
 */
export async function oweBankDatesByTime(ctx: AppContext, bankAccounts: readonly string[]): Promise<number> {
  if (bankAccounts.length === 0) return 0;
  let marked = 0;
  for (const { account, businessDate } of await listDatesWithStatus(ctx.database.db, bankAccounts, 'awaiting_statement')) {
    if (statementAwaitedOn(ctx, businessDate)) continue;
    await markOwed(ctx.database.db, account, businessDate, 'statement deadline passed');
    marked++;
  }
  return marked;
}
