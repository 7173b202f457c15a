import { InvalidArgumentError, Option, type Command } from 'commander';
import { resolveActor } from '../cases/case-actor.js';
import { refuseAuditorActor } from '../console/auditor-guard.js';
import { MANUAL_ITEM_KINDS } from '../items/item-rules.js';
import { addItem, addItems, clearReconcilingItem, listItemRecords } from '../items/items-service.js';
import { readItemsFile } from '../items/items-file.js';
import { parseBusinessDate, todayOf } from '../reconciliation/business-dates.js';
import { formatTable } from '../text-table.js';
import { summaryOf } from './command-summaries.js';
import type { CliRuntime } from './runtime.js';

function parseItemId(value: string): number {
  if (!/^\d{1,15}$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be an item number such as 7 (see "wallet-recon items list")');
  return Number(value);
}

/** `wallet-recon items`: reconciling items that explain a difference: add, clear (with a note), list. */
export function registerItemsCommand(program: Command, runtime: CliRuntime): void {
  const items = program
    .command('items')
    .description(summaryOf('items'))
    .addHelpText(
      'after',
      `
Examples:
  wallet-recon items add --account eu-main --currency EUR --date 2026-11-20 --kind in_transit --amount 123.45 --expected-clear 2026-11-24 --note "payout PO-881 in transit"
  wallet-recon items list --date 2026-11-20 --json
  wallet-recon items clear 7 --note "arrived on the statement of 2026-11-23"
  wallet-recon items import items.csv

An item's amount is signed so that books + items + unexplained = the gateway or bank balance.
Actions are recorded as --by NAME, else RECON_ACTOR, else the operating-system user.
Exit codes: 0 done, 1 error, 2 usage error (nothing changes).`,
    );

  items
    .command('add')
    .description('add an item open from a date: the date (and every later one) is reconciled again with it')
    .requiredOption('--account <name>', 'the gateway or bank account')
    .requiredOption('--currency <cur>', 'currency code, e.g. EUR')
    .requiredOption('--date <date>', 'business date it is open from, YYYY-MM-DD')
    .addOption(new Option('--kind <kind>', 'what it is').choices(MANUAL_ITEM_KINDS).makeOptionMandatory())
    .requiredOption('--amount <amount>', 'signed, major units: books + items + unexplained = gateway or bank balance (e.g. 123.45, -2.50)')
    .option('--expected-clear <date>', 'the date by which it should clear, YYYY-MM-DD: open after it, it is overdue')
    .option('--note <text>', 'what it is (required)')
    .option('--evidence <text>', 'where the proof is (a reference, a link)')
    .option('--by <name>', 'who adds it (default: RECON_ACTOR, else the operating-system user)')
    .action(async (opts: { account: string; currency: string; date: string; kind: string; amount: string; expectedClear?: string; note?: string; evidence?: string; by?: string }) => {
      const date = parseBusinessDate(opts.date, '--date');
      await runtime.withContext('wallet-recon items add', {}, async (ctx) => {
        const actor = resolveActor(opts.by, ctx.config);
        await refuseAuditorActor(ctx, actor, 'item.add', `${opts.account} ${opts.currency} ${date}`);
        const { id, results } = await addItem(ctx, { ...opts, date, actor });
        runtime.output.out(String(id));
        for (const r of results) runtime.output.err(`${r.businessDate} ${r.account} ${r.currency ?? ''}: ${r.status}${r.note ? ` (${r.note})` : ''}`);
        return 0;
      });
    });

  items
    .command('import')
    .description('add the items of a file (CSV with a header, or JSON lines) with the columns of items add, all or none')
    .argument('<file>', 'columns account,currency,date,kind,amount,expected_clear,note,evidence (expected_clear and evidence optional)')
    .option('--by <name>', 'who adds them (default: RECON_ACTOR, else the operating-system user)')
    .addHelpText('after', '\nEvery line is checked as "items add" checks its options; a bad line refuses the whole file (exit 2, naming the file\nand the line), and so does a signed-off date whose results the items would change. Prints the ids of the items added.')
    .action(async (file: string, opts: { by?: string }) => {
      await runtime.withContext('wallet-recon items import', {}, async (ctx) => {
        const actor = resolveActor(opts.by, ctx.config);
        await refuseAuditorActor(ctx, actor, 'item.add', `items file ${file}`);
        const { ids, results } = await addItems(ctx, await readItemsFile(ctx, file, actor));
        runtime.output.out(ids.join('\n'));
        runtime.output.err(`Imported ${ids.length} item${ids.length === 1 ? '' : 's'} from ${file}.`);
        for (const r of results) runtime.output.err(`${r.businessDate} ${r.account} ${r.currency ?? ''}: ${r.status}${r.note ? ` (${r.note})` : ''}`);
        return 0;
      });
    });

  items
    .command('clear')
    .description('clear an open item with a note saying how it cleared: the dates it no longer counts on are reconciled again')
    .argument('<id>', 'item number', parseItemId)
    .option('--note <text>', 'how it cleared (required)')
    .option('--on <date>', 'the business date it cleared on, YYYY-MM-DD (default: today); it no longer counts from that date')
    .option('--by <name>', 'who clears it (default: RECON_ACTOR, else the operating-system user)')
    .action(async (id: number, opts: { note?: string; on?: string; by?: string }) => {
      await runtime.withContext('wallet-recon items clear', {}, async (ctx) => {
        const actor = resolveActor(opts.by, ctx.config);
        await refuseAuditorActor(ctx, actor, 'item.clear', `item ${id}`);
        const { description } = await clearReconcilingItem(ctx, { id, note: opts.note, on: opts.on, actor });
        runtime.output.out(`Item ${description}: cleared by ${actor}.`);
        return 0;
      });
    });

  items
    .command('list')
    .description('the items open on a date (default: every item, its state today), with their age in business days')
    .option('--date <date>', 'only the items open on this business date, YYYY-MM-DD')
    .option('--account <name>', 'only this account')
    .option('--json', 'print JSON')
    .action(async (opts: { date?: string; account?: string; json?: boolean }) => {
      const date = opts.date === undefined ? undefined : parseBusinessDate(opts.date, '--date');
      await runtime.withContext('wallet-recon items list', {}, async (ctx) => {
        const records = await listItemRecords(ctx, { date: date === undefined ? undefined : parseBusinessDate(date, '--date', todayOf(ctx)), account: opts.account });
        if (opts.json) {
          runtime.output.out(JSON.stringify(records, null, 2));
          return 0;
        }
        if (records.length === 0) {
          runtime.output.out(date === undefined ? 'No reconciling items. Add one with "wallet-recon items add".' : `No reconciling item is open on ${date}.`);
          return 0;
        }
        const rows = records.map((r) => [
          r.id === null ? (r.books_entry_id !== null ? `books entry ${r.books_entry_id}` : `statement entry ${r.statement_entry_id}`) : String(r.id),
          r.account,
          r.currency,
          r.kind,
          r.amount_major,
          r.opened_on,
          r.expected_clear ?? '',
          r.state,
          String(r.age_days),
          r.note ?? '',
        ]);
        runtime.output.out(formatTable(['item', 'account', 'currency', 'kind', 'amount', 'opened on', 'expected clear', 'state', 'age (business days)', 'note'], rows));
        return 0;
      });
    });
}
