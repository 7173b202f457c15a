// After `stryker run`: fails when any mutated file scores below the threshold. Stryker's own
// `thresholds.break` applies to the total only, where one strong file can hide a weak one.
import { readFileSync } from 'node:fs';

const THRESHOLD = 90;
const report = JSON.parse(readFileSync('reports/mutation/mutation.json', 'utf8'));
const below = [];
for (const [file, { mutants }] of Object.entries(report.files)) {
  const count = (status) => mutants.filter((m) => m.status === status).length;
  const detected = count('Killed') + count('Timeout');
  const valid = detected + count('Survived') + count('NoCoverage');
  const score = valid === 0 ? 100 : (detected / valid) * 100;
  if (score < THRESHOLD) below.push(`${file}: ${score.toFixed(2)} %`);
}
if (below.length > 0) {
  console.error(`Mutation score below ${THRESHOLD} % in:\n${below.map((line) => `  ${line}`).join('\n')}\nSee reports/mutation/mutation.html for the surviving mutants.`);
  process.exitCode = 1;
} else {
  console.log(`Every mutated file scores at least ${THRESHOLD} %.`);
}
