/**
 * Generator benchmark: for every CRD file of the corpus (the external one `KOPF_GEN_CRD_CORPUS`
 * names, else the repository's generator fixtures), the time `init` takes to generate a
 * project, the lines it emits into src/generated/, and how long `tsc --noEmit` takes on the
 * project's src/ — compared with `tsc` on the same schemas emitted by openapi-typescript alone
 * (`openapiTS` on an OpenAPI document holding the CRD schemas as components), the baseline.
 *
 * Figures per corpus file `<stem>`:
 * - `<stem>_generate_ms`: wall time of `init` (median over rounds), `<stem>_emitted_lines`;
 * - `<stem>_tsc_ms`: the generated project's src/ (types, index, handler stubs, main), as users run it;
 * - `<stem>_types_tsc_ms`: the generated type modules alone, with the runtime types they import
 *   (`resource`, `ObjectMeta`, `KubernetesObject`) resolved to the module that declares them, under
 *   the baseline's compiler options: what the generated types themselves cost;
 * - `<stem>_baseline_tsc_ms`, and the ratios `<stem>_tsc_ratio` (project / baseline),
 *   `<stem>_types_tsc_ratio` (types / baseline), `<stem>_tsc_ratio_over_floor`.
 * `runtime_floor_tsc_ms` is the fixed cost every project pays for the runtime's own types (a project
 * that only imports the runtime); `*_ratio_over_floor` compares the project's cost above that floor
 * with the baseline.
 *
 * Options (after `npm run bench -- generator`): `--rounds N` generation rounds (default 3) and
 * `--tsc-runs N` runs of every type-check (default 3); figures are medians. The machine may be busy:
 * the load average is recorded before and after, and generation is also reported in CPU time.
 * Targets (issue): the whole corpus generates in < 5 s; no project type-checks slower than 3× the
 * baseline. Benchmarks assert nothing.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as util from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import type { OpenAPI3, SchemaObject } from 'openapi-typescript';
import * as yaml from 'yaml';
import * as generator from '../generator/index.js';
import * as report from './report.js';
import { crdFolder } from './typechecking.js';
import * as optionValues from './options.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const TSC = path.join(ROOT, 'node_modules/.bin/tsc');
/** The module that declares everything generated type modules import from the runtime. */
const RUNTIME_TYPES = path.join(ROOT, 'runtime/cogs/structs/resources.ts');
const BASELINE_OPTIONS = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: [] };

interface Options {
  rounds: number;
  tscRuns: number;
}

function parseOptions(args: readonly string[]): Options {
  const { values } = util.parseArgs({
    args: [...args],
    strict: false,
    allowPositionals: true,
    options: { rounds: { type: 'string' }, 'tsc-runs': { type: 'string' } },
  });
  return { rounds: optionValues.wholeNumber(values['rounds'], 3, 'rounds'), tscRuns: optionValues.wholeNumber(values['tsc-runs'], 3, 'tsc-runs') };
}

const median = (values: readonly number[]): number => report.percentile([...values], 50);
const cpuMs = (): number => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

/** Runs tsc on a tsconfig `runs` times; returns the median wall time in ms (the machine may be busy). */
function tsc(tsconfig: string, runs: number): number {
  return median(Array.from({ length: runs }, () => tscOnce(tsconfig)));
}

/** Runs tsc once; type errors are reported, not fatal. */
function tscOnce(tsconfig: string): number {
  const started = performance.now();
  try {
    execFileSync(TSC, ['--noEmit', '-p', tsconfig], { stdio: 'pipe' });
  } catch (error) {
    const output = String((error as { stdout?: Buffer }).stdout ?? '');
    process.stderr.write(`tsc reported errors for ${tsconfig}:\n${output.split('\n').slice(0, 10).join('\n')}\n`);
  }
  return performance.now() - started;
}

