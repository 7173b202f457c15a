// The console's only script and style sheet, served from /assets/ so the Content-Security-Policy
// can forbid inline code. Kept as strings so the bundled CLI carries them without a files folder.

/** Progressive enhancement only: every page works without it. */
export const CONSOLE_JS = `'use strict';
document.addEventListener('DOMContentLoaded', function () {
  // Filters apply as soon as a choice changes.
  document.querySelectorAll('select.auto-submit').forEach(function (select) {
    select.addEventListener('change', function () { if (select.form) select.form.submit(); });
  });
  // A form is sent once: a double click must not record an action twice.
  document.querySelectorAll('form[method="post"]').forEach(function (form) {
    form.addEventListener('submit', function () {
      form.querySelectorAll('button[type="submit"]').forEach(function (b) { setTimeout(function () { b.disabled = true; }, 0); });
    });
  });
});
`;

export const CONSOLE_CSS = `* { box-sizing: border-box; }
body { font-family: system-ui, sans-serif; margin: 0; color: #222; font-size: 14px; }
header { display: flex; align-items: center; gap: 1rem; padding: 0.5rem 1.5rem; background: #1f2937; color: #fff; }
header a { color: #fff; margin-right: 0.8rem; }
header nav { display: flex; align-items: center; gap: 0.5rem; flex: 1; }
header .who { margin-left: auto; }
.brand { font-weight: 700; }
main { max-width: 1280px; margin: 0 auto; padding: 1rem 1.5rem; }
h1 { font-size: 1.4rem; }
h2 { font-size: 1.1rem; border-bottom: 1px solid #ccc; margin-top: 1.5rem; }
table { border-collapse: collapse; width: 100%; font-size: 13px; margin: 0.5rem 0 1rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.45rem; text-align: left; vertical-align: top; }
thead th { background: #f3f3f3; }
td.amount, th.amount, dd.amount { text-align: right; font-variant-numeric: tabular-nums; font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
td.nowrap { white-space: nowrap; }
code { overflow-wrap: anywhere; }
tr.status-break td, tr.status-endpoint_mismatch td { background: #fde8e8; }
tr.status-missing_in_ledger td, tr.status-missing_in_gateway td, tr.status-no_snapshot td, tr.status-disappeared td { background: #fff6db; }
form.inline { display: inline; }
form.login { display: grid; grid-template-columns: max-content 18rem; gap: 0.5rem 1rem; align-items: center; }
form.login button { grid-column: 2; justify-self: start; }
form.filters { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: end; }
.actions { display: grid; grid-template-columns: repeat(3, 1fr); gap: 0.8rem; }
.actions form { border: 1px solid #ddd; padding: 0.5rem; display: flex; flex-direction: column; gap: 0.3rem; }
.actions textarea { width: 100%; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; }
dl.facts dd { margin: 0; text-align: left; }
.notice { padding: 0.5rem 0.8rem; border-radius: 4px; }
.notice.ok { background: #e6f4ea; }
.notice.error { background: #fde8e8; }
.changed { background: #fff6db; padding: 0.3rem 0.8rem; border-left: 4px solid #9a6700; }
button { cursor: pointer; }
.hint { color: #555; }
svg.trend { vertical-align: middle; margin-left: 0.5rem; }
#overview td.cell { text-align: center; white-space: nowrap; padding: 0.2rem 0.3rem; }
#overview th.date { text-align: center; }
#overview td.cell a, .legend .cell { color: inherit; text-decoration: none; display: block; }
.legend .cell { display: inline-block; padding: 0.1rem 0.4rem; margin: 0.1rem; border: 1px solid #ccc; }
.cell.state-matched { background: #e6f4ea; }
.cell.state-signed-off { background: #cfe8d5; }
.cell.state-breaks, .cell.state-missed { background: #fde8e8; }
.cell.state-awaiting-books, .cell.state-awaiting-statement, .cell.state-owed { background: #fff6db; }
.cell.state-accepted, .cell.state-explained, .cell.state-immaterial { background: #eef3e2; }
.cell.state-changed-after-sign-off { background: #ffe2b8; }
.cell.state-broken-seal { background: #f8c9c9; font-weight: bold; }
.cell.state-nothing-yet { color: #888; }
tr.status-explained td { background: #eef3e2; }
table.waterfall { width: auto; min-width: 24rem; }
table.waterfall caption { text-align: left; font-weight: 600; padding: 0.2rem 0; }
table.waterfall tr.item-kind th { font-weight: normal; padding-left: 1.2rem; }
table.waterfall tr.unexplained th, table.waterfall tr.unexplained td { font-weight: 700; border-top: 2px solid #888; }
tr.item-overdue td { background: #fde8e8; }
details.explain { margin: 0.5rem 0 1rem; }
details.explain summary { cursor: pointer; font-weight: 600; }
form.add-item fieldset, form.match { display: flex; flex-wrap: wrap; gap: 0.4rem 1rem; align-items: end; border: 1px solid #ddd; padding: 0.5rem; margin: 0.5rem 0; }
.unmatched { display: flex; gap: 2rem; width: 100%; }
.unmatched ul { list-style: none; padding-left: 0; margin: 0.2rem 0; }
#trail tr.appeared td { background: #fde8e8; }
#trail tr.changed td { background: #fff6db; }
`;
