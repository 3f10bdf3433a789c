/**
 * Start-up and footprint benchmark: `npm run bench -- startup [options]`. What a user pays before
 * an operator does any work, measured on the compiled distribution (`dist/`, `generator/dist/`),
 * never through a TypeScript loader: a deployed operator runs compiled JavaScript with plain Node.
 *
 * 1. Ready time and memory at ready (`ready` part). The operator of the `operator` benchmark
 *    (`fixtures/operators/bench.ts`) is compiled with TypeScript's `transpileModule` into
 *    `bench/.build/bench.js` (gitignored), next to an entry `main.js` that imports it and calls
 *    the runtime's `main(import.meta)`, as a generated project's `node dist/main.js -A` does.
 *    Both import `kopf-gen/runtime`, which Node resolves through the package's own `exports` to
 *    `dist/` (checked before measuring). One devcluster runs in its own process (`serve.ts`:
 *    plain HTTP, the Kopf example CRD) and is reused; every run starts a fresh operator process
 *    (`sh -c`, in its own process group, `KUBECONFIG` pointing at the devcluster), and the rows
 *    take turns run by run so that a busy moment of the machine does not fall on one row only.
 *    - `<row>_ready_s`: from just before the process is spawned to the arrival of its first
 *      WATCH request for kopfexamples, as stamped by the devcluster's request log (the request's
 *      arrival time, in the same epoch clock as the spawn time). The devcluster pushes that
 *      record to this process over IPC the moment it is logged, so there is no polling delay.
 *    - `<row>_rss_at_ready_mb`: the sum of VmRSS (/proc/<pid>/status, MiB) over the operator's
 *      process tree, read as soon as the ready message arrives; the kopf-gen rows `exec` node,
 *      so their tree is the one node process. The delay between the request's arrival and the
 *      reading is printed in the notes (`rss_sample_lag_ms_max`).
 *    Figures are medians over `--runs` runs, with `_min` and `_max`. Rows: `main_js` is
 *    `node bench/.build/main.js --all-namespaces --standalone`; `cli_run` is the compiled command
 *    line, `node bin/kopf-gen.js run bench/.build/bench.js --all-namespaces --standalone`;
 *    `kopf_command` is any other operator command given with `--kopf-command "<shell>"` (run the
 *    same way, from the package folder), e.g. Python Kopf with kopf-python's `bench.py`.
 * 2. Type-check time of generated projects (`typecheck` part, see `typechecking.ts`): the seconds
 *    `tsc --noEmit -p tsconfig.json` takes, wall clock, on a project generated from the Kopf
 *    example CRD (`one_kind_…`) and from the largest CRD file of the corpus (`largest_…`), with
 *    TypeScript 5.9 (`tsc59`) and 7 (`tsc7`), median of `--tsc-runs`; `one_kind_tsc59_files` is
 *    how many files tsc loads for the first (its notes list them by package).
 * 3. Strict declarations (`typecheck` part): the one-kind project under `strict`,
 *    `exactOptionalPropertyTypes`, `noUncheckedIndexedAccess`, `noPropertyAccessFromIndexSignature`
 *    and `skipLibCheck: false`; `strict_errors_kopf_gen` counts the errors located in kopf-gen's
 *    package, `strict_errors_other_packages` those in other installed packages, and
 *    `strict_errors_project` those in the project's own files (generated code and handlers).
 * 4. Production install size (`install` part, see `installing.ts`): both packages are packed
 *    (`kopf_gen_tarball_mb`, and `kopf_gen_unpacked_mb` for its files); a fresh folder depending
 *    on the kopf-gen tarball (the generator as a devDependency, as in a generated project) runs
 *    `npm install --omit=dev`; `install_node_modules_mb` is the sum of the apparent sizes of the
 *    files in its node_modules (10^6 bytes), `install_packages` the number of distinct package
 *    names there, and the notes list the largest packages. `install_runtime_only_mb` is the same
 *    install without the generator devDependency: what kopf-gen's own dependencies weigh. This
 *    part needs the npm registry for the dependencies, as any install does.
 * Targets: ready ≤ 0.25 s and ≤ 45 MB RSS at ready (those of the daemons-timers-and-memory
 * issue, applied to the `_mb` figures as printed, which count MiB as the issue's figures did;
 * Python Kopf was measured at 1.18 s / 50 MB), the
 * one-kind type-check ≤ 2 s with TypeScript 5.9, no errors in kopf-gen's declarations, and a
 * production install ≤ 25 MB. The machine's load average is recorded at the start and the end:
 * every figure here is wall-clock time and moves with what else runs.
 *
 * Options: `--runs N` (default 5), `--tsc-runs N` (default 3), `--kopf-command "<shell>"`,
 * `--skip ready|typecheck|install` (repeatable or comma-separated), `--keep` (keep the temporary
 * folder: operator logs, generated projects, tarballs, the install).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as util from 'node:util';
import ts from 'typescript';
import * as installing from './installing.js';
import * as processes from './processes.js';
import * as report from './report.js';
import type * as serve from './serve.js';
import * as servers from './servers.js';
import * as typechecking from './typechecking.js';
import * as optionValues from './options.js';

const ROOT = path.resolve(import.meta.dirname, '..');
/** The compiled operator and its entry point (gitignored). */
const BUILD = path.join(ROOT, 'bench', '.build');
/** The compiled files every part needs; without them the benchmark stops at once. */
const DISTRIBUTION = ['dist/runtime/index.js', 'dist/runtime/index.d.ts', 'dist/cli/main.js', 'generator/dist/index.js'];
const PARTS = ['ready', 'typecheck', 'install'] as const;
type Part = (typeof PARTS)[number];
const READY_TIMEOUT_MS = 60_000;
/** The targets of the kopf-gen rows: seconds to ready, and RSS at ready (the `_mb` figures). */
export const READY_S = 0.25;
export const READY_RSS_MB = 45;
const MIB = 1048576;

