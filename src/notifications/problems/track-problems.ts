import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Config } from '../../config/index.js';
import { ageBucketOf, daysBetween, discrepancyAmount } from '../../cases/case-model.js';
import type { Database, ProblemsTable } from '../../db/database.types.js';
import { currencyDecimals, toMajorUnits } from '../../money/format-amount.js';
import { WAITING_STATUSES, type ReconciliationResult } from '../../reconciliation/reconciliation-result.js';
import type { ProblemData, ProblemEventType } from './problem-events.js';
import { enqueueProblemEvent, recordDecision } from './problem-outbox.js';
import { beyond, describeRule } from './thresholds.js';

/** Statuses that are no problem: agreed, explained, not worth a person's time, or no verdict yet. */
const NOT_PROBLEMS = new Set<string>(['matched', 'explained', 'immaterial', ...WAITING_STATUSES]);

/** What a problem is, never how big: a moving amount is the same problem. */
export interface ProblemIdentity {
  account: string;
  source: string;
  currency: string;
  kind: string;
  sign: '+' | '-' | '0';
}

/** `prb_` and 16 hex digits of SHA-256 over account, source, currency, kind and sign. */
export function problemFingerprint(p: ProblemIdentity): string {
  return `prb_${createHash('sha256').update([p.account, p.source, p.currency, p.kind, p.sign].join('\u0000')).digest('hex').slice(0, 16)}`;
}

/** The problem a result is, or undefined for one that is none (matched, immaterial, waiting). */
export function problemOf(r: ReconciliationResult): (ProblemIdentity & { fingerprint: string; amount: bigint | null; scale: number }) | undefined {
  if (NOT_PROBLEMS.has(r.status)) return undefined;
  const amount = discrepancyAmount(r);
  const identity: ProblemIdentity = {
    account: r.account,
    source: r.source ?? 'gateway',
    currency: r.currency ?? '',
    kind: r.status,
    sign: amount === null || amount === 0n ? '0' : amount < 0n ? '-' : '+',
  };
  return { ...identity, fingerprint: problemFingerprint(identity), amount, scale: r.scale ?? currencyDecimals(r.currency) ?? 0 };
}

const major = (amount: bigint | string | null, scale: number | null): string | null => (amount === null ? null : toMajorUnits(BigInt(amount), scale ?? 0));

/** Bucket order, to tell an aging problem from one re-run on an earlier date. */
const BUCKETS = ['under 2 days', '2-7 days', '8-30 days', 'over 30 days'];

/**
 * Follows the problems of some accounts on one business date and writes what people are told,
 * in the reconcile's own transaction: `problem.new` the first time a fingerprint is seen (or
 * again after it cleared), `problem.changed` when its amount moved beyond RECON_RENOTIFY_CHANGE
 * from the last announced amount, `problem.aging` when its age crosses a bucket, `problem.cleared`
 * when a date with a verdict no longer has it. Anything else is a repeat: counted on the problem
 * and logged (`repeat`, or `snoozed` while its case is snoozed or accepted), never sent. A date
 * older than the one a problem was last seen on changes nothing (a re-run of the past).
 */
