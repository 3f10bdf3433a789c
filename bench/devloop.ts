/**
 * Dev-loop benchmark: `npm run bench -- devloop [options]`. The two timings issue 28 asks of a
 * user's development, measured here rather than asserted in tests (a busy machine makes them move):
 *
 * 1. The dev loop of `kopf-gen run --dev-cluster=auto --watch` (a generated project's `npm run
 *    operator`), run with the compiled command line (`node bin/kopf-gen.js`, which loads `dist/`:
 *    `npm run build` first) in the dev-loop test's project (`devloop-project.ts`: an on-event
 *    handler for kopfexamples that logs a marker, the project's TypeScript checking each save).
 *    A first run of the command creates the object `kex-1` and stops (Ctrl-C); the devcluster
 *    keeps it in the project's `.kopf-gen/` folder. Then, in a second run:
 *    - `start_to_first_handler_ms`: from just before the command is spawned to the operator's
 *      first handler line for the kept object (devcluster restored, operator started, object
 *      listed and handled);
 *    - `save_to_new_handler_ms_p50`/`_max` (target ≤ 1000 ms, the "restarts the operator on
 *      save within 1 s, keeping the devcluster and its objects"): for each of `--saves` saves of
 *      the handler file with a new marker, from just before the file is written to the arrival of
 *      the new operator's first handler line for `kex-1`, which was never created again;
 *    - `save_to_type_error_ms_p50`/`_max`: after each of those, a save with a type error, from the
 *      write to the arrival of the one-line error. The issue asks for "one clear line", not for a
 *      time; the target here (≤ 1000 ms) is ours: the check is the first part of every restart.
 *    Between two saves the benchmark waits `--pause-ms` (default 1500 ms): a developer saves at a
 *    human pace, and the next operator is being started ahead in standby meanwhile.
 *    `first_run_ready_ms` is the first run's time to the operator's "Initial authentication has
 *    finished" (a fresh devcluster, no object yet).
 * 2. The generated project's own test (`generated` part; target ≤ 2000 ms, the "it runs in
 *    ≤ 2 s"): `kopf-gen init` from the Kopf example CRD (the compiled command line), installed
 *    without network as the end-to-end tests do (`scripts/demo.ts`: node_modules linked to this
 *    checkout's, kopf-gen → this checkout), then `npx vitest run test/kopf-example.test.ts`
 *    `--test-runs` times (default 3, medians). `generated_test_ms` is vitest's duration of the
 *    test alone (its JSON report: the operator started in-process by `KopfRunner`, the object
 *    created, the handler's annotation seen, the runner stopped), without the `beforeAll` that
 *    starts the devcluster; `generated_file_tests_ms` is vitest's "tests" time of the file, hooks
 *    included; `generated_vitest_wall_ms` the whole command, vitest's own start and the transform
 *    of the modules included. Linked this way, kopf-gen's real path is outside any node_modules,
 *    so vitest transforms it (an installed kopf-gen is left to Node): that costs the wall time,
 *    not the test's.
 *
 * The machine's load average is recorded at the start and the end: every figure is wall-clock
 * time. Options: `--saves N` (default 10), `--pause-ms N` (default 1500), `--test-runs N`
 * (default 3), `--skip loop|generated`, `--keep` (keep the temporary folders and the logs).
 */
import * as child from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as util from 'node:util';
import * as runtime from '../runtime/index.js';
import * as demo from '../scripts/demo.js';
import * as project from './devloop-project.js';
import * as report from './report.js';
import * as optionValues from './options.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const BINARY = path.join(ROOT, 'bin/kopf-gen.js');
const CRD = path.join(ROOT, 'fixtures/crds/kopfexamples.yaml');
const DISTRIBUTION = ['dist/cli/main.js', 'dist/runtime/index.js', 'dist/testing/index.js', 'generator/dist/index.js'];
const PARTS = ['loop', 'generated'] as const;
type Part = (typeof PARTS)[number];
const WAIT_MS = 60_000;
const KOPFEXAMPLES = runtime.resource({ group: 'kopf.dev', version: 'v1', plural: 'kopfexamples', kind: 'KopfExample', namespaced: true });

export interface Options {
  saves: number;
  pauseMs: number;
  testRuns: number;
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
      saves: { type: 'string' },
      'pause-ms': { type: 'string' },
      'test-runs': { type: 'string' },
      skip: { type: 'string', multiple: true },
      keep: { type: 'boolean' },
    },
  });
  const skip = optionValues.skippedParts(values['skip'], PARTS);
  return {
    saves: optionValues.wholeNumber(values['saves'], 10, 'saves'),
    pauseMs: optionValues.wholeNumber(values['pause-ms'], 1500, 'pause-ms', 0),
    testRuns: optionValues.wholeNumber(values['test-runs'], 3, 'test-runs'),
    skip,
    keep: values['keep'] === true,
  };
}

/** The environment of a command run as a user runs it: no cluster configured, no loader options. */
function userEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, NO_COLOR: '1', NODE_OPTIONS: '' };
  delete env['KUBECONFIG'];
  delete env['KUBERNETES_SERVICE_HOST'];
  return env;
}

