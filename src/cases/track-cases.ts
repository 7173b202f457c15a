import type { Transaction } from 'kysely';
import type { Database } from '../db/database.types.js';
import {
  attachResultsToCases,
  countOccurrences,
  deleteOccurrence,
  insertCase,
  insertEvent,
  listCasesOfAccount,
  listOccurrences,
  listOccurrencesOnDate,
  lockAccountCases,
  updateCase,
  upsertOccurrence,
} from '../db/reconciliation-case.repository.js';
import type { ResultRecord } from '../db/result-records.js';
import {
  caseAgeDays,
  caseKindOf,
  occurrenceRecord,
  describeAmount,
  describeCase,
  discrepancyAmount,
  SYSTEM_ACTOR,
  type CaseAction,
  type CaseKind,
  type CaseOccurrence,
  type CaseState,
  type ReconciliationCase,
  type ResultCase,
  ITEM_CASE_KINDS,
} from './case-model.js';
import { acceptanceLapse, isCurrentFor, latestDateOf } from './case-rules.js';

export interface TrackCasesInput {
  /** The accounts whose results for the date were just replaced. */
  accounts: readonly string[];
  businessDate: string;
  /** Every result of those accounts for the date. */
  results: readonly ResultRecord[];
  /** When the reconciliation ran (the context's clock). */
  at: Date;
  /** Today's business date, for the age of each case. */
  today: string;
  /** Allowed absolute difference per currency, at the scale of the result's amounts: an accepted difference may move this much. */
  toleranceFor: (currency: string, scale: number | null) => bigint;
}

/** The key of a result within the map `trackCases` returns. */
export function resultCaseKey(r: Pick<ResultRecord, 'account' | 'currency'>): string {
  return `${r.account}\u0000${r.currency ?? ''}`;
}

/**
 * Follows the discrepancies of one reconciled date as cases (call inside the reconciliation's
 * transaction, after the date's results are stored): every result that did not match joins
 * the case of its (account, currency, kind) or opens it; a key that is clean again resolves
 * its case `auto`; a recurrence reopens a resolved case; an accepted one lapses when a date's
 * difference is outside the accepted one (beyond the tolerance), whichever date it is, or the
 * date passes its end. Otherwise a date older than what a case already knows only adds to its history. Returns each result's case by `resultCaseKey`.
 */
export async function trackCases(trx: Transaction<Database>, input: TrackCasesInput): Promise<Map<string, ResultCase>> {
  const out = new Map<string, ResultCase>();
  for (const account of [...input.accounts].sort()) {
    await lockAccountCases(trx, account);
    const tracker = new AccountDayTracker(trx, input, account);
    for (const [key, c] of await tracker.run()) {
      out.set(key, { id: c.id, state: c.state, ageDays: caseAgeDays(c, input.today), acceptedUntil: c.acceptedUntil });
    }
  }
  return out;
}

const keyOf = (currency: string | null, kind: string) => `${currency ?? ''}\u0000${kind}`;

class AccountDayTracker {
  readonly #trx: Transaction<Database>;
  readonly #input: TrackCasesInput;
  readonly #account: string;
  readonly #date: string;

  constructor(trx: Transaction<Database>, input: TrackCasesInput, account: string) {
    this.#trx = trx;
    this.#input = input;
    this.#account = account;
    this.#date = input.businessDate;
  }

