import type { Kysely } from 'kysely';
import type { ToleranceSettings } from '../config/index.js';
import type { Database } from '../db/database.types.js';
import { inReportSnapshot } from '../db/report-stream.repository.js';
import { streamJson } from './render-json.js';
import { streamReportResults, streamSummary, type ReportRange, type ReportSummary, type SummaryOptions } from './report-data.js';

/**
 * The JSON report of a range as chunks of text, in two passes over a cursor (the summary is
 * tallied first, then the results are written as the second reads them: a batch in memory,
 * whatever the range), both in one read-only REPEATABLE READ transaction, so the summary counts
 * exactly the results listed under it even while results are written meanwhile. `onSummary`
 * gets the summary before its text is written (for the exit code and the closing message).
 */
export function streamJsonReport(
  db: Kysely<Database>,
  range: ReportRange,
  options: SummaryOptions & { today: string },
  settings: { tolerance?: ToleranceSettings; signal?: AbortSignal; onSummary?: (summary: ReportSummary) => void } = {},
): AsyncGenerator<string> {
  return inReportSnapshot(db, async function* (trx) {
    const summary = await streamSummary(trx, range, { ...options, signal: settings.signal });
    settings.onSummary?.(summary);
    yield* streamJson(summary, streamReportResults(trx, range, options.today, undefined, settings.signal), { tolerance: settings.tolerance });
  });
}
