/**
 * `npm run bench -- <name…> [options]`: runs the named benchmarks (all when none is named) and
 * prints their figures as JSON and as a table. Every benchmark receives all the arguments and
 * reads its own options (e.g. `npm run bench -- operator --sizes 1000 --command "…"`,
 * `npm run bench -- startup --runs 10 --skip install`,
 * `npm run bench -- engines --sizes 1000 --variants none,both`,
 * `npm run bench -- admission --objects 2000 --skip overhead`,
 * `npm run bench -- conversion --window 5 --concurrency 4`,
 * `npm run bench -- chaos --objects 500 --versus "…"`,
 * `npm run bench -- inputs --crds <dir> --objects <dir> --type body`,
 * `npm run bench -- security --parts webhooks,secrets`,
 * `npm run bench -- persistence --objects 10000 --rounds 3`,
 * `npm run bench -- devloop --saves 10 --test-runs 3`,
 * `npm run bench -- reconcile --objects 1000`,
 * `npm run bench -- sharding --objects 2000 --replicas 1,2,4 --lease-duration 6`,
 * `npm run bench -- rollouts --objects 20000 --replicas 2,4,8`).
 */
import * as report from './report.js';

const BENCHMARKS: Record<string, (args: readonly string[]) => Promise<report.Result>> = {
  devcluster: async () => (await import('./devcluster.js')).run(),
  operator: async (args) => (await import('./operator.js')).run(args),
  generator: async () => (await import('./generator.js')).run(),
  startup: async (args) => (await import('./startup.js')).run(args),
  engines: async (args) => (await import('./engines.js')).run(args),
  admission: async (args) => (await import('./admission.js')).run(args),
  conversion: async (args) => (await import('./conversion.js')).run(args),
  chaos: async (args) => (await import('./chaos.js')).run(args),
  inputs: async (args) => (await import('./inputs.js')).run(args),
  security: async (args) => (await import('./security.js')).run(args),
  persistence: async (args) => (await import('./persistence.js')).run(args),
  devloop: async (args) => (await import('./devloop.js')).run(args),
  reconcile: async (args) => (await import('./reconcile.js')).run(args),
  sharding: async (args) => (await import('./sharding.js')).run(args),
  rollouts: async (args) => (await import('./rollouts.js')).run(args),
};

const args = process.argv.slice(2);
// Names are the arguments that are neither options nor an option's value (`--x value`).
const names = args.filter((a, i) => !a.startsWith('-') && (a in BENCHMARKS || !(args[i - 1]?.startsWith('--') && !args[i - 1]!.includes('='))));
const unknown = names.filter((n) => !(n in BENCHMARKS));
if (unknown.length) {
  process.stderr.write(`unknown benchmark(s): ${unknown.join(', ')}; available: ${Object.keys(BENCHMARKS).join(', ')}\n`);
  process.exit(2);
}
for (const name of names.length ? names : Object.keys(BENCHMARKS)) report.print(await BENCHMARKS[name]!(args));