/** `kopf-gen run --dev-cluster=auto -A …` in the project, its output kept and each chunk's arrival time-stamped. */
class Launcher {
  readonly proc: child.ChildProcess;
  readonly exited: Promise<number | null>;
  private text = '';
  private readonly waiters = new Set<() => void>();

  constructor(dir: string, home: string, log: string) {
    this.proc = child.spawn(process.execPath, [BINARY, 'run', '--dev-cluster=auto', '--watch', '-A', '--standalone', '--log-format', 'plain', 'src/main.ts'], {
      cwd: dir,
      env: userEnv(home),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (chunk: Buffer): void => {
      this.text += chunk.toString();
      fs.appendFileSync(log, chunk);
      for (const waiter of this.waiters) waiter();
    };
    this.proc.stdout!.on('data', collect);
    this.proc.stderr!.on('data', collect);
    this.exited = new Promise((resolve) => this.proc.on('exit', (code) => resolve(code)));
  }

  /** Where the output ends now: a wait from here sees only what comes next. */
  get mark(): number {
    return this.text.length;
  }

  /** Resolves with `performance.now()` at the arrival of the output that completed a match of `pattern` after `from`. */
  arrival(pattern: RegExp, from = this.mark): Promise<number> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!pattern.test(this.text.slice(from))) return;
        const at = performance.now();
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve(at);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`no ${pattern} within ${WAIT_MS / 1000} s; the output since:\n${this.text.slice(from).slice(-3000)}`));
      }, WAIT_MS);
      this.waiters.add(check);
      check();
    });
  }

  /** Ctrl-C, and the exit code. */
  async interrupt(): Promise<number | null> {
    if (this.proc.exitCode === null) this.proc.kill('SIGINT');
    return await this.exited;
  }

  kill(): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGKILL');
  }
}

