import type { Transaction } from 'kysely';
import type { AppContext } from '../app-context.js';
import { SYSTEM_ACTOR } from '../cases/case-model.js';
import { allAccountNames, bankAccountNamed } from '../config/index.js';
import type { Database, ItemKind } from '../db/database.types.js';
import { insertEvent, listCasesOfAccount, lockAccountCases, updateCase } from '../db/reconciliation-case.repository.js';
import { clearItem, countOverdueOpen, findItem, insertItem, listEntryItemsOpenOn, listItems, listItemsOpenOn, listResultDatesFrom, type NewReconcilingItem, type ReconcilingItem } from '../db/reconciling-item.repository.js';
import { UsageError } from '../errors.js';
import { referenceScaleFor } from '../money/amount-scale.js';
import { parseMajorAmount, toMajorUnits } from '../money/format-amount.js';
import { parseBusinessDate, todayOf } from '../reconciliation/business-dates.js';
import { reconcileBusinessDateIn, resolveAccountNames } from '../reconciliation/reconciliation-service.js';
import type { ReconciliationResult } from '../reconciliation/reconciliation-result.js';
import { businessDaysBetween, itemAgeBucketOf, itemStateOn, MANUAL_ITEM_KINDS, type ItemStateOnDate } from './item-rules.js';
import { describeItem } from './open-item-totals.js';

export interface AddItemRequest {
  account: string;
  currency: string;
  /** The business date it is open from, YYYY-MM-DD. */
  date: string;
  kind: string;
  /** Signed major units as people write them: `123.45`, `-2.50`. */
  amount: string;
  expectedClear?: string;
  note?: string;
  evidence?: string;
  actor: string;
  /** More writes that belong with the addition (the console's audit row), in its transaction: both or neither. */
  alsoInTransaction?: (trx: Transaction<Database>, id: number) => Promise<void>;
}

/** What each field of an item is called where it came from: the options of `items add`, or a file's columns. */
export interface ItemFieldNames {
  account: string;
  currency: string;
  date: string;
  kind: string;
  amount: string;
  expectedClear: string;
  note: string;
}

const OPTION_NAMES: ItemFieldNames = { account: '--account', currency: '--currency', date: '--date', kind: '--kind', amount: '--amount', expectedClear: '--expected-clear', note: '--note' };

/** Reads a signed major-unit amount at `decimals` places exactly, or says what is wrong with it. */
export function parseSignedMajor(text: string, decimals: number, currency: string, field = '--amount'): bigint {
  const trimmed = text.trim();
  const negative = trimmed.startsWith('-');
  const minor = parseMajorAmount(negative || trimmed.startsWith('+') ? trimmed.slice(1) : trimmed, decimals);
  if (minor === undefined) throw new UsageError(`${field} ${JSON.stringify(text)} is not an amount of ${currency}: write a signed decimal in major units with at most ${decimals} decimal${decimals === 1 ? '' : 's'}, such as 123.45 or -2.50.`);
  if (minor === 0n) throw new UsageError(`${field} is zero: an item of nothing explains nothing.`);
  return negative ? -minor : minor;
}

