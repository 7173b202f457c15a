import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.js';
import { bankAccountNamed } from '../config/index.js';
import { insertAudit } from '../db/console.repository.js';
import { listEntryLabels } from '../db/entry-labels.repository.js';
import { listEntryItemsOpenOn, listItemsOpenOn } from '../db/reconciling-item.repository.js';
import { DateLockedError, UsageError } from '../errors.js';
import { addItem, clearReconcilingItem } from '../items/items-service.js';
import { addManualMatch, listMatches, undoMatch } from '../matching/index.js';
import type { StoredReconciliationResult } from '../reconciliation/reconciliation-result.js';
import { detectSignoffChanges } from '../signoff/signoff-service.js';
import type { AccountExplain } from './items-panel.js';
import { setFlashNotice } from './flash-notice.js';
import { mayActOnCases } from './roles.js';

export interface ItemsRouteDeps {
  ctx: AppContext;
  audit: (request: FastifyRequest, action: string, outcome: 'ok' | 'refused' | 'failed', target?: string, detail?: unknown) => Promise<unknown>;
  refuse: (status: number, message: string) => Error;
  secureCookies: (request: FastifyRequest) => boolean;
}

/**
 * The open items, matches and unmatched entries of some accounts on a date, for the day view and
 * the case page: read as `items list --date` and `match list --date` read them.
 */
export async function loadExplain(ctx: AppContext, accounts: readonly string[], date: string, results: readonly StoredReconciliationResult[]): Promise<Map<string, AccountExplain>> {
  const db = ctx.database.db;
  const banks = accounts.flatMap((a) => {
    const bank = bankAccountNamed(ctx.config, a);
    return bank === undefined ? [] : [{ account: a, expectedClearDays: bank.matching?.expectedClearDays, currency: bank.currency }];
  });
  const items = [...(await listEntryItemsOpenOn(db, banks, date)), ...(await listItemsOpenOn(db, accounts, date))];
  const matches = banks.length === 0 ? [] : await listMatches(db, { date, accounts: banks.map((b) => b.account), all: true });
  const labels = await listEntryLabels(db, { books: items.flatMap((i) => (i.booksEntryId === null ? [] : [i.booksEntryId])), statement: items.flatMap((i) => (i.statementEntryId === null ? [] : [i.statementEntryId])) });
  return new Map(
    accounts.map((account) => {
      const bank = banks.find((b) => b.account === account);
      const currencies = bank !== undefined ? [bank.currency] : [...new Set(results.filter((r) => r.account === account && r.currency !== null).map((r) => r.currency!))].sort();
      return [account, { account, bank: bank !== undefined, currencies, items: items.filter((i) => i.account === account), matches: matches.filter((m) => m.account === account), labels }];
    }),
  );
}

/** Where an action sends the browser back to: the day view or the case page it came from, nothing else. */
function backOf(value: string | undefined, date: string | undefined): string {
  if (value !== undefined && (/^\/day\?date=\d{4}-\d{2}-\d{2}$/.test(value) || /^\/cases\/[1-9]\d{0,8}$/.test(value))) return value;
  return date === undefined ? '/day' : `/day?date=${date}`;
}

/** A refusal written for the command line, reworded for a page: fields instead of options. */
export function forBrowser(message: string): string {
  return message
    .replace(/^(match add|match undo) needs --note TEXT: say why, for the record\.$/, 'A note is required: say why, for the record. Nothing was changed.')
    .replace('match add needs at least one --books ID and one --statement ID.', 'Pick at least one books entry and one statement entry. Nothing was changed.')
    .replace('--note is required', 'A note is required')
    .replace('(match undo ID --note TEXT)', '("Undo match" with a note)')
    .replaceAll('--expected-clear', 'The expected clearing date')
    .replaceAll('--amount', 'The amount')
    .replaceAll('--currency', 'The currency')
    .replaceAll('--kind', 'The kind')
    .replaceAll('--date', 'The date')
    .replaceAll('--books', 'Books entry')
    .replaceAll('--statement', 'Statement entry')
    .replace(/If the closed day must change, an approver reopens it first: wallet-recon signoff reopen .*$/, 'If the closed day must change, an approver reopens it first ("Reopen sign-off" on the day view).');
}

const listOf = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]).flatMap((x) => x.split(',')).map((x) => x.trim()).filter((x) => x !== '');

/**
 * POST /items, /items/:id/clear, /matches and /matches/:id/undo: the console's hand on what
 * explains a difference, through the same functions as `items add|clear` and `match add|undo`.
 * Each is audited in the transaction of the change; a viewer is refused (an auditor already by
 * the console's hook); a refusal (no note, a locked date, amounts that disagree) is said on the
 * page the person came from, and nothing is changed.
 */
