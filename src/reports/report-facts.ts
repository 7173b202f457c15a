import type { Kysely } from 'kysely';
import { capturedDriftSeconds, capturedUnderOtherRules } from '../business-date/capture-drift.js';
import { businessCalendarOf, toleranceAtDecimals, type Config, type ToleranceSettings } from '../config/index.js';
import { currencyDecimals } from '../money/format-amount.js';
import type { Database } from '../db/database.types.js';
import { listStatementsByIds } from '../db/bank-statement.repository.js';
import { listLatestCaseNotes, type CaseNoteRecord } from '../db/reconciliation-case.repository.js';
import { listSignoffsOfDate, type Signoff } from '../db/signoff.repository.js';
import { listBooksImportsByIds } from '../db/expected-balance.repository.js';
import { listRunsByIds } from '../db/snapshot-run.repository.js';
import { listEntryItemsOpenOn, listItemsOpenOn } from '../db/reconciling-item.repository.js';
import type { ReconciliationResult } from '../reconciliation/reconciliation-result.js';

/** When one account's snapshot of one business date was captured, and how near its cut-off. */
export interface CaptureFact {
  account: string;
  businessDate: string;
  runId: number;
  capturedAt: Date;
  trigger: string;
  /** Started inside the date's capture window (null: recorded before capture windows existed). */
  endOfDay: boolean | null;
  /** Reads finished minus the cut-off the run was captured against, in seconds, negative before it. */
  driftSeconds: number | null;
  /** The rules the run was captured under, when the calendar now reads its date otherwise. */
  capturedUnder?: string;
  /** The statement file a backfill imported the day from (null: captured from the gateway). */
  source: string | null;
}

/** Which books file one account's business date was reconciled against. */
export interface BooksFact {
  account: string;
  businessDate: string;
  importId: number;
  source: string;
  importedAt: Date;
}

/** Which bank statement one bank account's business date was reconciled from, and whether it proved. */
export interface StatementFact {
  account: string;
  businessDate: string;
  statementId: string;
  format: string;
  /** The statement's own proof: ok, or what failed (roll_forward_break, sequence_gap, …). */
  proof: string;
  sourceFile: string;
}

/**
 * What a finance document says besides the results: what was compared with what (each date's
 * snapshot and books file), under which rules (tolerance, time zone, cut-off) and when it was made.
 */
export interface ReportFacts {
  generatedAt: Date;
  timezone: string;
  cutoff: string;
  tolerance: ToleranceSettings;
  captures: CaptureFact[];
  books: BooksFact[];
  /** The bank statements the bank accounts' results came from (absent: none). */
  statements?: StatementFact[];
  /** RECON_LOCALE: how amounts are written for people (absent: 1,234.56). */
  locale?: string;
  /** What people wrote on the cases of the results needing attention (absent: not asked). */
  caseNotes?: { latest: CaseNoteRecord[]; acceptances: CaseNoteRecord[] };
  /** The sign-offs of a one-date report, oldest first: its story (prepared, approved, invalidated, reopened). */
  signoffs?: Signoff[];
  /** The open reconciling items of each waterfall (account, date, currency) summed per kind, at the items' scale. */
  itemKinds?: ItemKindFact[];
  /** A sealed report's preparer and preparation time (a sign-off); absent on an ordinary report. */
  preparer?: { name: string; at: Date };
}

/** Open items of one kind on one account, date and currency: their count and signed total. */
export interface ItemKindFact {
  account: string;
  businessDate: string;
  currency: string;
  kind: string;
  count: number;
  total: bigint;
  scale: number;
}

/**
 * The open items behind each result that has some (items_total other than zero, or explained),
 * summed per kind: those people added and, for a bank account, those of its unmatched entries.
 * One pair of queries per date that has such a result.
 */
async function loadItemKinds(db: Kysely<Database>, results: readonly ReconciliationResult[], bankAccounts: Config['bankAccounts']): Promise<ItemKindFact[]> {
  const wanted = results.filter((r) => r.currency !== null && ((r.itemsTotal ?? 0n) !== 0n || r.status === 'explained'));
  const facts: ItemKindFact[] = [];
  for (const date of [...new Set(wanted.map((r) => r.businessDate))].sort()) {
    const ofDate = wanted.filter((r) => r.businessDate === date);
    const accounts = [...new Set(ofDate.map((r) => r.account))];
    const banks = bankAccounts.filter((b) => accounts.includes(b.name)).map((b) => ({ account: b.name, expectedClearDays: b.matching?.expectedClearDays }));
    const items = [...(await listEntryItemsOpenOn(db, banks, date)), ...(await listItemsOpenOn(db, accounts, date))];
    const grouped = new Map<string, ItemKindFact>();
    for (const i of items) {
      if (!ofDate.some((r) => r.account === i.account && r.currency === i.currency)) continue;
      const key = `${i.account}\u0000${i.currency}\u0000${i.kind}\u0000${i.scale}`;
      const seen = grouped.get(key) ?? { account: i.account, businessDate: date, currency: i.currency, kind: i.kind, count: 0, total: 0n, scale: i.scale };
      grouped.set(key, { ...seen, count: seen.count + 1, total: seen.total + i.amount });
    }
    facts.push(...grouped.values());
  }
  return facts;
}