/** The project's own settings, with the runtime resolved to this checkout: what users type-check. */
function projectTsconfig(project: string): string {
  const file = path.join(project, 'tsconfig.bench.json');
  fs.writeFileSync(
    file,
    JSON.stringify({
      extends: './tsconfig.json',
      compilerOptions: {
        typeRoots: [path.join(ROOT, 'node_modules/@types')],
        paths: { 'kopf-gen/runtime': [path.join(ROOT, 'runtime/index.ts')], 'kopf-gen/testing': [path.join(ROOT, 'testing/index.ts')] },
      },
      include: ['src'],
    }),
  );
  return file;
}

/** The generated type modules alone, under the baseline's options, importing only the runtime types they use. */
function typesTsconfig(project: string): string {
  const file = path.join(project, 'tsconfig.types.json');
  const generated = path.join(project, 'src/generated');
  const modules = fs.readdirSync(generated).filter((name) => name.endsWith('.ts') && name !== 'handlers.ts');
  fs.writeFileSync(
    file,
    JSON.stringify({
      compilerOptions: { ...BASELINE_OPTIONS, paths: { 'kopf-gen/runtime': [RUNTIME_TYPES] } },
      files: modules.map((name) => path.join(generated, name)),
    }),
  );
  return file;
}

/** The CRD schemas of a file as an OpenAPI document (one component per served version). */
function openapiDocument(text: string): OpenAPI3 {
  const schemas: Record<string, SchemaObject> = {};
  for (const document of yaml.parseAllDocuments(text)) {
    const crd = document.toJS() as {
      kind?: string;
      spec?: { names?: { kind?: string }; versions?: { name: string; served?: boolean; schema?: { openAPIV3Schema?: SchemaObject } }[] };
    } | null;
    if (crd?.kind !== 'CustomResourceDefinition') continue;
    for (const version of crd.spec?.versions ?? []) {
      const schema = version.schema?.openAPIV3Schema;
      if (version.served && schema) schemas[`${crd.spec?.names?.kind ?? 'Kind'}_${version.name}`] = schema;
    }
  }
  return { openapi: '3.0.3', info: { title: 'crds', version: '1' }, paths: {}, components: { schemas } };
}

async function baselineTsconfig(text: string, dir: string): Promise<string> {
  fs.mkdirSync(dir, { recursive: true });
  const nodes = await openapiTS(openapiDocument(text), { silent: true });
  fs.writeFileSync(path.join(dir, 'schemas.ts'), astToString(nodes));
  const tsconfig = path.join(dir, 'tsconfig.json');
  fs.writeFileSync(tsconfig, JSON.stringify({ compilerOptions: BASELINE_OPTIONS, include: ['schemas.ts'] }));
  return tsconfig;
}

function lines(dir: string): number {
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.ts'))
    .reduce((count, name) => count + fs.readFileSync(path.join(dir, name), 'utf8').split('\n').length, 0);
}

