import type { AppContext } from '../app-context.js';
import { resultCaseKey, trackCases } from '../cases/track-cases.js';
import { caseAgeDays } from '../cases/case-model.js';
import { listCasesByIds } from '../db/reconciliation-case.repository.js';
import type { Transaction } from 'kysely';
import { allAccountNames, bankAccountNamed, businessCalendarOf, deadlinesOf, toleranceFor, type AccountConfig, type Config } from '../config/index.js';
import { booksAwaitedOn } from './awaited-deadlines.js';
import { oweBankDatesByTime, reconcileBankLeg } from './bank-leg.js';
import type { Database } from '../db/database.types.js';
import { clearOwedMarks, clearOwedWithoutSnapshot, listDatesAwaitingBooks, listOwedDates, markOwed, readOwedMarks } from '../db/reconciliation-owed.repository.js';
import { listSnapshotRows, type SnapshotRow } from '../db/balance-snapshot.repository.js';
import { booksDayScales, readBooksDay } from '../db/books-day.repository.js';
import { applyBooksProofs, booksOfDay } from './books-day.js';
import { findDailyRun, findPreviousSnapshotDate, listStoredResultCases, listStoredResultFingerprints, lockReconciliationDay, replaceResultsForDate, resultFingerprint } from '../db/reconciliation-result.repository.js';
import { DateLockedError, UsageError } from '../errors.js';
import { findLocks, lockedDateError } from '../signoff/date-lock.js';
import { lockAccountDates } from '../db/date-lock.repository.js';
import { invalidateChangedSignoffs } from '../signoff/invalidate.js';
import { latestClosedDateOf, todayOf } from './business-dates.js';
import { referenceScaleFor, unknownDecimalsAdvice } from '../money/amount-scale.js';
import { rescaleAmount } from '../money/format-amount.js';
import { reconcileAccountDay, type SnapshotBalance } from './reconcile-rules.js';
import { resultColumns, type ReconciliationResult } from './reconciliation-result.js';
import { totalOpenItems } from '../items/open-item-totals.js';
import { listOpenItems } from '../items/open-items.js';
import { raiseOverdueItems } from '../items/overdue-items.js';
import { runMatching } from '../matching/matching-service.js';
import { applyMateriality } from './materiality.js';
import { trackProblems } from '../notifications/problems/track-problems.js';
import { summarizeFolded } from '../notifications/problems/problem-outbox.js';

/**
 * The account names a command works on: all configured (the gateway's accounts and the bank
 * accounts), or the one named (which must be configured).
 */
export function resolveAccountNames(config: Config, name?: string): string[] {
  const configured = allAccountNames(config);
  if (name === undefined) return configured;
  if (!configured.includes(name)) throw new UsageError(`There is no account named "${name}". Configured accounts: ${configured.join(', ')}.`);
  return [name];
}

/**
 * Written in the reconcile's transaction once its results and cases are: what the results say to
 * people (a `books.missing` notification), so it exists exactly when the results do.
 */
export type AfterReconcileHook = (trx: Transaction<Database>, results: readonly ReconciliationResult[]) => Promise<void>;

/**
 * Reconciles the given accounts on one business date and stores the results, replacing that
 * date's earlier results in the same transaction, so a re-run is idempotent and a reader
 * never sees half a day. Concurrent runs for the same account and date wait for each other.
 * The date's owed marks read before its inputs are cleared with the write.
 */
export async function reconcileBusinessDate(
  ctx: AppContext,
  accounts: readonly string[],
  businessDate: string,
  options: { afterWrite?: AfterReconcileHook; /** false: the caller sends the date's folded summary once it reconciled every account (reconcileOwedDates). */ summarizeFolded?: boolean } = {},
): Promise<ReconciliationResult[]> {
  return ctx.database.db.transaction().execute((trx) => reconcileBusinessDateIn(ctx, trx, accounts, businessDate, options));
}

/**
 * reconcileBusinessDate inside the caller's transaction: for a change of an input (a reconciling
 * item added or cleared) whose results must follow it in the same transaction.
 */
