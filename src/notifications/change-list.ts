import type { Kysely, Transaction } from 'kysely';
import { daysBetween } from '../cases/case-model.js';
import type { Database } from '../db/database.types.js';
import { listChangedFromAmounts, listProblemEventsOfDate, listProblems, listRunningSnoozes } from '../db/problem.repository.js';
import type { StoredResultRecord } from '../db/result-records.js';
import { toMajorUnits } from '../money/format-amount.js';
import { problemOf } from './problems/track-problems.js';

type Db = Kysely<Database> | Transaction<Database>;

/** One problem in the digest's change list, its amount in major units with its currency. */
export interface ChangeEntry {
  account: string;
  /** `gateway` or `bank`. */
  source: string;
  currency: string;
  /** The result status it comes from: break, no_books, no_statement … */
  kind: string;
  fingerprint: string;
  /** The difference on the date in major units ("-100.00"); for a cleared problem the last one seen; null when it has none. */
  amount: string | null;
  /** changed: the amount announced before. */
  previousAmount: string | null;
  /** Business days since it first appeared. */
  ageDays: number;
  firstDate: string;
  caseId: number | null;
  /** snoozed: the last date its snooze covers, and why. */
  snoozedUntil?: string;
  snoozeNote?: string;
}

export const CHANGE_GROUPS = ['new', 'changed', 'stillOpen', 'snoozed', 'cleared'] as const;
export type ChangeGroup = (typeof CHANGE_GROUPS)[number];

export type ChangeListAccount = { account: string; source: string } & Record<ChangeGroup, ChangeEntry[]>;

/**
 * The night as a change list: per account, what is new, what changed materially, what is still
 * open (with its age), what is snoozed and what cleared; accounts and entries most material first.
 * Immaterial differences and those explained by reconciling items are counted, not listed.
 */
export interface ChangeList {
  accounts: ChangeListAccount[];
  counts: Record<ChangeGroup, number> & { immaterial: number; explained: number };
}

interface Ranked {
  entry: ChangeEntry;
  size: bigint;
  balance: bigint;
}

const abs = (v: bigint): bigint => (v < 0n ? -v : v);

/** Larger beside its balance first (cross-multiplied, no exchange rate); a zero balance ranks first. */
function moreMaterial(a: Ranked, b: Ranked): number {
  if (a.balance === 0n || b.balance === 0n) {
    if (a.balance !== b.balance) return a.balance === 0n ? -1 : 1;
  } else {
    const left = a.size * b.balance;
    const right = b.size * a.balance;
    if (left !== right) return left > right ? -1 : 1;
  }
  return a.size === b.size ? 0 : a.size > b.size ? -1 : 1;
}

/**
 * Reads the change list of a business date for these accounts from the results, the problems
 * and the decisions the reconciliation recorded (so every replica writes the same digest).
 * `acceptedCases` are left out: the digest counts accepted discrepancies apart.
 */
