/**
 * Generator benchmark: for every CRD file of the corpus, the time `init` takes to generate a
 * project, the lines it emits into src/generated/, and how long `tsc --noEmit` takes on the
 * project's src/ — compared with `tsc` on the same schemas emitted by openapi-typescript alone
 * (`openapiTS` on an OpenAPI document holding the CRD schemas as components), the baseline.
 *
 * The project's type-check includes the runtime it imports (its types are part of every project);
 * `runtime_floor_tsc_ms` is that fixed cost on its own (a project that only imports the runtime),
 * and `*_ratio_over_floor` compares the project's cost above that floor with the baseline.
 * Targets (issue): the whole corpus generates in < 5 s; no project type-checks slower than 3× the
 * baseline. Benchmarks assert nothing.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import type { OpenAPI3, SchemaObject } from 'openapi-typescript';
import * as yaml from 'yaml';
import * as generator from '../generator/index.js';
import * as report from './report.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const TSC = path.join(ROOT, 'node_modules/.bin/tsc');

function corpusDirectory(): string {
  const candidates = [path.join(ROOT, 'fixtures/crds/corpus'), path.resolve(ROOT, '../shared/crds')];
  const found = candidates.find((dir) => fs.existsSync(dir) && fs.readdirSync(dir).some((name) => name.endsWith('.yaml')));
  if (!found) throw new Error(`no CRD corpus in ${candidates.join(' or ')}`);
  return found;
}

/** Runs tsc on a tsconfig three times; returns the fastest wall time in ms (the machine may be busy). */
function tsc(tsconfig: string): number {
  return Math.min(tscOnce(tsconfig), tscOnce(tsconfig), tscOnce(tsconfig));
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

function projectTsconfig(project: string): string {
  const file = path.join(project, 'tsconfig.bench.json');
  fs.writeFileSync(file, JSON.stringify({
    extends: './tsconfig.json',
    compilerOptions: {
      typeRoots: [path.join(ROOT, 'node_modules/@types')],
      paths: { 'kopf-gen/runtime': [path.join(ROOT, 'runtime/index.ts')], 'kopf-gen/testing': [path.join(ROOT, 'devcluster/testing.ts')] },
    },
    include: ['src'],
  }));
  return file;
}

/** The CRD schemas of a file as an OpenAPI document (one component per served version). */
function openapiDocument(text: string): OpenAPI3 {
  const schemas: Record<string, SchemaObject> = {};
  for (const document of yaml.parseAllDocuments(text)) {
    const crd = document.toJS() as { kind?: string; spec?: { names?: { kind?: string }; versions?: { name: string; served?: boolean; schema?: { openAPIV3Schema?: SchemaObject } }[] } } | null;
    if (crd?.kind !== 'CustomResourceDefinition') continue;
    for (const version of crd.spec?.versions ?? []) {
      const schema = version.schema?.openAPIV3Schema;
      if (version.served && schema) schemas[`${crd.spec?.names?.kind ?? 'Kind'}_${version.name}`] = schema;
    }
  }
  return { openapi: '3.0.3', info: { title: 'crds', version: '1' }, paths: {}, components: { schemas } };
}

async function baseline(text: string, dir: string): Promise<number> {
  fs.mkdirSync(dir, { recursive: true });
  const nodes = await openapiTS(openapiDocument(text), { silent: true });
  fs.writeFileSync(path.join(dir, 'schemas.ts'), astToString(nodes));
  const tsconfig = path.join(dir, 'tsconfig.json');
  fs.writeFileSync(tsconfig, JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: [] },
    include: ['schemas.ts'],
  }));
  return tsc(tsconfig);
}

function lines(dir: string): number {
  return fs.readdirSync(dir).filter((name) => name.endsWith('.ts'))
    .reduce((count, name) => count + fs.readFileSync(path.join(dir, name), 'utf8').split('\n').length, 0);
}

export async function run(): Promise<report.Result> {
  const corpus = corpusDirectory();
  const files = fs.readdirSync(corpus).filter((name) => name.endsWith('.yaml')).sort();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kopf-gen-bench-'));
  const figures: Record<string, number> = {};
  const targets: Record<string, report.Target> = {};
  try {
    // Warm-up: module loading and JIT are not the generator's cost.
    await generator.init({ crds: [path.join(corpus, files[0]!)], out: path.join(work, 'warmup') });
    const floorProject = path.join(work, 'floor');
    fs.mkdirSync(path.join(floorProject, 'src'), { recursive: true });
    fs.copyFileSync(path.join(work, 'warmup/tsconfig.json'), path.join(floorProject, 'tsconfig.json'));
    fs.copyFileSync(path.join(work, 'warmup/package.json'), path.join(floorProject, 'package.json'));
    fs.writeFileSync(path.join(floorProject, 'src/main.ts'), "import { on } from 'kopf-gen/runtime';\nexport const registrations = on;\n");
    const floor = tsc(projectTsconfig(floorProject));
    figures['runtime_floor_tsc_ms'] = floor;
    let total = 0;
    let worst = 0;
    let worstOverFloor = 0;
    for (const name of files) {
      const stem = name.replace(/\.yaml$/, '');
      const out = path.join(work, stem);
      const started = performance.now();
      await generator.init({ crds: [path.join(corpus, name)], out });
      const elapsed = performance.now() - started;
      total += elapsed;
      const projectMs = tsc(projectTsconfig(out));
      const baselineMs = await baseline(fs.readFileSync(path.join(corpus, name), 'utf8'), path.join(work, `${stem}-baseline`));
      const ratio = projectMs / baselineMs;
      const overFloor = Math.max(0, projectMs - floor) / baselineMs;
      worst = Math.max(worst, ratio);
      worstOverFloor = Math.max(worstOverFloor, overFloor);
      Object.assign(figures, {
        [`${stem}_generate_ms`]: elapsed,
        [`${stem}_emitted_lines`]: lines(path.join(out, 'src/generated')),
        [`${stem}_tsc_ms`]: projectMs,
        [`${stem}_baseline_tsc_ms`]: baselineMs,
        [`${stem}_tsc_ratio`]: ratio,
        [`${stem}_tsc_ratio_over_floor`]: overFloor,
      });
    }
    figures['generate_total_ms'] = total;
    figures['max_tsc_ratio'] = worst;
    figures['max_tsc_ratio_over_floor'] = worstOverFloor;
    targets['generate_total_ms'] = { max: 5000 };
    targets['max_tsc_ratio'] = { max: 3 };
    targets['max_tsc_ratio_over_floor'] = { max: 3 };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return { name: 'generator', figures, targets };
}