export async function trackProblems(
  trx: Transaction<Database>,
  config: Pick<Config, 'notifications' | 'quiet' | 'timezone'>,
  accounts: readonly string[],
  businessDate: string,
  results: readonly ReconciliationResult[],
  at: Date,
): Promise<void> {
  if (accounts.length === 0) return;
  const stored = new Map((await trx.selectFrom('problems').selectAll().where('account', 'in', [...accounts]).execute()).map((p) => [p.fingerprint, p]));
  const caseIds = results.map((r) => r.case?.id).filter((id): id is number => id !== undefined);
  const snoozes = new Map(
    caseIds.length === 0 ? [] : (await trx.selectFrom('case_snoozes').selectAll().where('case_id', 'in', caseIds).where('until_date', '>=', businessDate).execute()).map((s) => [s.case_id, s]),
  );
  const seen = new Set<string>();

  for (const r of results) {
    if (r.status === 'immaterial') {
      const subject = { businessDate, account: r.account, currency: r.currency, fingerprint: null };
      await recordDecision(trx, config, 'problem.new', subject, 'immaterial', `difference ${major(discrepancyAmount(r), r.scale ?? currencyDecimals(r.currency))} ${r.currency ?? ''} beyond tolerance but within materiality: recorded, not announced`.replace(' ', ' '), `immaterial:${r.account}:${r.currency ?? ''}:${businessDate}`, at);
      continue;
    }
    const p = problemOf(r);
    if (p === undefined) continue;
    seen.add(p.fingerprint);
    const before = stored.get(p.fingerprint);
    const subject = { businessDate, account: p.account, currency: p.currency === '' ? null : p.currency, fingerprint: p.fingerprint };
    const data = (type: ProblemEventType, firstDate: string, previous: string | null): ProblemData => ({
      account: p.account,
      source: p.source,
      currency: p.currency,
      kind: p.kind,
      fingerprint: p.fingerprint,
      businessDate,
      amount: major(p.amount, p.scale),
      previousAmount: type === 'problem.new' ? null : major(previous, p.scale),
      ageDays: Math.max(0, daysBetween(firstDate, businessDate)),
    });
    const amountText = p.amount === null ? null : p.amount.toString();

    if (before === undefined || (before.state === 'cleared' && (before.cleared_date === null || before.cleared_date <= businessDate))) {
      const row: ProblemsTable = {
        fingerprint: p.fingerprint,
        account: p.account,
        source: p.source,
        currency: p.currency,
        kind: p.kind,
        sign: p.sign,
        first_date: businessDate,
        last_date: businessDate,
        announced_amount: amountText,
        last_amount: amountText,
        scale: p.scale,
        bucket: ageBucketOf(0),
        occurrences: 1,
        state: 'open',
        cleared_date: null,
        updated_at: at,
      };
      await trx.insertInto('problems').values(row).onConflict((oc) => oc.column('fingerprint').doUpdateSet(row)).execute();
      await enqueueProblemEvent(trx, config, 'problem.new', data('problem.new', businessDate, null), subject, `first seen on ${businessDate}`, `problem.new:${p.fingerprint}:${businessDate}`, at);
      continue;
    }
    if (before.state === 'cleared' || businessDate < before.last_date) {
      // A re-run of a date before the problem's latest one: history, not news.
      if (businessDate < before.first_date) await trx.updateTable('problems').set({ first_date: businessDate, updated_at: at }).where('fingerprint', '=', p.fingerprint).execute();
      continue;
    }
    const ageDays = Math.max(0, daysBetween(before.first_date, businessDate));
    const bucket = ageBucketOf(ageDays);
    const announced = before.announced_amount === null ? null : BigInt(before.announced_amount);
    const rule = config.quiet.renotifyChange.byCurrency[p.currency] ?? config.quiet.renotifyChange.default;
    const changed = p.amount !== null && announced !== null && beyond(p.amount - announced, announced, rule, p.scale);
    const snooze = r.case?.id === undefined ? undefined : snoozes.get(r.case.id);
    const quietedBy = snooze !== undefined ? `case #${snooze.case_id} snoozed until ${snooze.until_date}: ${snooze.note}` : r.case?.state === 'accepted' ? `case #${r.case.id} accepted${r.case.acceptedUntil ? ` until ${r.case.acceptedUntil}` : ''}` : undefined;
    const newDate = businessDate > before.last_date;
    await trx
      .updateTable('problems')
      .set({
        last_date: businessDate,
        last_amount: amountText,
        occurrences: newDate ? before.occurrences + 1 : before.occurrences,
        ...(changed ? { announced_amount: amountText } : {}),
        ...(BUCKETS.indexOf(bucket) > BUCKETS.indexOf(before.bucket) ? { bucket } : {}),
        updated_at: at,
      })
      .where('fingerprint', '=', p.fingerprint)
      .execute();
    if (changed) {
      await enqueueProblemEvent(trx, config, 'problem.changed', data('problem.changed', before.first_date, before.announced_amount), subject, `amount moved from ${major(announced, p.scale)} to ${major(p.amount, p.scale)}, beyond RECON_RENOTIFY_CHANGE ${describeRule(rule)}${quietedBy === undefined ? '' : ` (announced although ${quietedBy})`}`, `problem.changed:${p.fingerprint}:${businessDate}:${amountText}`, at);
    } else if (BUCKETS.indexOf(bucket) > BUCKETS.indexOf(before.bucket)) {
      const key = `problem.aging:${p.fingerprint}:${before.first_date}:${bucket}`;
      if (quietedBy !== undefined) await recordDecision(trx, config, 'problem.aging', subject, 'snoozed', `now ${bucket} old, not announced: ${quietedBy}`, key, at);
      else await enqueueProblemEvent(trx, config, 'problem.aging', data('problem.aging', before.first_date, before.announced_amount), subject, `open ${ageDays} business days: now ${bucket} old`, key, at);
    } else if (newDate) {
      const key = `repeat:${p.fingerprint}:${businessDate}`;
      if (quietedBy !== undefined) await recordDecision(trx, config, 'problem.repeat', subject, 'snoozed', `seen again (${before.occurrences + 1} dates since ${before.first_date}), not announced: ${quietedBy}`, key, at);
      else await recordDecision(trx, config, 'problem.repeat', subject, 'repeat', `seen again (${before.occurrences + 1} dates since ${before.first_date}); amount ${major(p.amount, p.scale)} within RECON_RENOTIFY_CHANGE ${describeRule(rule)} of the announced ${major(announced, p.scale)}`, key, at);
    }
  }

  // Open problems of these accounts the date no longer has: cleared, unless the date has no verdict for them yet.
  for (const before of stored.values()) {
    if (before.state !== 'open' || seen.has(before.fingerprint) || businessDate < before.last_date) continue;
    const mine = results.filter((r) => r.account === before.account);
    if (mine.length === 0) continue;
    const waiting = mine.some((r) => WAITING_STATUSES.includes(r.status) && (before.currency === '' || r.currency === before.currency));
    if (waiting) continue;
    await trx.updateTable('problems').set({ state: 'cleared', cleared_date: businessDate, updated_at: at }).where('fingerprint', '=', before.fingerprint).execute();
    const data: ProblemData = {
      account: before.account,
      source: before.source,
      currency: before.currency,
      kind: before.kind,
      fingerprint: before.fingerprint,
      businessDate,
      amount: null,
      previousAmount: major(before.last_amount, before.scale),
      ageDays: Math.max(0, daysBetween(before.first_date, businessDate)),
    };
    const subject = { businessDate, account: before.account, currency: before.currency === '' ? null : before.currency, fingerprint: before.fingerprint };
    await enqueueProblemEvent(trx, config, 'problem.cleared', data, subject, `not seen on ${businessDate} (open since ${before.first_date})`, `problem.cleared:${before.fingerprint}:${businessDate}`, at);
  }
}