/** Checks an item as people give it (options or a file's line) and returns it as stored; a UsageError names the field. */
export function checkItemRequest(ctx: AppContext, request: AddItemRequest, names: ItemFieldNames = OPTION_NAMES): NewReconcilingItem {
  if (!allAccountNames(ctx.config).includes(request.account)) throw new UsageError(`${names.account} ${JSON.stringify(request.account)} is no configured account (configured: ${allAccountNames(ctx.config).join(', ')}).`);
  const account = request.account;
  const today = todayOf(ctx);
  const date = parseBusinessDate(request.date, names.date, today);
  const currency = request.currency;
  if (!/^[A-Z]{3}$/.test(currency)) throw new UsageError(`${names.currency} ${JSON.stringify(currency)} is not a currency code: use three capital letters such as EUR.`);
  const bank = bankAccountNamed(ctx.config, account);
  if (bank !== undefined && bank.currency !== currency) throw new UsageError(`Bank account "${account}" is kept in ${bank.currency}, not ${currency}: an item of it is in ${bank.currency}.`);
  if (!MANUAL_ITEM_KINDS.includes(request.kind as ItemKind)) {
    throw new UsageError(`${names.kind} ${JSON.stringify(request.kind)} is not a kind of item people add: use one of ${MANUAL_ITEM_KINDS.join(', ')} (outstanding and unrecorded items come from unmatched entries).`);
  }
  const expectedClear = request.expectedClear === undefined ? null : parseBusinessDate(request.expectedClear, names.expectedClear);
  if (expectedClear !== null && expectedClear < date) throw new UsageError(`${names.expectedClear} ${expectedClear} is before the item's date ${date}.`);
  const note = request.note?.trim();
  if (!note) throw new UsageError(`${names.note} is required: say what the item is (a payout in transit, its reference, who follows it).`);
  const accountConfig = ctx.config.accounts.find((a) => a.name === account);
  const scale = referenceScaleFor(ctx.config, accountConfig, currency);
  if (scale === null) throw new UsageError(`The decimals of ${currency} are not known: set GATEWAY_AMOUNT_DECIMALS_${currency} first.`);
  const amount = parseSignedMajor(request.amount, scale, currency, names.amount);
  return {
    account,
    source: bank === undefined ? 'gateway' : 'bank',
    currency,
    kind: request.kind as ItemKind,
    amount,
    scale,
    openedOn: date,
    expectedClear,
    note,
    evidence: request.evidence?.trim() || null,
    createdBy: request.actor,
    createdAt: ctx.clock.now(),
  };
}

/**
 * Adds a reconciling item and, in the same transaction, reconciles again every date of its
 * account from the item's date on that has results: the item explains them from now on. A date
 * signed off whose results would change refuses the whole addition (nothing is written).
 */
export async function addItem(ctx: AppContext, request: AddItemRequest): Promise<{ id: number; results: ReconciliationResult[] }> {
  resolveAccountNames(ctx.config, request.account);
  const item = checkItemRequest(ctx, request);
  return ctx.database.db.transaction().execute(async (trx) => {
    const id = await insertItem(trx, item);
    const results = await reconcileFrom(ctx, trx, item.account, item.openedOn);
    await request.alsoInTransaction?.(trx, id);
    return { id, results };
  });
}

/**
 * Adds several items in one transaction (`items import`): every one is checked before any is
 * written, then each account is reconciled again from its earliest item's date. A signed-off date
 * whose results would change refuses them all.
 */
export async function addItems(ctx: AppContext, items: readonly NewReconcilingItem[]): Promise<{ ids: number[]; results: ReconciliationResult[] }> {
  return ctx.database.db.transaction().execute(async (trx) => {
    const ids: number[] = [];
    for (const item of items) ids.push(await insertItem(trx, item));
    const earliest = new Map<string, string>();
    for (const i of items) if ((earliest.get(i.account) ?? '9999-12-31') > i.openedOn) earliest.set(i.account, i.openedOn);
    const results: ReconciliationResult[] = [];
    for (const [account, from] of [...earliest].sort()) results.push(...(await reconcileFrom(ctx, trx, account, from)));
    return { ids, results };
  });
}

/**
 * Clears an open item a person added, with a note, on a date (default today), and reconciles
 * again in the same transaction the dates it no longer counts on; its overdue case resolves once
 * no overdue item of its account and currency is left.
 */