export function registerItemsRoutes(app: FastifyInstance, deps: ItemsRouteDeps): void {
  const { ctx } = deps;
  const mayAct = async (request: FastifyRequest, action: string, target: string) => {
    const user = request.session!.user;
    if (mayActOnCases(user.role)) return user;
    await deps.audit(request, action, 'refused', target, { reason: `${user.role} role` });
    throw deps.refuse(403, `Refused: "${user.name}" has the ${user.role} role and can look at everything but change nothing. Nothing was changed.`);
  };
  const done = (request: FastifyRequest, reply: FastifyReply, back: string, text: string) => {
    setFlashNotice(reply, { kind: 'ok', text }, deps.secureCookies(request));
    return reply.redirect(back, 303);
  };
  /** Runs an action; a refusal of the rules is audited and said on the page the person came from. */
  const attempt = async (request: FastifyRequest, reply: FastifyReply, back: string, action: string, target: string, run: () => Promise<string>) => {
    let text: string;
    try {
      text = await run();
    } catch (error) {
      if (!(error instanceof UsageError) && !(error instanceof DateLockedError)) throw error;
      await deps.audit(request, action, 'refused', target, { reason: error.message });
      setFlashNotice(reply, { kind: 'error', text: `Refused: ${forBrowser(error.message)}` }, deps.secureCookies(request));
      return reply.redirect(back, 303);
    }
    // Results changed: a prepared sign-off of the date is said to be stale at once.
    await detectSignoffChanges(ctx);
    return done(request, reply, back, text);
  };
  const text = (max: number) => ({ type: 'string', maxLength: max }) as const;
  const idParams = { type: 'object', properties: { id: { type: 'integer', minimum: 1, maximum: 999_999_999 } }, required: ['id'] } as const;

  app.post<{ Body: { account: string; currency?: string; date: string; kind?: string; amount?: string; expected_clear?: string; note?: string; evidence?: string; back?: string } }>(
    '/items',
    {
      schema: {
        body: {
          type: 'object',
          properties: { account: text(64), currency: text(3), date: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' }, kind: text(20), amount: text(40), expected_clear: text(10), note: text(4000), evidence: text(1000), back: text(100), _csrf: { type: 'string' } },
          required: ['account', 'date'],
        },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const target = `${b.account} ${b.currency ?? ''} ${b.date}`;
      const user = await mayAct(request, 'item.add', target);
      const blank = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim());
      return attempt(request, reply, backOf(b.back, b.date), 'item.add', target, async () => {
        if (blank(b.amount) === undefined) throw new UsageError('The amount is required: a signed decimal such as 123.45 or -2.50.');
        const { id } = await addItem(ctx, {
          account: b.account,
          currency: (b.currency ?? '').trim(),
          date: b.date,
          kind: (b.kind ?? '').trim(),
          amount: b.amount!,
          expectedClear: blank(b.expected_clear),
          note: b.note,
          evidence: blank(b.evidence),
          actor: user.name,
          alsoInTransaction: (trx, itemId) =>
            insertAudit(trx, { at: ctx.clock.now(), userName: user.name, address: request.ip, action: 'item.add', target, outcome: 'ok', detail: { item: itemId, kind: b.kind, amount: b.amount, expected_clear: blank(b.expected_clear) ?? null, note: b.note?.trim() ?? null } }),
        });
        return `Item #${id} added by ${user.name}: ${b.account} ${b.currency} from ${b.date}; the dates from then on were reconciled again.`;
      });
    },
  );

  app.post<{ Params: { id: number }; Body: { note?: string; back?: string } }>(
    '/items/:id/clear',
    { schema: { params: idParams, body: { type: 'object', properties: { note: text(4000), back: text(100), _csrf: { type: 'string' } } } } },
    async (request, reply) => {
      const { id } = request.params;
      const user = await mayAct(request, 'item.clear', `item #${id}`);
      return attempt(request, reply, backOf(request.body.back, undefined), 'item.clear', `item #${id}`, async () => {
        const { description } = await clearReconcilingItem(ctx, {
          id,
          note: request.body.note,
          actor: user.name,
          alsoInTransaction: (trx, item) =>
            insertAudit(trx, { at: ctx.clock.now(), userName: user.name, address: request.ip, action: 'item.clear', target: `item #${id}`, outcome: 'ok', detail: { account: item.account, currency: item.currency, note: request.body.note?.trim() ?? null } }),
        });
        return `Item ${description} cleared by ${user.name}.`;
      });
    },
  );

  app.post<{ Body: { books?: string | string[]; statement?: string | string[]; note?: string; back?: string } }>(
    '/matches',
    {
      schema: {
        body: {
          type: 'object',
          properties: {
            books: { anyOf: [text(20), { type: 'array', items: text(20), maxItems: 200 }] },
            statement: { anyOf: [text(20), { type: 'array', items: text(20), maxItems: 200 }] },
            note: text(4000),
            back: text(100),
            _csrf: { type: 'string' },
          },
        },
      },
    },
    async (request, reply) => {
      const books = listOf(request.body.books);
      const statement = listOf(request.body.statement);
      const target = `books ${books.join(', ')} with statement ${statement.join(', ')}`;
      const user = await mayAct(request, 'match.add', target);
      return attempt(request, reply, backOf(request.body.back, undefined), 'match.add', target, async () => {
        // addManualMatch writes the audit row (with this address) in the transaction of the match.
        const made = await addManualMatch(ctx, { books, statement, note: request.body.note, actor: user.name, address: request.ip });
        return `Match ${made.id} made by ${user.name}: books ${made.books.join(', ')} with statement ${made.statement.join(', ')} (${made.account} ${made.businessDate}).`;
      });
    },
  );

  app.post<{ Params: { id: number }; Body: { note?: string; back?: string } }>(
    '/matches/:id/undo',
    { schema: { params: idParams, body: { type: 'object', properties: { note: text(4000), back: text(100), _csrf: { type: 'string' } } } } },
    async (request, reply) => {
      const { id } = request.params;
      const user = await mayAct(request, 'match.undo', `match ${id}`);
      return attempt(request, reply, backOf(request.body.back, undefined), 'match.undo', `match ${id}`, async () => {
        const undone = await undoMatch(ctx, { id: String(id), note: request.body.note, actor: user.name, address: request.ip });
        return `Match ${undone.id} undone by ${user.name}: its entries are unmatched again (${undone.account} ${undone.businessDate}).`;
      });
    },
  );
}
