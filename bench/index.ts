/**
 * `npm run bench -- <name…>`: runs the named benchmarks (all when none is named) and prints
 * their figures as JSON and as a table.
 */
import * as report from './report.js';

const BENCHMARKS: Record<string, () => Promise<report.Result>> = {
  devcluster: async () => (await import('./devcluster.js')).run(),
};

const names = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = names.filter((n) => !(n in BENCHMARKS));
if (unknown.length) {
  process.stderr.write(`unknown benchmark(s): ${unknown.join(', ')}; available: ${Object.keys(BENCHMARKS).join(', ')}\n`);
  process.exit(2);
}
for (const name of names.length ? names : Object.keys(BENCHMARKS)) report.print(await BENCHMARKS[name]!());
