import type { AppContext } from '../app-context.js';
import { allAccountNames } from '../config/index.js';
import { listBlockingCases } from '../db/signoff.repository.js';
import { DateNotSettledError } from '../errors.js';
import { SYSTEM_ACTOR } from '../cases/case-model.js';
import { findUnsettledAccounts } from './settle-check.js';
import { approveSignoff, prepareSignoff, signoffStateOf, SignoffRefusedError } from './signoff-service.js';

/** Who approves a date by rule (`certify: auto` on every account of it). */
export const AUTO_CERTIFY_ACTOR = 'auto-certify';

/** Results that leave nothing for a person: agreed, explained by reconciling items, or immaterial. */
const CLEAN = ['matched', 'explained', 'immaterial'];

/**
 * Days that prepare themselves (issue 45): each date given that is settled (every account's
 * results final) and clean (every result matched, explained or immaterial; no case blocking) and
 * not signed yet is prepared by `wallet-recon`, sealed like any other, so an approver only
 * approves. When every account of it has `certify: auto` in the accounts file it is also approved
 * by rule (approver `auto-certify`); a date with anything not clean never is. Never throws:
 * a date that cannot be prepared now is tried again by the next reconcile. Returns what it did.
 */
export async function prepareCleanDates(ctx: AppContext, dates: readonly string[]): Promise<Array<{ businessDate: string; step: 'prepared' | 'approved' }>> {
  const done: Array<{ businessDate: string; step: 'prepared' | 'approved' }> = [];
  if (!ctx.config.quiet.autoPrepare) return done;
  const accounts = allAccountNames(ctx.config);
  for (const businessDate of [...new Set(dates)].sort()) {
    try {
      const { state } = await signoffStateOf(ctx, businessDate);
      // A date a person reopened is theirs to sign again; one already prepared or approved has nothing to do.
      if (state !== 'not signed' && state !== 'changed after sign-off') continue;
      if ((await findUnsettledAccounts(ctx, accounts, businessDate)).length > 0) continue;
      const statuses = await ctx.database.db.selectFrom('reconciliation_results').select('status').distinct().where('business_date', '=', businessDate).where('account', 'in', accounts).execute();
      if (statuses.length === 0 || !statuses.every((s) => CLEAN.includes(s.status))) continue;
      if ((await listBlockingCases(ctx.database.db, accounts, businessDate)).length > 0) continue;
      await prepareSignoff(ctx, { name: SYSTEM_ACTOR, role: 'preparer' }, businessDate, null);
      done.push({ businessDate, step: 'prepared' });
      ctx.logger.info({ businessDate }, `${businessDate} is settled and clean: prepared for sign-off by ${SYSTEM_ACTOR}`);
      const certified = ctx.config.accounts.every((a) => a.certify === 'auto') && ctx.config.bankAccounts.every((b) => b.certify === 'auto');
      if (!certified) continue;
      await approveSignoff(ctx, { id: -1, name: AUTO_CERTIFY_ACTOR, role: 'approver' }, businessDate, null);
      done.push({ businessDate, step: 'approved' });
      ctx.logger.info({ businessDate }, `${businessDate} approved by rule ${AUTO_CERTIFY_ACTOR}: every account of it has certify: auto`);
    } catch (error) {
      if (error instanceof SignoffRefusedError || error instanceof DateNotSettledError) continue;
      ctx.logger.warn({ err: error, businessDate }, `could not prepare ${businessDate} for sign-off automatically; the next reconcile tries again`);
    }
  }
  return done;
}

/**
 * The worker's minute: every date of the last 45 days with results and no sign-off standing is
 * looked at, so a date that became settled and clean by anything (a night, a backfill, corrected
 * books, a resolved case) is prepared within a minute.
 */
export async function prepareCleanRecentDates(ctx: AppContext, today: string): Promise<void> {
  if (!ctx.config.quiet.autoPrepare) return;
  const since = new Date(Date.parse(`${today}T00:00:00Z`) - 45 * 86_400_000).toISOString().slice(0, 10);
  const rows = await ctx.database.db
    .selectFrom('reconciliation_results')
    .select('business_date')
    .distinct()
    .where('business_date', '>=', since)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('signoffs')
            .innerJoin('signoff_states', 'signoff_states.signoff_id', 'signoffs.id')
            .select('signoffs.id')
            .whereRef('signoffs.business_date', '=', 'reconciliation_results.business_date')
            .where('signoff_states.invalidated_at', 'is', null)
            .where('signoff_states.reopened_at', 'is', null),
        ),
      ),
    )
    .execute();
  await prepareCleanDates(
    ctx,
    rows.map((r) => String(r.business_date)),
  );
}