  async run(): Promise<Map<string, ReconciliationCase>> {
    const own = this.#input.results.filter((r) => r.account === this.#account);
    // Locked as well as read: the whole case is written back below, so no decision may land in between.
    const cases = await listCasesOfAccount(this.#trx, this.#account, { forUpdate: true });
    const byKey = new Map(cases.map((c) => [keyOf(c.currency, c.kind), c]));
    const onDate = new Map((await listOccurrencesOnDate(this.#trx, this.#account, this.#date)).map((o) => [o.caseId, o]));
    const attached = new Map<string, ReconciliationCase>();
    const dirty = new Set<string>();

    for (const result of own) {
      const kind = caseKindOf(result.status);
      if (kind === undefined) continue;
      const key = keyOf(result.currency, kind);
      dirty.add(key);
      const existing = byKey.get(key);
      const c = existing === undefined ? await this.#open(result, kind) : await this.#see(existing, result, onDate.get(existing.id));
      attached.set(resultCaseKey(result), c);
    }

    // Without a snapshot, or without books, nothing can be said about a currency: its cases are left as they are.
    const hasSnapshot = !own.some((r) => r.status === 'no_snapshot' || r.status === 'no_books');
    for (const c of cases) {
      if (dirty.has(keyOf(c.currency, c.kind)) || (c.currency !== null && !hasSnapshot)) continue;
      // An overdue item's case follows its items, not the date's results.
      if (ITEM_CASE_KINDS.includes(c.kind)) continue;
      // Another kind of discrepancy on the same currency masks this one: not seen, not cleared.
      // A disappeared wallet is flagged only on the first day it is gone; on later days the
      // currency is simply absent, which does not bring it back: only a result for it does.
      const result = c.currency === null ? undefined : own.find((r) => r.currency === c.currency);
      const explained = result?.status === 'explained';
      const masked = (result !== undefined && result.status !== 'matched' && !explained) || (c.kind === 'disappeared' && result === undefined);
      await this.#clear(c, onDate.get(c.id), masked, explained ? (result!.note ?? 'open reconciling items') : undefined);
    }

    await attachResultsToCases(
      this.#trx,
      this.#account,
      this.#date,
      own.flatMap((r) => {
        const c = attached.get(resultCaseKey(r));
        return c === undefined ? [] : [{ currency: r.currency, caseId: c.id }];
      }),
    );
    return attached;
  }

  async #open(result: ResultRecord, kind: CaseKind): Promise<ReconciliationCase> {
    const amount = discrepancyAmount(result);
    const c = await insertCase(this.#trx, { account: this.#account, currency: result.currency, kind, openedOn: this.#date, lastSeenOn: this.#date, latestDifference: amount }, this.#input.at);
    const occurrence = occurrenceOf(c.id, result);
    await upsertOccurrence(this.#trx, occurrence, this.#input.at);
    await updateCase(this.#trx, c.id, { occurrences: 1 }, this.#input.at);
    await this.#event(c, 'opened', null, 'open', `${describeCase(c)} first seen on ${this.#date}: ${describeAmount(amount, c.currency)}.`, occurrenceRecord(occurrence));
    return { ...c, occurrences: 1 };
  }

  async #see(c: ReconciliationCase, result: ResultRecord, before: CaseOccurrence | undefined): Promise<ReconciliationCase> {
    const occurrence = occurrenceOf(c.id, result);
    const changed = before === undefined || !sameOccurrence(before, occurrence);
    // A re-run of a date already seen with the same figures adds nothing: no count, no event.
    if (!changed) return c;
    await upsertOccurrence(this.#trx, occurrence, this.#input.at);
    const current = isCurrentFor(c, this.#date);
    const seenNote =
      before === undefined
        ? `Seen on ${this.#date}: ${describeAmount(occurrence.difference, c.currency)}.`
        : `${this.#date} reconciled again: ${describeAmount(occurrence.difference, c.currency)} (was ${describeAmount(before.difference, c.currency)}).`;
    // An acceptance covers only the difference it accepted: a date showing another one (beyond
    // the tolerance) is a break whichever date it is, an earlier one included, and reopens the case.
    const lapse = c.state === 'accepted' ? this.#lapseReason(c, occurrence.difference, result.scale ?? null) : undefined;
    const history = lapse === undefined ? 'its state is unchanged' : 'it is outside the accepted difference, so the acceptance lapses';
    await this.#event(c, 'seen', c.state, c.state, current ? seenNote : `${seenNote} An earlier date than the case's latest (${latestDateOf(c)}): ${history}.`, occurrenceRecord(occurrence));

    let next: ReconciliationCase = { ...c, occurrences: await countOccurrences(this.#trx, c.id) };
    if (lapse !== undefined) {
      next = { ...next, state: 'open', resolution: null, acceptedUntil: null, acceptedDifference: null };
      await this.#event(c, 'lapsed', 'accepted', 'open', `The acceptance lapsed on ${this.#date}: ${lapse}. The case is open again.`);
    }
    if (current) {
      if (c.state === 'resolved') {
        next = { ...next, state: 'open', resolution: null, resolvedOn: null, openedOn: this.#date };
        await this.#event(c, 'reopened', 'resolved', 'open', `Seen again on ${this.#date} (${describeAmount(occurrence.difference, c.currency)}) after it was resolved (${c.resolution}) from ${c.resolvedOn}.`);
      }
      next = { ...next, lastSeenOn: this.#date > c.lastSeenOn ? this.#date : c.lastSeenOn, latestDifference: occurrence.difference };
    }
    await updateCase(this.#trx, c.id, next, this.#input.at);
    return next;
  }

  /** `explainedBy`: the items that now explain the currency's difference (the result's note), when they do. */
  async #clear(c: ReconciliationCase, before: CaseOccurrence | undefined, masked: boolean, explainedBy?: string): Promise<void> {
    let next: ReconciliationCase = c;
    if (before !== undefined) {
      await deleteOccurrence(this.#trx, c.id, this.#date);
      const remaining = await listOccurrences(this.#trx, c.id);
      const why = explainedBy === undefined ? 'books or snapshot corrected' : explainedBy;
      await this.#event(c, 'withdrawn', c.state, c.state, `${this.#date} was reconciled again without this discrepancy (${why}): its occurrence (${describeAmount(before.difference, c.currency)}) is withdrawn.`, occurrenceRecord(before));
      next = { ...next, occurrences: remaining.length };
      const latest = remaining.at(-1);
      if (this.#date === c.lastSeenOn && latest !== undefined) next = { ...next, lastSeenOn: latest.businessDate, latestDifference: latest.difference };
    }
    if (!masked && c.state !== 'resolved' && this.#date >= c.lastSeenOn) {
      if (explainedBy === undefined) {
        next = { ...next, state: 'resolved', resolution: 'auto', resolvedOn: this.#date, acceptedUntil: null, acceptedDifference: null };
        await this.#event(c, 'auto_resolved', c.state, 'resolved', `${this.#date} reconciled clean for ${c.currency ?? c.account}: resolved automatically.`);
      } else {
        next = { ...next, state: 'resolved', resolution: 'explained', resolvedOn: this.#date, acceptedUntil: null, acceptedDifference: null };
        await this.#event(c, 'auto_resolved', c.state, 'resolved', `${this.#date}: the difference of ${c.currency ?? c.account} is ${explainedBy}: resolved as explained.`);
      }
    }
    if (next !== c) await updateCase(this.#trx, c.id, next, this.#input.at);
  }

  /** Why an accepted case no longer covers what the date shows, or undefined while it does (see acceptanceLapse). */
  #lapseReason(c: ReconciliationCase, amount: bigint | null, scale: number | null): string | undefined {
    const tolerance = c.currency === null ? 0n : this.#input.toleranceFor(c.currency, scale);
    return acceptanceLapse(c, this.#date, amount, tolerance);
  }

  async #event(c: ReconciliationCase, action: CaseAction, from: CaseState | null, to: CaseState | null, note: string, evidence?: unknown): Promise<void> {
    await insertEvent(this.#trx, { caseId: c.id, at: this.#input.at, actor: SYSTEM_ACTOR, action, fromState: from, toState: to, note, evidence });
  }
}

function occurrenceOf(caseId: number, r: ResultRecord): CaseOccurrence {
  return {
    caseId,
    businessDate: r.businessDate,
    status: r.status,
    difference: discrepancyAmount(r),
    gatewayBalance: r.gatewayBalance,
    singleBalance: r.singleBalance,
    expectedBalance: r.expectedBalance,
    runId: r.runId,
  };
}

function sameOccurrence(a: CaseOccurrence, b: CaseOccurrence): boolean {
  return (
    a.status === b.status &&
    a.difference === b.difference &&
    a.gatewayBalance === b.gatewayBalance &&
    a.singleBalance === b.singleBalance &&
    a.expectedBalance === b.expectedBalance &&
    a.runId === b.runId
  );
}