export async function reconcileBusinessDateIn(
  ctx: AppContext,
  trx: Transaction<Database>,
  accounts: readonly string[],
  businessDate: string,
  options: { afterWrite?: AfterReconcileHook; /** false: the caller sends the date's folded summary once it reconciled every account (reconcileOwedDates). */ summarizeFolded?: boolean } = {},
): Promise<ReconciliationResult[]> {
  const computedAt = ctx.clock.now();
  const withoutBooks = booksAwaitedOn(ctx, businessDate) ? 'await' : 'miss';
  // Under READ COMMITTED two runs of one date would both delete, then both insert and collide
  // on the unique key: the second waits here until the first commits, then reads its rows.
  // Sorted, so a run over every account and a run over one never take the locks crosswise.
  for (const account of [...accounts].sort()) await lockReconciliationDay(trx, account, businessDate);
  // The inputs' lock an approval takes: a sign-off approved meanwhile is seen by findLocks below.
  await lockAccountDates(trx, accounts.map((account) => ({ account, businessDate })));
  // Read before the inputs: a change committed after this is marked again with another seq.
  const owed = await readOwedMarks(trx, accounts, businessDate);
  const all: ReconciliationResult[] = [];
  for (const account of accounts) {
    // A bank account's balance is its statement's closing balance, through the same rules.
    const bank = bankAccountNamed(ctx.config, account);
    if (bank !== undefined) {
      // Entries either side that arrived since are matched first, in this transaction.
      await runMatching(trx, ctx.config, [account], { now: computedAt });
      all.push(...(await reconcileBankLeg(ctx, trx, bank, businessDate, withoutBooks)));
      continue;
    }
    const openItems = await listOpenItems(trx, account, businessDate);
    const run = await findDailyRun(trx, account, businessDate);
    const previousDate = run === undefined ? undefined : await findPreviousSnapshotDate(trx, account, businessDate);
    const previousRun = previousDate === undefined ? undefined : await findDailyRun(trx, account, previousDate);
    const accountConfig = ctx.config.accounts.find((a) => a.name === account);
    const snapshotRows = run === undefined ? [] : await listSnapshotRows(trx, run.runId);
    const previousRows = previousRun === undefined ? [] : await listSnapshotRows(trx, previousRun.runId);
    const bookRows = await readBooksDay(trx, account, businessDate);
    const scales = new ComparisonScales(ctx.config, accountConfig, [...snapshotRows, ...previousRows, ...booksDayScales(bookRows), ...openItems]);
    const items = totalOpenItems(openItems, (currency, amount, scale) => scales.toComparison(currency, amount, scale));
    // A closing imported for the date, else the previous closing plus the entries since.
    const books = booksOfDay(bookRows, (currency, amount, scale) => scales.toComparison(currency, amount, scale));
    // A day's books come whole from one import; the newest id names it should older rows linger.
    const booksImportId = books.reduce<number | null>((id, row) => (row.importId !== null && (id === null || row.importId > id) ? row.importId : id), null);
    const results = reconcileAccountDay({
      account,
      businessDate,
      snapshot: run === undefined ? null : { runId: run.runId, balances: scales.snapshotRows(snapshotRows, account) },
      previous: previousRun === undefined ? null : { balances: scales.snapshotRows(previousRows, account) },
      books,
      withoutBooks,
      toleranceFor: (currency, balance) => toleranceFor(ctx.config, currency, scales.of(currency) ?? 0, balance),
      itemsFor: (currency) => items.get(currency),
    });
    const proved = applyBooksProofs(results, books, (currency) => scales.of(currency));
    all.push(...applyMateriality(ctx.config, proved.map((r) => ({ ...r, booksImportId, scale: r.currency === null ? null : scales.of(r.currency) }))));
  }
  // Kept with the awaited date, so the status view says no_books once it passed, whoever runs next.
  const booksDeadlineAt = new Date(businessCalendarOf(ctx.config).cutoffOf(businessDate).getTime() + deadlinesOf(ctx.config, businessDate).booksDeadlineMs);
  // A date an approved sign-off locks keeps its sealed results: the same results are left as they
  // are (and its cases untouched); different ones refuse the whole reconcile before any write.
  const sealed = new Set<string>();
  for (const lock of await findLocks(trx, accounts.map((account) => ({ account, businessDate })))) {
    const fresh = all.filter((r) => r.account === lock.account).map((r) => resultFingerprint({ ...resultColumns(r), computed_at: computedAt })).sort();
    const stored = (await listStoredResultFingerprints(trx, lock.account, businessDate)).sort();
    if (fresh.join('\n') !== stored.join('\n')) throw lockedDateError(lock, 'reconciling it again would change its sealed results', ctx.config.timezone);
    sealed.add(lock.account);
  }
  const writable = accounts.filter((a) => !sealed.has(a));
  const written = all.filter((r) => !sealed.has(r.account));
  await replaceResultsForDate(
    trx,
    writable,
    businessDate,
    written.map((r) => ({ ...resultColumns(r), computed_at: computedAt, books_deadline_at: r.status === 'awaiting_books' ? booksDeadlineAt : null })),
  );
  // Discrepancy cases: each result that did not match joins (or opens) its case, in the same transaction.
  const cases = await trackCases(trx, {
    accounts: writable,
    businessDate,
    results: written,
    at: computedAt,
    today: todayOf(ctx).date,
    toleranceFor: (currency, scale) => toleranceFor(ctx.config, currency, scale ?? referenceScaleFor(ctx.config, undefined, currency) ?? 0),
  });
  // A sealed account keeps its results, and they keep naming the cases they named.
  for (const account of sealed) {
    const stored = await listStoredResultCases(trx, account, businessDate);
    const found = new Map((await listCasesByIds(trx, [...stored.values()])).map((c) => [c.id, c]));
    for (const [currency, id] of stored) {
      const c = found.get(id);
      if (c !== undefined) cases.set(resultCaseKey({ account, currency: currency === '' ? null : currency }), { id: c.id, state: c.state, ageDays: caseAgeDays(c, todayOf(ctx).date), acceptedUntil: c.acceptedUntil });
    }
  }
  const withCases = all.map((r) => ({ ...r, case: cases.get(resultCaseKey(r)) ?? null }));
  await options.afterWrite?.(trx, withCases);
  // What people are told: new, changed, aging and cleared problems; repeats only counted (issue 45).
  await trackProblems(trx, ctx.config, writable, businessDate, withCases.filter((r) => writable.includes(r.account)), computedAt);
  if (options.summarizeFolded !== false) await summarizeFolded(trx, ctx.config, [businessDate], computedAt);
  await clearOwedMarks(trx, businessDate, owed);
  // A prepared sign-off of this date whose sealed results just changed is void, in this transaction.
  if (written.length > 0) await invalidateChangedSignoffs(ctx, trx, [businessDate]);
  // An item still open after its expected clearing date: one item.overdue and a case, the first time a date shows it.
  await raiseOverdueItems(ctx, trx, writable, businessDate);
  return withCases;
}

