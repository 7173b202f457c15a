import type { Command } from 'commander';
import { resolveActor } from '../cases/case-actor.js';
import { refuseAuditorActor } from '../console/auditor-guard.js';
import { UsageError } from '../errors.js';
import { addManualMatch, listMatches, runMatching, undoMatch, type MatchListing, type RuleMatch } from '../matching/index.js';
import { formatAmount } from '../money/format-amount.js';
import { parseBusinessDate } from '../reconciliation/business-dates.js';
import { resolveAccountNames } from '../reconciliation/reconciliation-service.js';
import { formatTable } from '../text-table.js';
import type { CliRuntime } from './runtime.js';
import { summaryOf } from './command-summaries.js';

function matchJson(m: MatchListing) {
  return {
    id: Number(m.id),
    account: m.account,
    currency: m.currency,
    business_date: m.businessDate,
    rule: m.rule,
    state: m.state,
    books_entries: m.books.map(Number),
    statement_entries: m.statement.map(Number),
    by: m.matchedBy,
    note: m.note,
    created_at: m.createdAt.toISOString(),
    ...(m.state === 'undone' ? { undone_by: m.undoneBy, undone_at: m.undoneAt?.toISOString() ?? null, undo_note: m.undoNote } : {}),
  };
}

function ruleMatchJson(m: RuleMatch) {
  const side = (list: RuleMatch['books']) => list.map((e) => ({ id: Number(e.id), date: e.date, amount: e.amount.toString(), reference: e.reference }));
  return { id: m.id === null ? null : Number(m.id), account: m.account, currency: m.currency, business_date: m.businessDate, rule: m.rule, books_entries: side(m.books), statement_entries: side(m.statement) };
}