function tscVersion(): string {
  try {
    return execFileSync(TSC, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

export async function run(args: readonly string[] = process.argv.slice(2)): Promise<report.Result> {
  const options = parseOptions(args);
  const folder = crdFolder(ROOT);
  const corpus = folder.directory;
  const files = fs
    .readdirSync(corpus)
    .filter((name) => name.endsWith('.yaml'))
    .sort();
  const stems = files.map((name) => name.replace(/\.yaml$/, ''));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-bench-'));
  const figures: Record<string, number> = {};
  const targets: Record<string, report.Target> = {};
  figures['load_avg_1m_start'] = os.loadavg()[0]!;
  figures['cpus'] = os.cpus().length;
  try {
    // Warm-up: module loading and the first compilation of the code are not the generator's cost.
    await generator.init({ crds: [path.join(corpus, files[0]!)], out: path.join(work, 'warmup') });

    // Generation: every file once per round; round 1 runs code the JIT has seen only once (cold).
    const wall = new Map<string, number[]>(stems.map((stem) => [stem, []]));
    const totals: number[] = [];
    const cpuTotals: number[] = [];
    for (let round = 0; round < options.rounds; round += 1) {
      let total = 0;
      let cpuTotal = 0;
      for (const [index, name] of files.entries()) {
        const out = path.join(work, `round-${round}`, stems[index]!);
        const cpuStarted = cpuMs();
        const started = performance.now();
        await generator.init({ crds: [path.join(corpus, name)], out });
        const elapsed = performance.now() - started;
        cpuTotal += cpuMs() - cpuStarted;
        total += elapsed;
        wall.get(stems[index]!)!.push(elapsed);
      }
      totals.push(total);
      cpuTotals.push(cpuTotal);
      if (round > 0) fs.rmSync(path.join(work, `round-${round - 1}`), { recursive: true, force: true });
    }
    const projects = path.join(work, `round-${options.rounds - 1}`);

    // Type-checks: the runtime floor, then every project, its type modules and its baseline.
    const floorProject = path.join(work, 'floor');
    fs.mkdirSync(path.join(floorProject, 'src'), { recursive: true });
    fs.copyFileSync(path.join(work, 'warmup/tsconfig.json'), path.join(floorProject, 'tsconfig.json'));
    fs.copyFileSync(path.join(work, 'warmup/package.json'), path.join(floorProject, 'package.json'));
    fs.writeFileSync(path.join(floorProject, 'src/main.ts'), "import { on } from 'kopf-gen/runtime';\nexport const registrations = on;\n");
    const floor = tsc(projectTsconfig(floorProject), options.tscRuns);
    figures['runtime_floor_tsc_ms'] = floor;
    let worst = 0;
    let worstTypes = 0;
    let worstOverFloor = 0;
    for (const [index, name] of files.entries()) {
      const stem = stems[index]!;
      const out = path.join(projects, stem);
      const projectMs = tsc(projectTsconfig(out), options.tscRuns);
      const typesMs = tsc(typesTsconfig(out), options.tscRuns);
      const baselineMs = tsc(await baselineTsconfig(fs.readFileSync(path.join(corpus, name), 'utf8'), path.join(work, `${stem}-baseline`)), options.tscRuns);
      const ratio = projectMs / baselineMs;
      const typesRatio = typesMs / baselineMs;
      const overFloor = Math.max(0, projectMs - floor) / baselineMs;
      worst = Math.max(worst, ratio);
      worstTypes = Math.max(worstTypes, typesRatio);
      worstOverFloor = Math.max(worstOverFloor, overFloor);
      Object.assign(figures, {
        [`${stem}_generate_ms`]: median(wall.get(stem)!),
        [`${stem}_emitted_lines`]: lines(path.join(out, 'src/generated')),
        [`${stem}_tsc_ms`]: projectMs,
        [`${stem}_types_tsc_ms`]: typesMs,
        [`${stem}_baseline_tsc_ms`]: baselineMs,
        [`${stem}_tsc_ratio`]: ratio,
        [`${stem}_types_tsc_ratio`]: typesRatio,
        [`${stem}_tsc_ratio_over_floor`]: overFloor,
      });
    }
    figures['generate_total_ms'] = median(totals);
    figures['generate_total_first_round_ms'] = totals[0]!;
    figures['generate_total_cpu_ms'] = median(cpuTotals);
    figures['max_tsc_ratio'] = worst;
    figures['max_types_tsc_ratio'] = worstTypes;
    figures['max_tsc_ratio_over_floor'] = worstOverFloor;
    figures['load_avg_1m_end'] = os.loadavg()[0]!;
    targets['generate_total_ms'] = { max: 5000 };
    targets['generate_total_first_round_ms'] = { max: 5000 };
    targets['max_tsc_ratio'] = { max: 3 };
    targets['max_types_tsc_ratio'] = { max: 3 };
    targets['max_tsc_ratio_over_floor'] = { max: 3 };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  const notes = {
    corpus: folder.label,
    measured: `${options.rounds} generation round(s), ${options.tscRuns} run(s) of every type-check; figures are medians (generate_total_first_round_ms is round 1 alone)`,
    tsc: `${tscVersion()} (node_modules/.bin/tsc)`,
    types_tsc: 'the generated type modules alone, importing the runtime types from runtime/cogs/structs/resources.ts, with the baseline compiler options',
    tsc_ratio: 'project src/ (types, index, handler stubs, main: the stubs import the whole runtime) over the baseline',
  };
  return { name: 'generator', figures, targets, notes };
}