/**
 * Brings one account-date's stored amounts to the scale they are compared in: the currency's ISO
 * 4217 decimals (or those configured for a code ISO lacks), or the finest scale its stored rows
 * have when that is finer (a setting lowered after amounts were captured with more decimals: they
 * are compared and shown at the finer scale, never rounded). Stored rows keep the scale they were
 * captured in (whole rupiah: 0); scaling up is exact, so 1,500,000 whole rupiah (scale 0) equals
 * 150,000,000 sen of books kept in ISO scale 2. A row stored before scales were recorded (null) is
 * read in the comparison scale, as it always was.
 */
export class ComparisonScales {
  // Per currency: the scale configuration gives it now (ISO 4217 or GATEWAY_AMOUNT_DECIMALS_<CODE>), and the one compared in.
  readonly #reference = new Map<string, number | null>();
  readonly #scales = new Map<string, number | null>();

  constructor(config: Pick<Config, 'amounts'>, account: Pick<AccountConfig, 'amounts'> | undefined, rows: ReadonlyArray<{ currency: string; scale?: number | null }>) {
    for (const { currency } of rows) {
      if (!this.#reference.has(currency)) this.#reference.set(currency, referenceScaleFor(config, account, currency));
    }
    for (const [currency, reference] of this.#reference) this.#scales.set(currency, reference);
    for (const { currency, scale } of rows) {
      const current = this.#scales.get(currency) ?? null;
      if (scale !== null && scale !== undefined && (current === null || scale > current)) this.#scales.set(currency, scale);
    }
  }

  /** The comparison scale of a currency, null when neither ISO 4217, configuration nor a stored row gives one. */
  of(currency: string): number | null {
    return this.#scales.get(currency) ?? null;
  }

  /** An amount stored at `scale` (null: stored before scales were recorded, in the configured scale) at the comparison scale. */
  toComparison(currency: string, amount: bigint, scale: number | null | undefined): bigint {
    const target = this.of(currency);
    const from = scale ?? this.#reference.get(currency) ?? target;
    return target === null || from === null ? amount : rescaleAmount(amount, from, target);
  }

  /** Rows at the comparison scale; a wallet whose decimals nothing gives is flagged with what to set (`account` names it). */
  snapshotRows(rows: readonly SnapshotRow[], account: string): SnapshotBalance[] {
    return rows.map((r) => ({
      currency: r.currency,
      balance: this.toComparison(r.currency, r.balance, r.scale),
      singleBalance: r.singleBalance === null ? null : this.toComparison(r.currency, r.singleBalance, r.scale),
      unconfirmedReason: r.unconfirmedReason ?? null,
      unknownDecimals: this.of(r.currency) === null ? unknownDecimalsAdvice(account, r.currency) : null,
    }));
  }
}

/**
 * Marks owed the dates whose books deadline passed while their results still await books: the
 * only input that changes without a row changing (time). Returns how many were marked.
 */
export async function oweDatesPastBooksDeadline(ctx: AppContext, accounts: readonly string[]): Promise<number> {
  let marked = 0;
  for (const { account, businessDate } of await listDatesAwaitingBooks(ctx.database.db, accounts)) {
    if (booksAwaitedOn(ctx, businessDate)) continue;
    await markOwed(ctx.database.db, account, businessDate, 'books deadline passed');
    marked++;
  }
  return marked;
}

export interface SettledReconciliations {
  /** Account-dates reconciled. */
  reconciled: Array<{ account: string; businessDate: string }>;
  /** Account-dates that could not be reconciled, and why: still owed, the reason on their owed row. */
  failed: ReconcileFailure[];
}

export interface ReconcileFailure {
  account: string;
  businessDate: string;
  reason: string;
}

/**
 * Pays what is owed: every owed date of these accounts whose cut-off has passed is reconciled
 * (dates still open wait for their cut-off), oldest first, so a date's movement is computed
 * after the day before it. Whoever changed the inputs, this brings the results up to date.
 *
 * A failure is scoped to its account and date: each account-date is reconciled in its own
 * transaction, and one that throws (a setting its stored amounts contradict, say) stays owed
 * with the reason on its owed row (`reconciliation failed: …`), is logged and handed to
 * `onFailure` (the jobs notify), and the others go on. Only an abort stops the round.
 */
export async function reconcileOwedDates(
  ctx: AppContext,
  accounts: readonly string[],
  options: {
    afterWrite?: AfterReconcileHook;
    signal?: AbortSignal;
    only?: ReadonlyArray<{ account: string; businessDate: string }>;
    onFailure?: (failure: ReconcileFailure) => Promise<void>;
  } = {},
): Promise<SettledReconciliations> {
  const bankAccounts = accounts.filter((a) => bankAccountNamed(ctx.config, a) !== undefined);
  if (options.only === undefined) {
    await oweDatesPastBooksDeadline(ctx, accounts);
    await oweBankDatesByTime(ctx, bankAccounts);
    // Time alone makes an item overdue: a pass raises it even when no date is reconciled again.
    await ctx.database.db.transaction().execute((trx) => raiseOverdueItems(ctx, trx, accounts, latestClosedDateOf(ctx)));
  }
  // Books of a day never captured (nor missed) have nothing to be compared with: not owed. A bank
  // account's date is reconciled from whatever it has (books awaiting their statement, say).
  await clearOwedWithoutSnapshot(ctx.database.db, accounts.filter((a) => !bankAccounts.includes(a)));
  const wanted = options.only === undefined ? undefined : new Set(options.only.map((p) => `${p.account}|${p.businessDate}`));
  // Oldest first, then by account: one account-date at a time.
  const owed = (await listOwedDates(ctx.database.db, accounts, latestClosedDateOf(ctx))).filter((o) => wanted === undefined || wanted.has(`${o.account}|${o.businessDate}`));
  const reconciled: SettledReconciliations['reconciled'] = [];
  const failed: ReconcileFailure[] = [];
  for (const { account, businessDate } of owed) {
    if (options.signal?.aborted) break;
    try {
      await reconcileBusinessDate(ctx, [account], businessDate, { afterWrite: options.afterWrite, summarizeFolded: false });
      reconciled.push({ account, businessDate });
    } catch (error) {
      // A closed date whose results would change stays as sealed (and owed) until it is reopened;
      // the other account-dates are settled all the same. Not a failure: the lock is doing its job.
      if (error instanceof DateLockedError) {
        ctx.logger.warn({ businessDate, account, reason: error.message }, 'a signed-off date was not reconciled again: it is locked');
        continue;
      }
      const reason = error instanceof Error ? error.message : String(error);
      // Kept owed, with why: the next round tries again, `runs` and the status view show it.
      await markOwed(ctx.database.db, account, businessDate, `reconciliation failed: ${reason}`.slice(0, 1000));
      ctx.logger.error({ err: error, account, businessDate }, `could not reconcile account "${account}" on ${businessDate}: ${reason}; the other account-dates go on and this one stays owed`);
      const failure = { account, businessDate, reason };
      failed.push(failure);
      await options.onFailure?.(failure);
    }
  }
  // One folded summary per channel and date, once every account of the round is reconciled.
  if (reconciled.length > 0) await summarizeFolded(ctx.database.db, ctx.config, reconciled.map((r) => r.businessDate), ctx.clock.now());
  return { reconciled, failed };
}
