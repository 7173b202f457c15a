import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.js';
import { addDays } from '../business-date/zoned-time.js';
import { allAccountNames } from '../config/index.js';
import { findLatestDateWithWork, listAccountDateFacts, listAccountsWithData, listRecentBalances, listSignoffStatesOfRange, type BalancePoint } from '../db/overview.repository.js';
import { latestClosedDateOf, todayOf } from '../reconciliation/business-dates.js';
import { balanceTrendSvg } from './balance-trend.js';
import { problemsToShow } from '../signoff/signoff-integrity.js';
import { cellKey, cellStateOf, OVERVIEW_DATES, overviewPage, type OverviewView } from './overview-page.js';
import type { PageContext } from './pages.js';

/** How many business dates back the day view's balance trend reaches. */
const TREND_DATES = 14;

/**
 * The accounts the console lists: every account with data, configured or not (a database filled
 * by the demo or by another configuration is shown as it is), and every configured account — but
 * the implicit single account "default" only once it has data, so an unconfigured console on the
 * demo's database does not show an empty "default".
 */
export async function consoleAccounts(ctx: AppContext): Promise<string[]> {
  const withData = await listAccountsWithData(ctx.database.db);
  const configured = allAccountNames(ctx.config);
  const implicitDefault = configured.length === 1 && configured[0] === 'default';
  const names = new Set([...withData, ...(implicitDefault ? [] : configured)]);
  if (names.size === 0) names.add(configured[0] ?? 'default');
  return [...names].sort();
}

/** The day the day view opens without a date: the latest with results or owed work, else the latest closed one. */
export async function defaultDayOf(ctx: AppContext): Promise<string> {
  return (await findLatestDateWithWork(ctx.database.db, todayOf(ctx).date)) ?? latestClosedDateOf(ctx);
}

/** The overview's newest date: the latest closed date, or a later one that already has results (the demo's). */
async function overviewEndOf(ctx: AppContext): Promise<string> {
  const latestClosed = latestClosedDateOf(ctx);
  const withWork = await findLatestDateWithWork(ctx.database.db, todayOf(ctx).date);
  return withWork !== undefined && withWork > latestClosed ? withWork : latestClosed;
}

/** Each account's and currency's balance trend up to a date, as inline SVG by `${account}\u0000${currency}`. */
export async function recentTrends(ctx: AppContext, accounts: readonly string[], date: string): Promise<Map<string, string>> {
  const series = new Map<string, BalancePoint[]>();
  for (const point of await listRecentBalances(ctx.database.db, accounts, addDays(date, -(TREND_DATES - 1)), date)) {
    const key = `${point.account}\u0000${point.currency}`;
    const own = series.get(key);
    if (own === undefined) series.set(key, [point]);
    else own.push(point);
  }
  const out = new Map<string, string>();
  for (const [key, points] of series) {
    const svg = balanceTrendSvg(points[0]!.currency, points);
    if (svg !== '') out.set(key, svg);
  }
  return out;
}

/** A date's sign-off state as the overview shows it: `broken seal` when it does not verify. */
function stateShown(signoff: { state: 'approved' | 'prepared' | 'changed after sign-off'; signoffId: number } | undefined, broken: ReadonlyMap<number, string>) {
  if (signoff === undefined) return undefined;
  return broken.has(signoff.signoffId) ? ('broken seal' as const) : signoff.state;
}

/** GET /overview: accounts × the last 14 business dates. */
export function registerOverviewRoutes(app: FastifyInstance, deps: { ctx: AppContext; pageOf: (request: FastifyRequest) => PageContext }): void {
  const { ctx } = deps;
  app.get('/overview', async (request, reply) => {
    const last = await overviewEndOf(ctx);
    const dates = Array.from({ length: OVERVIEW_DATES }, (_, i) => addDays(last, i - (OVERVIEW_DATES - 1)));
    const accounts = await consoleAccounts(ctx);
    const facts = await listAccountDateFacts(ctx.database.db, accounts, dates[0]!, last);
    const signoffs = await listSignoffStatesOfRange(ctx.database.db, dates[0]!, last);
    const broken = await problemsToShow(ctx.database.db, ctx.config, [...signoffs.values()].map((s) => s.signoffId));
    const cells: OverviewView['cells'] = new Map();
    for (const account of accounts) {
      for (const date of dates) {
        const f = facts.find((x) => x.account === account && x.businessDate === date);
        cells.set(cellKey(account, date), { state: cellStateOf(f, stateShown(signoffs.get(date), broken)), unmatched: f?.unmatched ?? 0 });
      }
    }
    return reply.type('text/html; charset=utf-8').send(overviewPage({ dates, accounts, cells }, deps.pageOf(request)));
  });
}
