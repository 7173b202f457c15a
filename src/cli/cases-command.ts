import { formatLocalTime } from '../business-date/local-time.js';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { detectSignoffChanges } from '../signoff/signoff-service.js';
import { applyCaseAction, type CaseActionRequest, type ManualCaseAction } from '../cases/case-actions.js';
import { resolveActor } from '../cases/case-actor.js';
import { snoozeCase } from '../cases/case-snooze.js';
import { refuseAuditorActor } from '../console/auditor-guard.js';
import { ACTIVE_STATES, caseAgeDays, caseAmountText, CASE_KINDS, CASE_STATE_FILTERS, describeCase, occurrenceRecord, type CaseEvent, type ReconciliationCase } from '../cases/case-model.js';
import { describeTrail, loadDifferenceTrail, type DifferenceTrail } from '../cases/difference-trail.js';
import type { DifferenceChange } from '../cases/difference-origin.js';
import { findCase, hasCasesOfAccount, listCases, listEvents, listOccurrences } from '../db/reconciliation-case.repository.js';
import { UsageError } from '../errors.js';
import { bankAccountNamed } from '../config/index.js';
import { currencyDecimals, formatAmount, formatMoney } from '../money/format-amount.js';
import { numberStyleOf, type NumberStyle } from '../money/number-style.js';
import { localizeAmounts } from '../money/localize-amounts.js';
import { todayOf } from '../reconciliation/business-dates.js';
import { formatTable } from '../text-table.js';
import { checkHistoryAccount } from './history-account.js';
import type { CliRuntime } from './runtime.js';
import { summaryOf } from './command-summaries.js';

