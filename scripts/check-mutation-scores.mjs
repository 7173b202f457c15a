// After `stryker run`: fails when any mutated file scores below the threshold. Stryker's own
// `thresholds.break` applies to the total only, where one strong file can hide a weak one.
// Prints every file's score (killed or timed out over all valid mutants) and the total.
import { readFileSync } from 'node:fs';

const THRESHOLD = 90;
const report = JSON.parse(readFileSync('reports/mutation/mutation.json', 'utf8'));
const below = [];
const lines = [];
let totalDetected = 0;
let totalValid = 0;
for (const [file, { mutants }] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
  const count = (status) => mutants.filter((m) => m.status === status).length;
  const detected = count('Killed') + count('Timeout');
  const valid = detected + count('Survived') + count('NoCoverage');
  const score = valid === 0 ? 100 : (detected / valid) * 100;
  totalDetected += detected;
  totalValid += valid;
  lines.push(`${score.toFixed(2).padStart(6)} %  ${String(detected).padStart(4)}/${String(valid).padEnd(4)}  ${file}${count('NoCoverage') > 0 ? ` (${count('NoCoverage')} reached by no test)` : ''}`);
  if (score < THRESHOLD) below.push(`${file}: ${score.toFixed(2)} %`);
}
const total = totalValid === 0 ? 100 : (totalDetected / totalValid) * 100;
console.log(`${lines.join('\n')}\n${total.toFixed(2).padStart(6)} %  ${String(totalDetected).padStart(4)}/${String(totalValid).padEnd(4)}  all files`);
if (below.length > 0) {
  console.error(`Mutation score below ${THRESHOLD} % in:\n${below.map((line) => `  ${line}`).join('\n')}\nSee reports/mutation/mutation.html for the surviving mutants.`);
  process.exitCode = 1;
} else {
  console.log(`Every mutated file scores at least ${THRESHOLD} %.`);
}