function ids(values: string[] | undefined): string[] {
  return (values ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
}

/** `wallet-recon match`: books entries matched with bank statement entries, by the rules or by hand. */
export function registerMatchCommand(program: Command, runtime: CliRuntime): void {
  const match = program.command('match').description(summaryOf('match'));
  match
    .command('run')
    .description('run the matching rules over the unmatched entries now and show each match with its rule')
    .option('--date <date>', 'only matches of this business date (the date of their latest entry)')
    .option('--account <name>', 'only this bank account (default: every one)')
    .option('--dry-run', 'show what the rules would match and write nothing')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nThe rules (docs/matching.md): reference, amount_date, group_reference, group_window.\nExit codes: 0 done, 1 error, 2 usage or configuration error.')
    .action(async (opts: { date?: string; account?: string; dryRun?: boolean; json?: boolean }) => {
      const date = opts.date === undefined ? undefined : parseBusinessDate(opts.date, '--date');
      await runtime.withContext('wallet-recon match run', {}, async (ctx) => {
        const accounts = resolveAccountNames(ctx.config, opts.account).filter((a) => ctx.config.bankAccounts.some((b) => b.name === a));
        const now = ctx.clock.now();
        const made = await ctx.database.db.transaction().execute((trx) => runMatching(trx, ctx.config, accounts, { now, dryRun: opts.dryRun === true, date }));
        if (opts.json === true) {
          runtime.output.out(JSON.stringify(made.map(ruleMatchJson), null, 2));
          return 0;
        }
        if (made.length === 0) {
          runtime.output.out(`${opts.dryRun === true ? 'The rules would match' : 'The rules matched'} nothing: no unmatched books entry and statement entry agree.`);
          return 0;
        }
        // A month's first run makes tens of thousands: the first thousand are listed, all counted.
        const rows = made.slice(0, 1000).map((m) => [
          m.id ?? '-',
          m.account,
          m.businessDate,
          m.rule,
          m.books.map((e) => `${e.id} ${formatAmount(e.amount, m.currency)}${e.reference === null ? '' : ` ${e.reference}`}`).join('; '),
          m.statement.map((e) => `${e.id} ${formatAmount(e.amount, m.currency)}${e.reference === null ? '' : ` ${e.reference}`}`).join('; '),
        ]);
        runtime.output.out(formatTable(['match', 'account', 'date', 'rule', 'books entries', 'statement entries'], rows));
        const byRule = [...new Set(made.map((m) => m.rule))].map((r) => `${made.filter((m) => m.rule === r).length} by ${r}`).join(', ');
        if (made.length > rows.length) runtime.output.out(`… and ${made.length - rows.length} more.`);
        runtime.output.out(`${opts.dryRun === true ? 'Dry run, nothing written: would make' : 'Made'} ${made.length} match${made.length === 1 ? '' : 'es'} (${byRule}).`);
        return 0;
      });
    });

  match
    .command('list')
    .description('the matches of a date: rule, entries on each side, who made it and why')
    .requiredOption('--date <date>', 'business date YYYY-MM-DD (a match belongs to the date of its latest entry)')
    .option('--account <name>', 'only this account')
    .option('--all', 'also undone matches (state undone, with who undid them and why)')
    .option('--json', 'print JSON: [{ id, account, rule, books_entries, statement_entries, by, note, ... }]')
    .action(async (opts: { date: string; account?: string; all?: boolean; json?: boolean }) => {
      const date = parseBusinessDate(opts.date, '--date');
      await runtime.withContext('wallet-recon match list', {}, async (ctx) => {
        const accounts = opts.account === undefined ? undefined : resolveAccountNames(ctx.config, opts.account);
        const found = await listMatches(ctx.database.db, { date, accounts, all: opts.all === true });
        if (opts.json === true) {
          runtime.output.out(JSON.stringify(found.map(matchJson), null, 2));
          return 0;
        }
        if (found.length === 0) {
          runtime.output.out(`No matches on ${date}.`);
          return 0;
        }
        runtime.output.out(
          formatTable(
            ['match', 'account', 'rule', 'state', 'books entries', 'statement entries', 'by', 'note'],
            found.map((m) => [m.id, m.account, m.rule, m.state, m.books.join(', '), m.statement.join(', '), m.matchedBy, m.state === 'undone' ? `${m.note ?? ''} (undone by ${m.undoneBy}: ${m.undoNote})`.trim() : (m.note ?? '')]),
          ),
        );
        return 0;
      });
    });

  match
    .command('add')
    .description('match entries by hand, with a note (audited)')
    .option('--books <id...>', 'books entry ids')
    .option('--statement <id...>', 'statement entry ids')
    .option('--note <text>', 'why (required)')
    .option('--by <name>', 'who does it (default: RECON_ACTOR, else the operating-system user)')
    .addHelpText('after', '\nExample:\n  wallet-recon match add --books 17 18 --statement 42 --note "payout 2026-11-02 split in two lines"\n\nExit codes: 0 matched, 1 error, 2 usage error (no note, unknown or already matched entries, amounts that disagree; nothing changes).')
    .action(async (opts: { books?: string[]; statement?: string[]; note?: string; by?: string }) => {
      if (opts.note === undefined || opts.note.trim() === '') throw new UsageError('match add needs --note TEXT: say why, for the record.');
      await runtime.withContext('wallet-recon match add', {}, async (ctx) => {
        const actor = resolveActor(opts.by, ctx.config);
        await refuseAuditorActor(ctx, actor, 'match.add', `books ${ids(opts.books).join(', ')} with statement ${ids(opts.statement).join(', ')}`);
        const made = await addManualMatch(ctx, { books: ids(opts.books), statement: ids(opts.statement), note: opts.note, actor });
        runtime.output.out(`Match ${made.id}: books ${made.books.join(', ')} with statement ${made.statement.join(', ')} (${made.account} ${made.businessDate}, by ${made.matchedBy}).`);
        return 0;
      });
    });

  match
    .command('undo')
    .description('undo a match, with a note (audited); it stays on record as undone')
    .argument('<id>', 'match id')
    .option('--note <text>', 'why (required)')
    .option('--by <name>', 'who does it (default: RECON_ACTOR, else the operating-system user)')
    .addHelpText('after', '\nExit codes: 0 undone, 1 error, 2 usage error (no note, no such match, already undone; nothing changes).')
    .action(async (id: string, opts: { note?: string; by?: string }) => {
      if (opts.note === undefined || opts.note.trim() === '') throw new UsageError('match undo needs --note TEXT: say why, for the record.');
      await runtime.withContext('wallet-recon match undo', {}, async (ctx) => {
        const actor = resolveActor(opts.by, ctx.config);
        await refuseAuditorActor(ctx, actor, 'match.undo', `match ${id}`);
        const undone = await undoMatch(ctx, { id, note: opts.note, actor });
        runtime.output.out(`Match ${undone.id} undone by ${undone.undoneBy}: its entries are unmatched again (${undone.account} ${undone.businessDate}).`);
        return 0;
      });
    });
}