export interface Options {
  runs: number;
  tscRuns: number;
  kopfCommand: string | undefined;
  skip: ReadonlySet<Part>;
  keep: boolean;
}

/** Reads this benchmark's options from all the arguments (other benchmarks' options are ignored). */
export function parseOptions(args: readonly string[]): Options {
  const { values } = util.parseArgs({
    args: [...args],
    strict: false,
    allowPositionals: true,
    options: {
      runs: { type: 'string' },
      'tsc-runs': { type: 'string' },
      'kopf-command': { type: 'string' },
      skip: { type: 'string', multiple: true },
      keep: { type: 'boolean' },
    },
  });
  const skip = optionValues.skippedParts(values['skip'], PARTS);
  const command = values['kopf-command'];
  return {
    runs: optionValues.wholeNumber(values['runs'], 5, 'runs'),
    tscRuns: optionValues.wholeNumber(values['tsc-runs'], 3, 'tsc-runs'),
    kopfCommand: typeof command === 'string' && command.trim() ? command : undefined,
    skip,
    keep: values['keep'] === true,
  };
}

/** Stops the benchmark with one line when the compiled distribution is missing. */
function requireDistribution(): void {
  const missing = DISTRIBUTION.filter((file) => !fs.existsSync(path.join(ROOT, file)));
  if (!missing.length) return;
  process.stderr.write(`startup: the compiled distribution is missing (${missing.join(', ')}): run npm run build\n`);
  process.exit(1);
}

/**
 * Compiles the benchmark operator into `bench/.build/` with an entry `main.js`, and checks that
 * `kopf-gen/runtime` resolves from there to the compiled runtime. Returns the resolved file.
 */
function compileOperator(): string {
  fs.rmSync(BUILD, { recursive: true, force: true });
  fs.mkdirSync(BUILD, { recursive: true });
  const source = fs.readFileSync(path.join(ROOT, 'fixtures/operators/bench.ts'), 'utf8');
  const compiled = ts.transpileModule(source, {
    fileName: 'bench.ts',
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
  });
  fs.writeFileSync(path.join(BUILD, 'bench.js'), compiled.outputText);
  fs.writeFileSync(
    path.join(BUILD, 'main.js'),
    [
      "// The benchmark operator as a process entry point, as a generated project's dist/main.js is.",
      "import { main } from 'kopf-gen/runtime';",
      "import './bench.js';",
      '',
      'await main(import.meta);',
      '',
    ].join('\n'),
  );
  const probe = spawnSync(process.execPath, ['--input-type=module', '-e', "process.stdout.write(import.meta.resolve('kopf-gen/runtime'))"], {
    cwd: BUILD,
    env: { ...process.env, NODE_OPTIONS: '' },
    encoding: 'utf8',
  });
  const resolved = probe.stdout.trim();
  if (!resolved.endsWith('/dist/runtime/index.js')) {
    throw new Error(`kopf-gen/runtime resolves from bench/.build to ${resolved || `nothing (${probe.stderr.trim()})`}, not to dist/runtime/index.js`);
  }
  return resolved;
}

/** One way of starting an operator, measured in the same table. */
interface Row {
  key: string;
  command: string;
  hasTargets: boolean;
}

function rows(kopfCommand: string | undefined): Row[] {
  const node = JSON.stringify(process.execPath);
  const list: Row[] = [
    { key: 'main_js', command: `exec ${node} bench/.build/main.js --all-namespaces --standalone`, hasTargets: true },
    { key: 'cli_run', command: `exec ${node} bin/kopf-gen.js run bench/.build/bench.js --all-namespaces --standalone`, hasTargets: true },
  ];
  if (kopfCommand) list.push({ key: 'kopf_command', command: kopfCommand, hasTargets: false });
  return list;
}

interface Sample {
  readySeconds: number;
  rssMib: number;
  lagMs: number;
}

