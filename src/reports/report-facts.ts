import type { Kysely } from 'kysely';
import type { Config, ToleranceSettings } from '../config/index.js';
import type { Database } from '../db/database.types.js';
import { listBooksImportsByIds } from '../db/expected-balance.repository.js';
import { listRunsByIds } from '../db/snapshot-run.repository.js';
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
  /** Start minus cut-off in seconds, negative before it. */
  driftSeconds: number | null;
}

/** Which books file one account's business date was reconciled against. */
export interface BooksFact {
  account: string;
  businessDate: string;
  importId: number;
  source: string;
  importedAt: Date;
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
  /** A sealed report's preparer and preparation time (a sign-off); absent on an ordinary report. */
  preparer?: { name: string; at: Date };
}

/** Reads the runs and books imports the results name, for the report's header. */
export async function loadReportFacts(
  db: Kysely<Database>,
  results: readonly ReconciliationResult[],
  config: Pick<Config, 'timezone' | 'cutoff' | 'tolerance'>,
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
  const imports = new Map((await listBooksImportsByIds(db, [...new Set([...importKeys.values()].map((k) => k.importId))])).map((i) => [i.id, i]));
  const captures = runs
    .map((run) => ({
      account: run.account,
      businessDate: run.business_date,
      runId: run.id,
      capturedAt: run.started_at,
      trigger: run.trigger,
      endOfDay: run.end_of_day,
      driftSeconds: run.cutoff_drift_seconds,
    }))
    .sort((a, b) => a.businessDate.localeCompare(b.businessDate) || a.account.localeCompare(b.account));
  const books = [...importKeys.values()]
    .flatMap((k) => {
      const found = imports.get(k.importId);
      return found === undefined ? [] : [{ ...k, source: found.source, importedAt: found.importedAt }];
    })
    .sort((a, b) => a.businessDate.localeCompare(b.businessDate) || a.account.localeCompare(b.account));
  return { generatedAt, timezone: config.timezone, cutoff: config.cutoff, tolerance: config.tolerance, captures, books };
}

/**
 * The tolerance that applied, in words for a report's header: "0.01 by default; JPY 1; or 5 bps
 * of the balance when that is larger (in major units)", or "none (exact match)".
 */
export function describeTolerance(tolerance: ToleranceSettings, currencies: readonly string[] = []): string {
  const isZero = (text: string) => /^0+(\.0+)?$/.test(text);
  const overrides = Object.entries(tolerance.byCurrency)
    .filter(([currency]) => currencies.length === 0 || currencies.includes(currency))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, value]) => `${currency} ${value}`);
  const relative = tolerance.bps === 0 ? [] : [`or ${tolerance.bps} bps of the balance when that is larger`];
  if (isZero(tolerance.default) && overrides.length === 0 && relative.length === 0) return 'none (exact match)';
  return `${[`${isZero(tolerance.default) ? 'none (exact match)' : tolerance.default} by default`, ...overrides, ...relative].join('; ')} (in major units)`;
}