/** Creates a KopfExample with the typed client, through the kubeconfig the devcluster wrote into the project. */
async function createExample(dir: string, name: string): Promise<void> {
  const client = await runtime.connect({ kubeconfig: path.join(dir, '.kopf-gen', 'kubeconfig') });
  try {
    await client.create(KOPFEXAMPLES, { apiVersion: 'kopf.dev/v1', kind: 'KopfExample', metadata: { name, namespace: 'default' } });
  } finally {
    await client.close();
  }
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const handled = (marker: string): RegExp => new RegExp(`\\[default/kex-1\\] ${marker} kex-1`);

/** Part 1: the first run (object created, kept), then the second run's start and saves. */
async function measureLoop(options: Options, work: string, result: report.Collected): Promise<void> {
  const { figures, targets, notes } = result;
  const made = project.makeProject({ typescript: true });
  const greet = path.join(made.dir, 'src', 'handlers', 'greet.ts');
  const log = path.join(work, 'devloop.log');
  try {
    // The first run: a fresh devcluster; the object is created and kept in .kopf-gen/.
    let spawned = performance.now();
    let launcher = new Launcher(made.dir, made.home, log);
    try {
      figures['first_run_ready_ms'] = Math.round((await launcher.arrival(/Initial authentication has finished\./, 0)) - spawned);
      await createExample(made.dir, 'kex-1');
      await launcher.arrival(handled('v1'), 0);
      const code = await launcher.interrupt();
      if (code !== 0) throw new Error(`the first run exited with ${code} on Ctrl-C (log: ${log})`);
    } finally {
      launcher.kill();
    }

    // The second run: the object is there from the start.
    fs.appendFileSync(log, '\n===== second run\n');
    spawned = performance.now();
    launcher = new Launcher(made.dir, made.home, log);
    try {
      figures['start_to_first_handler_ms'] = Math.round((await launcher.arrival(handled('v1'), 0)) - spawned);
      // The checker's warm-up is over: what follows is a save as a developer makes it.
      await launcher.arrival(/^kopf-gen run: watching .*\n/m, 0);
      await pause(options.pauseMs);
      const restarts: number[] = [];
      const errors: number[] = [];
      for (let save = 2; save <= options.saves + 1; save += 1) {
        let from = launcher.mark;
        let saved = performance.now();
        fs.writeFileSync(greet, project.handlerSource(`v${save}`));
        restarts.push((await launcher.arrival(handled(`v${save}`), from)) - saved);
        await pause(options.pauseMs);
        from = launcher.mark;
        saved = performance.now();
        fs.writeFileSync(greet, project.handlerSource(`v${save}x`, "const count: number = 'many'; "));
        errors.push((await launcher.arrival(/^.*error TS\d+.*\n/m, from)) - saved);
        await pause(options.pauseMs);
      }
      const code = await launcher.interrupt();
      if (code !== 0) notes['second_run_exit'] = `the second run exited with ${code} on Ctrl-C`;
      Object.assign(figures, {
        saves: restarts.length,
        save_to_new_handler_ms_p50: Math.round(report.percentile(restarts, 50)),
        save_to_new_handler_ms_max: Math.round(Math.max(...restarts)),
        save_to_type_error_ms_p50: Math.round(report.percentile(errors, 50)),
        save_to_type_error_ms_max: Math.round(Math.max(...errors)),
      });
      notes['save_to_new_handler_ms'] = restarts.map((ms) => Math.round(ms)).join(', ');
      notes['save_to_type_error_ms'] = errors.map((ms) => Math.round(ms)).join(', ');
    } finally {
      launcher.kill();
    }
    Object.assign(targets, {
      save_to_new_handler_ms_p50: { max: 1000 },
      save_to_new_handler_ms_max: { max: 1000 },
      save_to_type_error_ms_p50: { max: 1000 },
      save_to_type_error_ms_max: { max: 1000 },
    });
    notes['loop'] =
      `node bin/kopf-gen.js run --dev-cluster=auto --watch -A --standalone --log-format plain src/main.ts (compiled dist/), a handler file saved ${options.saves} times, ${options.pauseMs} ms between saves`;
  } finally {
    if (options.keep) notes['kept_loop'] = made.dir;
    else for (const dir of [made.dir, made.home]) fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** One `npx vitest run` of the generated test: the test alone, the file's tests with hooks, the whole command (ms). */
function runGeneratedTest(dir: string, home: string, reportFile: string): { test: number; file: number; wall: number } {
  const started = performance.now();
  const run = child.spawnSync(
    'npx',
    ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${reportFile}`, 'test/kopf-example.test.ts'],
    { cwd: dir, env: userEnv(home), encoding: 'utf8', timeout: 120_000 },
  );
  const wall = performance.now() - started;
  const output = `${run.stdout}${run.stderr}`;
  if (run.status !== 0) throw new Error(`npx vitest run exited with ${run.status}:\n${output.slice(-3000)}`);
  const json = JSON.parse(fs.readFileSync(reportFile, 'utf8')) as { testResults: { assertionResults: { duration: number; status: string }[] }[] };
  const tests = json.testResults.flatMap((file) => file.assertionResults);
  if (tests.length !== 1 || tests[0]!.status !== 'passed') throw new Error(`expected one passed test, got ${JSON.stringify(tests)}`);
  const file = /Duration .*\btests ([\d.]+)(m?s)\b/.exec(output);
  if (!file) throw new Error(`no "Duration … tests …" line in vitest's output:\n${output.slice(-2000)}`);
  return { test: tests[0]!.duration, file: Number(file[1]) * (file[2] === 's' ? 1000 : 1), wall };
}

/** Part 2: `kopf-gen init`, linked node_modules, `--test-runs` runs of the generated test. */
function measureGenerated(options: Options, work: string, result: report.Collected): void {
  const { figures, targets, notes } = result;
  const dir = path.join(work, 'kopf-example-operator');
  const home = fs.mkdtempSync(path.join(work, 'home-'));
  const init = child.spawnSync(process.execPath, [BINARY, 'init', '--crd', CRD, '--out', dir], { cwd: work, env: userEnv(home), encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`kopf-gen init exited with ${init.status}:\n${init.stdout}${init.stderr}`);
  demo.linkNodeModules(dir);
  const runs = Array.from({ length: options.testRuns }, (_, i) => runGeneratedTest(dir, home, path.join(work, `vitest-${i}.json`)));
  const median = (pick: (run: (typeof runs)[number]) => number): number => report.spread(runs.map(pick)).median;
  Object.assign(figures, {
    generated_test_ms: Math.round(median((r) => r.test)),
    generated_test_ms_max: Math.round(Math.max(...runs.map((r) => r.test))),
    generated_file_tests_ms: Math.round(median((r) => r.file)),
    generated_vitest_wall_ms: Math.round(median((r) => r.wall)),
  });
  targets['generated_test_ms'] = { max: 2000 };
  targets['generated_test_ms_max'] = { max: 2000 };
  notes['generated'] =
    `kopf-gen init --crd fixtures/crds/kopfexamples.yaml, node_modules linked to this checkout's, npx vitest run test/kopf-example.test.ts, ${options.testRuns} runs (medians); the test alone: ${runs.map((r) => Math.round(r.test)).join(', ')} ms`;
}

export async function run(args: readonly string[] = []): Promise<report.Result> {
  const missing = DISTRIBUTION.filter((file) => !fs.existsSync(path.join(ROOT, file)));
  if (missing.length) {
    process.stderr.write(`devloop: the compiled distribution is missing (${missing.join(', ')}): run npm run build\n`);
    process.exit(1);
  }
  const options = parseOptions(args);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-devloop-'));
  const result: report.Collected = { figures: {}, targets: {}, notes: {} };
  result.figures['load_average_1m_start'] = os.loadavg()[0]!;
  result.notes['machine'] = `${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? 'unknown'}, Node ${process.version}`;
  try {
    if (!options.skip.has('loop')) await measureLoop(options, work, result);
    if (!options.skip.has('generated')) measureGenerated(options, work, result);
  } finally {
    result.figures['load_average_1m_end'] = os.loadavg()[0]!;
    if (options.keep) result.notes['kept'] = work;
    else fs.rmSync(work, { recursive: true, force: true });
  }
  return { name: 'devloop', ...result };
}
