import { renderBalanceChartSvg } from './balance-chart-svg.js';
import { escapeHtml } from './escape-html.js';
import { amountText, type StoredReconciliationResult } from './reconciliation-result.js';
import type { CurrencyHistory, Report } from './report-data.js';
import { caseCells, describeCases, describeUnreconciled, SUMMARY_COLUMNS } from './render-table.js';

// Inline only: the file is mailed and archived, so it must open with no network at all.
const STYLE = `
body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { border: 1px solid #ccc; padding: 0.3rem 0.6rem; text-align: left; }
td.amount { text-align: right; font-variant-numeric: tabular-nums; font-family: ui-monospace, monospace; }
tr.status-break td, tr.status-endpoint_mismatch td { background: #fde8e8; }
tr.status-missing_in_ledger td, tr.status-missing_in_gateway td, tr.status-no_snapshot td, tr.status-disappeared td { background: #fff6db; }
.chart-title { font-weight: bold; font-size: 14px; }
.x-label, .y-label, .legend { font-size: 11px; fill: #333; }
.ok { color: #1a7f37; }
.warn { color: #9a6700; }
tr.case-accepted td { background: #eef3fb; }`;

/** One self-contained HTML page: summary, every result not matched, and per currency an SVG chart. */
export function renderHtml(report: Report<StoredReconciliationResult>, histories: readonly CurrencyHistory[], generatedAt: Date): string {
  const { summary, results } = report;
  const period = summary.from === summary.to ? summary.from : `${summary.from} to ${summary.to}`;
  const title = `Reconciliation ${period}${summary.account === null ? '' : ` — ${summary.account}`}`;
  const unmatched = results.filter((r) => r.status !== 'matched');

  const summaryRows = summary.accounts
    .map((a) => `<tr><td>${escapeHtml(a.account)}</td>${SUMMARY_COLUMNS.map((c) => `<td class="amount">${c.count(a.counts)}</td>`).join('')}</tr>`)
    .join('\n');
  const breakRows = unmatched
    .map(
      (r) =>
        `<tr class="status-${escapeHtml(r.status)}${r.case?.state === 'accepted' ? ' case-accepted' : ''}"><td>${escapeHtml(r.businessDate)}</td><td>${escapeHtml(r.account)}</td><td>${escapeHtml(r.currency ?? '')}</td><td>${escapeHtml(r.status)}</td>` +
        [r.gatewayBalance, r.singleBalance, r.expectedBalance, r.difference, r.movement].map((v) => `<td class="amount">${amountText(v) ?? ''}</td>`).join('') +
        `<td>${r.runId ?? ''}</td>` +
        caseCells(r)
          .map((cell, i) => `<td${i === 2 ? ' class="amount"' : ''}>${escapeHtml(cell)}</td>`)
          .join('') +
        '</tr>',
    )
    .join('\n');
  const unreconciled = describeUnreconciled(summary);
  const unreconciledList =
    unreconciled.length === 0 ? '' : `\n<ul id="unreconciled" class="warn">\n${unreconciled.map((line) => `<li>${escapeHtml(line)}</li>`).join('\n')}\n</ul>`;
  const caseLines = describeCases(summary);
  const caseList = caseLines.length === 0 ? '' : `\n<ul id="cases">\n${caseLines.map((line) => `<li>${escapeHtml(line)}</li>`).join('\n')}\n</ul>`;
  const charts = histories.map((h) => `<figure>\n${renderBalanceChartSvg(h)}\n</figure>`).join('\n');

  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p>Generated ${escapeHtml(generatedAt.toISOString())}. Amounts are in minor units of each currency.</p>
<h2>Summary</h2>
${
  results.length === 0
    ? '<p>No reconciliation results are stored for this period.</p>'
    : `<table id="summary">
<thead><tr><th>account</th>${SUMMARY_COLUMNS.map((c) => `<th>${escapeHtml(c.header)}</th>`).join('')}</tr></thead>
<tbody>
${summaryRows}
</tbody>
</table>`
}${caseList}${unreconciledList}
<h2>Breaks and missing balances</h2>
${
  unmatched.length === 0
    ? `<p class="ok">${results.length === 0 ? 'Nothing to show.' : unreconciled.length === 0 ? 'Every result matched.' : 'Every stored result matched, but not every date was reconciled.'}</p>`
    : `<table id="breaks">
<thead><tr><th>business date</th><th>account</th><th>currency</th><th>status</th><th>gateway</th><th>single wallet</th><th>books</th><th>difference</th><th>movement</th><th>run</th><th>case</th><th>case state</th><th>age (days)</th></tr></thead>
<tbody>
${breakRows}
</tbody>
</table>`
}
<h2>Balance history</h2>
${histories.length === 0 ? '<p>No snapshots in this period.</p>' : charts}
</body>
</html>
`;
}