/** Reads the runs and books imports the results name, for the report's header. */
export async function loadReportFacts(
  db: Kysely<Database>,
  results: readonly ReconciliationResult[],
  config: Pick<Config, 'timezone' | 'cutoff' | 'captureWindowMs' | 'tolerance'> & { locale?: string; bankAccounts?: Config['bankAccounts'] },
  generatedAt: Date,
): Promise<ReportFacts> {
  const runIds = [...new Set(results.flatMap((r) => (r.runId === null ? [] : [r.runId])))];
  const importKeys = new Map<string, { account: string; businessDate: string; importId: number }>();
  for (const r of results) {
    if (r.booksImportId !== null && r.booksImportId !== undefined) {
      importKeys.set(`${r.account}\u0000${r.businessDate}\u0000${r.booksImportId}`, { account: r.account, businessDate: r.businessDate, importId: r.booksImportId });
    }
  }
  const runs = await listRunsByIds(db, runIds);
  const calendar = businessCalendarOf(config);
  const imports = new Map((await listBooksImportsByIds(db, [...new Set([...importKeys.values()].map((k) => k.importId))])).map((i) => [i.id, i]));
  const captures = runs
    .map((run) => ({
      account: run.account,
      businessDate: run.business_date,
      runId: run.id,
      capturedAt: run.started_at,
      trigger: run.trigger,
      endOfDay: run.end_of_day,
      driftSeconds: capturedDriftSeconds(calendar, run.business_date, { readsFinishedAt: run.reads_finished_at, startedAt: run.started_at, source: run.source, cutoffAt: run.cutoff_at }),
      capturedUnder: run.source === null ? capturedUnderOtherRules(calendar, run.business_date, { cutoffAt: run.cutoff_at, cutoffTimezone: run.cutoff_timezone }) : undefined,
      source: run.source,
    }))
    .sort((a, b) => a.businessDate.localeCompare(b.businessDate) || a.account.localeCompare(b.account));
  const books = [...importKeys.values()]
    .flatMap((k) => {
      const found = imports.get(k.importId);
      return found === undefined ? [] : [{ ...k, source: found.source, importedAt: found.importedAt }];
    })
    .sort((a, b) => a.businessDate.localeCompare(b.businessDate) || a.account.localeCompare(b.account));
  const statementPks = [...new Set(results.flatMap((r) => (r.bankStatementId === null || r.bankStatementId === undefined ? [] : [r.bankStatementId])))];
  const statements = (await listStatementsByIds(db, statementPks))
    .map((s) => ({ account: s.account, businessDate: s.business_date, statementId: s.statement_id, format: s.format, proof: s.proof, sourceFile: s.source_file }))
    .sort((a, b) => a.businessDate.localeCompare(b.businessDate) || a.account.localeCompare(b.account));
  const caseIds = [...new Set(results.flatMap((r) => (r.case === null || r.case === undefined ? [] : [r.case.id])))];
  const caseNotes = await listLatestCaseNotes(db, caseIds);
  const dates = [...new Set(results.map((r) => r.businessDate))];
  const signoffs = dates.length === 1 ? (await listSignoffsOfDate(db, dates[0]!)).reverse() : [];
  const itemKinds = await loadItemKinds(db, results, config.bankAccounts ?? []);
  return { generatedAt, timezone: config.timezone, cutoff: config.cutoff, tolerance: config.tolerance, captures, books, statements, caseNotes, signoffs, itemKinds, ...(config.locale === undefined ? {} : { locale: config.locale }) };
}

/**
 * The tolerance that applied, in words for a report's header: "0.01 by default; JPY 1; or 5 bps
 * of the balance when that is larger (in major units)", or "none (exact match)". A tolerance with
 * more decimals than a currency of the report has is cut to that currency's minor unit, and the
 * header says so: "0.01 by default; JPY 0 (0.01 rounded down to JPY's whole units: exact match)".
 */
export function describeTolerance(tolerance: ToleranceSettings, currencies: readonly string[] = []): string {
  const isZero = (text: string) => /^0+(\.0+)?$/.test(text);
  const overrides = Object.entries(tolerance.byCurrency)
    .filter(([currency]) => currencies.length === 0 || currencies.includes(currency))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, value]) => `${currency} ${roundedNote(currency, value) ?? value}`);
  const rounded = [...new Set(currencies)]
    .filter((currency) => tolerance.byCurrency[currency] === undefined)
    .sort()
    .flatMap((currency) => {
      const note = roundedNote(currency, tolerance.default);
      return note === undefined ? [] : [`${currency} ${note}`];
    });
  const relative = tolerance.bps === 0 ? [] : [`or ${tolerance.bps} bps of the balance when that is larger`];
  if (isZero(tolerance.default) && overrides.length === 0 && relative.length === 0) return 'none (exact match)';
  return `${[`${isZero(tolerance.default) ? 'none (exact match)' : tolerance.default} by default`, ...overrides, ...rounded, ...relative].join('; ')} (in major units)`;
}

/** "0 (0.01 rounded down to JPY's whole units: exact match)", or undefined when the tolerance fits the currency. */
function roundedNote(currency: string, text: string): string | undefined {
  const decimals = currencyDecimals(currency);
  if (decimals === null) return undefined;
  const applied = toleranceAtDecimals(text, decimals);
  if (applied === text) return undefined;
  const unit = decimals === 0 ? 'whole units' : `${decimals} decimal${decimals === 1 ? '' : 's'}`;
  return `${applied} (${text} rounded down to ${currency}'s ${unit}${/^0+(\.0+)?$/.test(applied) ? ': exact match' : ''})`;
}