export async function clearReconcilingItem(
  ctx: AppContext,
  request: { id: number; note?: string; on?: string; actor: string; alsoInTransaction?: (trx: Transaction<Database>, item: ReconcilingItem) => Promise<void> },
): Promise<{ results: ReconciliationResult[]; description: string }> {
  const note = request.note?.trim();
  if (!note) throw new UsageError('--note is required: say how the item cleared (the booking, the bank line, who confirmed it).');
  const today = todayOf(ctx);
  const on = request.on === undefined ? today.date : parseBusinessDate(request.on, '--on', today);
  return ctx.database.db.transaction().execute(async (trx) => {
    const item = await findItem(trx, request.id, { forUpdate: true });
    if (item === undefined) throw new UsageError(`There is no reconciling item #${request.id}. Run "wallet-recon items list" to see them.`);
    if (item.state === 'cleared') throw new UsageError(`Item #${request.id} was already cleared on ${item.clearedOn} by ${item.clearedBy}.`);
    if (on < item.openedOn) throw new UsageError(`--on ${on} is before the item's date ${item.openedOn}.`);
    const at = ctx.clock.now();
    await clearItem(trx, request.id, { clearedOn: on, clearedBy: request.actor, note, at });
    if (item.overdueRaisedOn !== null && (await countOverdueOpen(trx, item.account, item.currency, on)) === 0) {
      await lockAccountCases(trx, item.account);
      const c = (await listCasesOfAccount(trx, item.account, { forUpdate: true })).find((x) => x.kind === 'overdue_item' && x.currency === item.currency);
      if (c !== undefined && c.state !== 'resolved') {
        await updateCase(trx, c.id, { state: 'resolved', resolution: 'auto', resolvedOn: on, acceptedUntil: null, acceptedDifference: null }, at);
        await insertEvent(trx, { caseId: c.id, at, actor: SYSTEM_ACTOR, action: 'auto_resolved', fromState: c.state, toState: 'resolved', note: `${describeItem(item)} was cleared by ${request.actor} on ${on} (${note}): no overdue item is left.` });
      }
    }
    const results = await reconcileFrom(ctx, trx, item.account, on);
    await request.alsoInTransaction?.(trx, item);
    return { results, description: describeItem(item) };
  });
}

/** Reconciles again, in the caller's transaction, every date of an account from `from` on that has results. */
async function reconcileFrom(ctx: AppContext, trx: Transaction<Database>, account: string, from: string): Promise<ReconciliationResult[]> {
  const results: ReconciliationResult[] = [];
  for (const date of await listResultDatesFrom(trx, account, from)) results.push(...(await reconcileBusinessDateIn(ctx, trx, [account], date)));
  return results;
}

/** An item as `items list --json` and the console give it: amounts in minor units and major units, state and age on the date asked. */
export interface ItemRecord {
  id: number | null;
  account: string;
  source: string;
  currency: string;
  kind: ItemKind;
  amount: string;
  amount_major: string;
  opened_on: string;
  expected_clear: string | null;
  state: ItemStateOnDate;
  cleared_on: string | null;
  /** Business days (Monday to Friday) from opened_on to the date asked (or to cleared_on once cleared). */
  age_days: number;
  age_bucket: string;
  note: string | null;
  books_entry_id: number | null;
  statement_entry_id: number | null;
}

/** An item as seen on a date: its state and age then. */
export function itemRecord(item: ReconcilingItem, asOf: string): ItemRecord {
  const state = itemStateOn(item, asOf);
  const end = state === 'cleared' && item.clearedOn !== null && item.clearedOn < asOf ? item.clearedOn : asOf;
  const age = businessDaysBetween(item.openedOn, end);
  return {
    id: item.id,
    account: item.account,
    source: item.source,
    currency: item.currency,
    kind: item.kind,
    amount: item.amount.toString(),
    amount_major: toMajorUnits(item.amount, item.scale),
    opened_on: item.openedOn,
    expected_clear: item.expectedClear,
    state,
    cleared_on: item.clearedOn,
    age_days: age,
    age_bucket: itemAgeBucketOf(age),
    note: item.note,
    books_entry_id: item.booksEntryId,
    statement_entry_id: item.statementEntryId,
  };
}

/**
 * The items `items list` gives: with a date, those open on it (state and age on that date);
 * without, every item, its state and age today.
 */
export async function listItemRecords(ctx: AppContext, filter: { date?: string; account?: string }): Promise<ItemRecord[]> {
  const accounts = resolveAccountNames(ctx.config, filter.account);
  const banks = accounts.flatMap((a) => {
    const bank = bankAccountNamed(ctx.config, a);
    return bank === undefined ? [] : [{ account: a, expectedClearDays: bank.matching?.expectedClearDays }];
  });
  const db = ctx.database.db;
  const asOf = filter.date ?? todayOf(ctx).date;
  // Items of unmatched entries exist only while open: on the date asked, or today.
  const fromEntries = await listEntryItemsOpenOn(db, banks, asOf);
  const stored = filter.date !== undefined ? await listItemsOpenOn(db, accounts, filter.date) : await listItems(db, { account: filter.account });
  return [...fromEntries, ...stored].map((i) => itemRecord(i, asOf));
}