/** Starts one operator process, waits for its first watch of kopfexamples, reads its memory, stops it. */
async function sampleOnce(server: servers.Server, row: Row, kubeconfig: string, logFile: string, id: string): Promise<Sample> {
  fs.appendFileSync(logFile, `\n===== ${row.key}, ${id}\n`);
  const since = Date.now();
  const operator = new processes.OperatorProcess(row.command, { KUBECONFIG: kubeconfig, NODE_OPTIONS: '' }, logFile);
  let exitPoll: NodeJS.Timeout | undefined;
  try {
    const question: serve.AwaitWatch = { type: 'await-watch', resource: 'kopfexamples', since, timeoutMs: READY_TIMEOUT_MS, reply: `watch-seen-${id}` };
    const exited = new Promise<never>((_, reject) => {
      exitPoll = setInterval(() => {
        try {
          operator.assertRunning();
        } catch (error) {
          reject(error);
        }
      }, 50);
    });
    const seen = await Promise.race([servers.ask<{ time: number | null }>(server.child, question, question.reply), exited]);
    const sampledAt = Date.now();
    const rss = processes.measureTree(operator.pid).rssBytes;
    if (seen.time === null) throw new Error(`no watch request for kopfexamples within ${READY_TIMEOUT_MS / 1000} s; last output:\n${operator.logTail()}`);
    return { readySeconds: (seen.time - since) / 1000, rssMib: rss / MIB, lagMs: sampledAt - seen.time };
  } finally {
    clearInterval(exitPoll);
    await operator.stop();
  }
}

/** Part 1: every row `runs` times on one devcluster; adds `<row>_ready_s…` and `<row>_rss_at_ready_mb…`. */
async function measureReady(options: Options, work: string, result: report.Collected): Promise<void> {
  const { figures, targets, notes } = result;
  notes['runtime_resolved_to'] = path.relative(ROOT, new URL(compileOperator()).pathname);
  const server = await servers.startServer();
  const kubeconfig = path.join(work, 'kubeconfig');
  const logFile = path.join(work, 'operators.log');
  const samples = new Map<string, Sample[]>();
  let lag = 0;
  try {
    await servers.ask(server.child, { type: 'kubeconfig', file: kubeconfig }, 'kubeconfig');
    const list = rows(options.kopfCommand);
    for (let run = 0; run < options.runs; run += 1) {
      for (const row of list) {
        if (notes[`${row.key}_error`]) continue;
        try {
          const sample = await sampleOnce(server, row, kubeconfig, logFile, `${row.key}-${run}`);
          samples.set(row.key, [...(samples.get(row.key) ?? []), sample]);
          lag = Math.max(lag, sample.lagMs);
        } catch (error) {
          notes[`${row.key}_error`] = `run ${run + 1}: ${error instanceof Error ? error.message : String(error)} (log: ${logFile})`;
        }
      }
    }
    for (const row of list) {
      const got = samples.get(row.key) ?? [];
      const ready = report.spread(got.map((s) => s.readySeconds));
      const rss = report.spread(got.map((s) => s.rssMib));
      Object.assign(figures, {
        [`${row.key}_ready_s`]: ready.median,
        [`${row.key}_ready_s_min`]: ready.min,
        [`${row.key}_ready_s_max`]: ready.max,
        [`${row.key}_rss_at_ready_mb`]: rss.median,
        [`${row.key}_rss_at_ready_mb_min`]: rss.min,
        [`${row.key}_rss_at_ready_mb_max`]: rss.max,
      });
      if (row.hasTargets) {
        targets[`${row.key}_ready_s`] = { max: READY_S };
        targets[`${row.key}_rss_at_ready_mb`] = { max: READY_RSS_MB };
      }
      notes[row.key] = `${row.command.replace(JSON.stringify(process.execPath), 'node')}  (${got.length} of ${options.runs} runs)`;
    }
    notes['rss_sample_lag_ms_max'] = `${lag} ms between the watch request's arrival and the VmRSS reading, at most`;
  } finally {
    await servers.stopServer(server.child);
  }
}

export async function run(args: readonly string[] = []): Promise<report.Result> {
  requireDistribution();
  const options = parseOptions(args);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-startup-'));
  const result: report.Collected = { figures: {}, targets: {}, notes: {} };
  result.figures['load_average_1m_start'] = os.loadavg()[0]!;
  result.notes['machine'] = `${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? 'unknown'}, Node ${process.version}`;
  result.notes['reference'] = "Python Kopf 1.44.6 was measured at 1.18 s ready, 50 MB RSS (the targets' reference)";
  try {
    if (!options.skip.has('ready')) await measureReady(options, work, result);
    if (!options.skip.has('typecheck')) await typechecking.measure({ work, tscRuns: options.tscRuns }, result);
    if (!options.skip.has('install')) await installing.measure({ work }, result);
  } finally {
    result.figures['load_average_1m_end'] = os.loadavg()[0]!;
    if (options.keep) result.notes['kept'] = work;
    else fs.rmSync(work, { recursive: true, force: true });
  }
  return { name: 'startup', ...result };
}