export async function buildChangeList(db: Db, businessDate: string, accounts: readonly string[], results: readonly StoredResultRecord[], acceptedCases: ReadonlySet<number>): Promise<ChangeList> {
  const counts = { new: 0, changed: 0, stillOpen: 0, snoozed: 0, cleared: 0, immaterial: 0, explained: 0 };
  const mine = results.filter((r) => accounts.includes(r.account));
  counts.immaterial = mine.filter((r) => r.status === 'immaterial').length;
  counts.explained = mine.filter((r) => r.status === 'explained').length;
  const events = await listProblemEventsOfDate(db, businessDate, accounts);
  const decided = (type: string) => new Set(events.filter((e) => e.eventType === type).map((e) => e.fingerprint));
  const [isNew, isChanged, isCleared] = [decided('problem.new'), decided('problem.changed'), decided('problem.cleared')];
  const current = mine.flatMap((r) => {
    if (r.caseId !== null && acceptedCases.has(r.caseId)) return [];
    const p = problemOf(r);
    return p === undefined ? [] : [{ r, p }];
  });
  const stored = new Map((await listProblems(db, [...new Set([...current.map((c) => c.p.fingerprint), ...isCleared])])).map((p) => [p.fingerprint, p]));
  const changedFrom = isChanged.size === 0 ? new Map<string, string | null>() : await listChangedFromAmounts(db, businessDate);
  const snoozes = await listRunningSnoozes(db, current.flatMap((c) => (c.r.caseId === null ? [] : [c.r.caseId])), businessDate);

  const groups = new Map<string, { source: string } & Record<ChangeGroup, Ranked[]>>();
  const groupOf = (account: string, source: string) => {
    let g = groups.get(account);
    if (g === undefined) groups.set(account, (g = { source, new: [], changed: [], stillOpen: [], snoozed: [], cleared: [] }));
    return g;
  };
  for (const { r, p } of current) {
    const problem = stored.get(p.fingerprint);
    const firstDate = problem === undefined ? businessDate : String(problem.first_date) < businessDate ? String(problem.first_date) : businessDate;
    const snooze = r.caseId === null ? undefined : snoozes.get(r.caseId);
    const group: ChangeGroup = isNew.has(p.fingerprint) || firstDate === businessDate ? 'new' : isChanged.has(p.fingerprint) ? 'changed' : snooze !== undefined ? 'snoozed' : 'stillOpen';
    const entry: ChangeEntry = {
      account: p.account,
      source: p.source,
      currency: p.currency,
      kind: p.kind,
      fingerprint: p.fingerprint,
      amount: p.amount === null ? null : toMajorUnits(p.amount, p.scale),
      previousAmount: group === 'changed' ? (changedFrom.get(p.fingerprint) ?? null) : null,
      ageDays: Math.max(0, daysBetween(firstDate, businessDate)),
      firstDate,
      caseId: r.caseId,
      ...(snooze === undefined ? {} : { snoozedUntil: snooze.untilDate, snoozeNote: snooze.note }),
    };
    const balance = [r.gatewayBalance, r.expectedBalance, r.singleBalance].reduce<bigint>((max, v) => (v !== null && abs(v) > max ? abs(v) : max), 0n);
    groupOf(p.account, p.source)[group].push({ entry, size: abs(p.amount ?? 0n), balance });
    counts[group]++;
  }
  for (const fingerprint of isCleared) {
    const problem = stored.get(fingerprint);
    if (problem === undefined || current.some((c) => c.p.fingerprint === fingerprint)) continue;
    const last = problem.last_amount === null ? null : BigInt(problem.last_amount);
    groupOf(problem.account, problem.source).cleared.push({
      entry: {
        account: problem.account,
        source: problem.source,
        currency: problem.currency,
        kind: problem.kind,
        fingerprint,
        amount: last === null ? null : toMajorUnits(last, problem.scale ?? 0),
        previousAmount: null,
        ageDays: Math.max(0, daysBetween(String(problem.first_date), businessDate)),
        firstDate: String(problem.first_date),
        caseId: null,
      },
      size: abs(last ?? 0n),
      balance: 0n,
    });
    counts.cleared++;
  }
  const ranked = [...groups].map(([account, g]) => {
    for (const name of CHANGE_GROUPS) g[name].sort(moreMaterial);
    const top = CHANGE_GROUPS.flatMap((name) => (name === 'cleared' ? [] : g[name])).sort(moreMaterial)[0];
    return { account, g, top };
  });
  // The account whose most material open problem is largest first; accounts with only cleared ones last.
  ranked.sort((a, b) => (a.top === undefined ? (b.top === undefined ? a.account.localeCompare(b.account) : 1) : b.top === undefined ? -1 : moreMaterial(a.top, b.top) || a.account.localeCompare(b.account)));
  return {
    accounts: ranked.map(({ account, g }) => ({
      account,
      source: g.source,
      new: g.new.map((x) => x.entry),
      changed: g.changed.map((x) => x.entry),
      stillOpen: g.stillOpen.map((x) => x.entry),
      snoozed: g.snoozed.map((x) => x.entry),
      cleared: g.cleared.map((x) => x.entry),
    })),
    counts,
  };
}
