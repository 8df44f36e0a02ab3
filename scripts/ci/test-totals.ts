// Sums the vitest JSON reports .ci/run writes, one per suite, and prints the totals as the plain
// closing line CI reads ("tests: N passed, N failed, N skipped"): vitest's own summary is not a
// format CI recognises, so without this line a green run is judged by its exit code alone.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

const report = z.object({
  numPassedTests: z.number(),
  numFailedTests: z.number(),
  numPendingTests: z.number(),
  numTodoTests: z.number(),
});

const dir = process.argv[2];
if (!dir) {
  console.error('usage: tsx scripts/ci/test-totals.ts <folder of vitest JSON reports>');
  process.exit(2);
}

let passed = 0;
let failed = 0;
let skipped = 0;
const files = readdirSync(dir)
  .filter((name) => name.endsWith('.json'))
  .sort();
for (const name of files) {
  const r = report.parse(JSON.parse(readFileSync(join(dir, name), 'utf8')));
  console.log(`${name.replace(/\.json$/, '')}: ${r.numPassedTests} passed, ${r.numFailedTests} failed`);
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += r.numPendingTests + r.numTodoTests;
}
// A missing report is a suite that never ran: fail rather than print a total that hides it.
if (files.length === 0) {
  console.error(`no vitest reports in ${dir}`);
  process.exit(1);
}
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 ? 1 : 0);