function parseCaseId(value: string): number {
  if (!/^\d{1,9}$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a case number such as 7 (see "wallet-recon cases")');
  return Number(value);
}

const text = (v: bigint | null) => (v === null ? null : v.toString());
/** An amount of a case for people, in major units: "EUR 1.00"; null stays null. */
const money = (v: bigint | null, currency: string | null) => (v === null ? null : caseAmountText(v, currency));
/** An amount of a case for people without the code (table cells under a currency column), in RECON_LOCALE: "1.00", "1,00". */
const cell = (v: bigint | null, currency: string | null, style?: NumberStyle) => (v === null ? '' : currency === null ? v.toString() : formatAmount(v, currency, undefined, style));

/** A case in the column names of `reconciliation_cases`, amounts as digit strings, plus its age. */
function caseJson(c: ReconciliationCase, today: string) {
  return {
    id: c.id,
    account: c.account,
    currency: c.currency,
    kind: c.kind,
    state: c.state,
    resolution: c.resolution,
    opened_on: c.openedOn,
    last_seen_on: c.lastSeenOn,
    age_days: caseAgeDays(c, today),
    occurrences: c.occurrences,
    latest_difference: text(c.latestDifference),
    latest_difference_formatted: money(c.latestDifference, c.currency),
    assignee: c.assignee,
    due_on: c.dueOn,
    accepted_until: c.acceptedUntil,
    accepted_difference: text(c.acceptedDifference),
    accepted_difference_formatted: money(c.acceptedDifference, c.currency),
    currency_decimals: currencyDecimals(c.currency),
    resolved_on: c.resolvedOn,
  };
}


const eventJson = (e: CaseEvent) => ({
  at: e.at.toISOString(),
  actor: e.actor,
  action: e.action,
  from_state: e.fromState,
  to_state: e.toState,
  note: e.note,
  evidence: e.evidence,
});

/** Where a gateway difference started, amounts as digit strings at the trail's scale. */
function trailJson(trail: DifferenceTrail, currency: string) {
  const change = (c: DifferenceChange) => ({ business_date: c.date, from: c.from.toString(), to: c.to.toString(), gateway_movement: text(c.gatewayMovement), books_movement: text(c.booksMovement) });
  return {
    currency,
    scale: trail.scale,
    last_matched_on: trail.lastMatchedOn,
    older_dates_left_out: trail.cut,
    appeared: trail.appeared === null ? null : change(trail.appeared),
    changes: trail.changes.map(change),
    days: trail.rows.map((r) => ({
      business_date: r.date,
      status: r.status,
      gateway_balance: text(r.gateway),
      gateway_movement: text(r.gatewayMovement),
      books_balance: text(r.books),
      books_movement: text(r.booksMovement),
      books_movement_from: r.booksMovementFrom,
      difference: text(r.difference),
      change: text(r.change),
    })),
  };
}

function describeState(c: ReconciliationCase): string {
  if (c.state === 'accepted') return c.acceptedUntil === null ? 'accepted' : `accepted until ${c.acceptedUntil}`;
  if (c.state === 'resolved') return `resolved (${c.resolution})`;
  return c.state;
}

/** `wallet-recon cases`: discrepancy cases, one line each; subcommands show and act on one case. */
export function registerCasesCommand(program: Command, runtime: CliRuntime): void {
  const cases = program
    .command('cases')
    .description(summaryOf('cases'))
    .addOption(new Option('--state <state>', 'only cases in this state (active: open or acknowledged)').choices(CASE_STATE_FILTERS))
    .option('--account <name>', 'only this account')
    .option('--currency <cur>', 'only this currency, e.g. EUR')
    .addOption(new Option('--kind <kind>', 'only this kind').choices(CASE_KINDS))
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `
Examples:
  wallet-recon cases --state active
  wallet-recon cases show 7
  wallet-recon cases ack 7 --note "looking into it"
  wallet-recon cases assign 7 --to anna --due 2026-11-30
  wallet-recon cases accept 7 --note "booking on Monday" --until 2026-11-24
  wallet-recon cases resolve 7 --note "booked as 2026-11-23/118"

Actions are recorded as --by NAME, else RECON_ACTOR, else the operating-system user.
Exit codes: 0 done, 1 error, 2 usage error (also a transition the case's state does not allow; nothing changes), 130 stopped by Ctrl-C (SIGINT), 143 stopped by SIGTERM.`,
    )
    .action(async (opts: { state?: (typeof CASE_STATE_FILTERS)[number]; account?: string; currency?: string; kind?: (typeof CASE_KINDS)[number]; json?: boolean }) => {
      if (opts.currency !== undefined && !/^[A-Z]{3}$/.test(opts.currency)) throw new UsageError(`--currency ${JSON.stringify(opts.currency)} is not a currency code: use three capital letters such as EUR.`);
      await runtime.withContext('wallet-recon cases', {}, async (ctx) => {
        const { note } = opts.account === undefined ? {} : await checkHistoryAccount(ctx.config, opts.account, 'cases', () => hasCasesOfAccount(ctx.database.db, opts.account!));
        if (note !== undefined) runtime.output.err(note);
        const states = opts.state === undefined ? undefined : opts.state === 'active' ? ACTIVE_STATES : [opts.state];
        const found = await listCases(ctx.database.db, { states, account: opts.account, currency: opts.currency, kind: opts.kind });
        const today = todayOf(ctx).date;
        if (opts.json) {
          runtime.output.out(JSON.stringify(found.map((c) => caseJson(c, today)), null, 2));
          return 0;
        }
        if (found.length === 0) {
          runtime.output.out('No cases match. Cases open when "wallet-recon reconcile" finds a discrepancy.');
          return 0;
        }
        const rows = found.map((c) => [
          String(c.id),
          c.account,
          c.currency ?? '',
          c.kind,
          describeState(c),
          String(caseAgeDays(c, today)),
          String(c.occurrences),
          cell(c.latestDifference, c.currency, numberStyleOf(ctx.config.locale)),
          c.assignee ?? '',
        ]);
        runtime.output.out(formatTable(['case', 'account', 'currency', 'kind', 'state', 'age (days)', 'occurrences', 'latest difference', 'assignee'], rows));
        return 0;
      });
    });

  cases
    .command('show')
    .description('one case: its fields, its occurrences oldest first and its whole event history')
    .argument('<id>', 'case number', parseCaseId)
    .option('--json', 'print JSON')
    .action(async (id: number, _opts: unknown, command: Command) => {
      // `cases` has a --json of its own, which commander gives the first say: read both.
      const opts = command.optsWithGlobals<{ json?: boolean }>();
      await runtime.withContext('wallet-recon cases show', {}, async (ctx) => {
        const { db } = ctx.database;
        const c = await findCase(db, id);
        if (c === undefined) throw new UsageError(`There is no case #${id}. Run "wallet-recon cases" to list them.`);
        const occurrences = await listOccurrences(db, id);
        const events = await listEvents(db, id);
        const today = todayOf(ctx).date;
        // The gateway gives balances only: the trail of its difference, date by date since the last match.
        const trail = await loadDifferenceTrail(db, ctx.config, c);
        if (opts.json) {
          const occurrenceJson = occurrences.map((o) => ({
            ...occurrenceRecord(o),
            formatted: { difference: money(o.difference, c.currency), gateway_balance: money(o.gatewayBalance, c.currency), single_balance: money(o.singleBalance, c.currency), expected_balance: money(o.expectedBalance, c.currency) },
          }));
          runtime.output.out(JSON.stringify({ case: caseJson(c, today), occurrences: occurrenceJson, events: events.map(eventJson), ...(trail === undefined ? {} : { difference_trail: trailJson(trail, c.currency!) }) }, null, 2));
          return 0;
        }
        const style = numberStyleOf(ctx.config.locale);
        const age = caseAgeDays(c, today);
        const latest = c.latestDifference === null ? '-' : c.currency === null ? c.latestDifference.toString() : formatMoney(c.latestDifference, c.currency, undefined, style);
        const head = [
          `Case ${describeCase(c)}: ${describeState(c)}`,
          `opened on ${c.openedOn}, last seen on ${c.lastSeenOn}, age ${age} day${age === 1 ? '' : 's'}, ${c.occurrences} occurrence${c.occurrences === 1 ? '' : 's'}, latest difference ${latest}`,
          `assignee ${c.assignee ?? '-'}${c.dueOn === null ? '' : `, due ${c.dueOn}`}`,
        ].join('\n');
        // A bank account's balance is its statement's: never headed "gateway", and it has no single-wallet read.
        const bank = bankAccountNamed(ctx.config, c.account) !== undefined;
        const occurrenceTable = formatTable(
          ['business date', 'status', 'difference', bank ? 'bank' : 'gateway', ...(bank ? [] : ['single wallet']), 'books', 'run'],
          occurrences.map((o) => [
            o.businessDate,
            o.status,
            cell(o.difference, c.currency, style),
            cell(o.gatewayBalance, c.currency, style),
            ...(bank ? [] : [cell(o.singleBalance, c.currency, style)]),
            cell(o.expectedBalance, c.currency, style),
            o.runId === null ? '' : String(o.runId),
          ]),
        );
        const eventTable = formatTable(
          ['at', 'actor', 'action', 'state', 'note'],
          events.map((e) => [
            formatLocalTime(e.at, ctx.config.timezone, { seconds: true }),
            e.actor,
            e.action,
            e.fromState === e.toState || e.fromState === null ? (e.toState ?? '') : `${e.fromState} -> ${e.toState ?? ''}`,
            localizeAmounts(e.note ?? '', style),
          ]),
        );
        let trailText = '';
        if (trail !== undefined) {
          const amount = (v: bigint | null) => (v === null ? '' : formatAmount(v, c.currency, trail.scale, style));
          const table = formatTable(
            ['business date', 'status', 'gateway', 'gateway movement', 'books', 'books movement', 'difference', 'change'],
            trail.rows.map((r) => [
              r.date,
              r.status,
              amount(r.gateway),
              amount(r.gatewayMovement),
              amount(r.books),
              `${amount(r.booksMovement)}${r.booksMovementFrom === 'entries' ? ' (entries)' : ''}`,
              amount(r.difference),
              r.change === null || r.change === 0n ? '' : amount(r.change),
            ]),
          );
          const sentences = describeTrail(trail, (v) => formatMoney(v, c.currency!, trail.scale, style));
          trailText = `\n\nWhere the difference started (the gateway gives balances only: its movement beside the books', date by date):\n${table}\n${sentences.join('\n')}`;
        }
        runtime.output.out(`${head}\n\nOccurrences:\n${occurrenceTable}${trailText}\n\nHistory:\n${eventTable}`);
        return 0;
      });
    });

  const action = (name: ManualCaseAction, description: string, configure: (c: Command) => Command) =>
    configure(cases.command(name).description(description).argument('<id>', 'case number', parseCaseId).option('--by <name>', 'who does it (default: RECON_ACTOR, else the operating-system user)')).action(
      async (id: number, opts: { by?: string; note?: string; to?: string; due?: string; until?: string }) => {
        await runtime.withContext(`wallet-recon cases ${name}`, {}, async (ctx) => {
          const request: CaseActionRequest = { caseId: id, action: name, actor: resolveActor(opts.by, ctx.config), note: opts.note, to: opts.to, due: opts.due, until: opts.until };
          await refuseAuditorActor(ctx, request.actor, `case.${name}`, `case #${id}`);
          const { before, after } = await applyCaseAction(ctx, request);
          const change = before.state === after.state ? describeState(after) : `${describeState(before)} -> ${describeState(after)}`;
          // An assignment says to whom and by when: the state alone would not change.
          const assigned = name === 'assign' ? `; assigned to ${after.assignee ?? '-'}${after.dueOn === null ? ', no due date' : `, due ${after.dueOn}`}` : '';
          runtime.output.out(`Case ${describeCase(after)}: ${change}${assigned} (${name} by ${request.actor}).`);
          if (name === 'reopen') {
            for (const { signoff } of await detectSignoffChanges(ctx)) {
              runtime.output.err(`${signoff.businessDate} was signed off (#${signoff.id}) and changed after sign-off: it must be signed again.`);
            }
          }
          return 0;
        });
      },
    );
  action('ack', 'acknowledge: someone is looking into it (a note saying what is being done is required)', (c) => c.option('--note <text>', 'what is being done about it (required)'));
  action('assign', 'give the case to someone, optionally with a due date', (c) => c.option('--to <name>', 'assignee').option('--due <date>', 'due date YYYY-MM-DD').option('--note <text>', 'optional note'));
  action('note', 'add a note to the history', (c) => c.option('--note <text>', 'the note'));
  action('resolve', 'resolved: fixed by a booking (say which in the note)', (c) => c.option('--note <text>', 'how it was fixed'));
  action('accept', 'accept the difference as explained; reconcile stops counting it while it stays the same', (c) =>
    c.option('--note <text>', 'why it is accepted').option('--until <date>', 'last business date the acceptance covers, YYYY-MM-DD'),
  );
  action('reopen', 'open a resolved or accepted case again', (c) => c.option('--note <text>', 'why'));
  cases
    .command('snooze')
    .description('keep a case quiet until a business date: its repeats are not announced unless it changes materially; it still blocks sign-off as its state says')
    .argument('<id>', 'case number', parseCaseId)
    .option('--until <date>', 'last business date the snooze covers, YYYY-MM-DD (required)')
    .option('--note <text>', 'why it may stay quiet (required)')
    .option('--by <name>', 'who does it (default: RECON_ACTOR, else the operating-system user)')
    .addHelpText('after', '\nExample:\n  wallet-recon cases snooze 7 --until 2026-11-24 --note "bank fixes it Monday"\n\nExit codes: 0 snoozed, 2 no such case, not active, a missing note or a bad date.')
    .action(async (id: number, opts: { until?: string; note?: string; by?: string }) => {
      await runtime.withContext('wallet-recon cases snooze', {}, async (ctx) => {
        const actor = resolveActor(opts.by, ctx.config);
        await refuseAuditorActor(ctx, actor, 'case.snooze', `case #${id}`);
        const done = await snoozeCase(ctx, { caseId: id, until: opts.until, note: opts.note, actor });
        runtime.output.out(`Case ${describeCase(done.case)}: snoozed until ${done.until} (by ${actor}); it is announced again only if it changes materially, and the snooze ends by itself after that date.`);
        return 0;
      });
    });
}
