/**
 * The type-checking part of the startup benchmark (`startup.ts` defines its figures): projects
 * generated with the generator library (`init`) into the benchmark's temporary folder, given a
 * node_modules the way the demo and the end-to-end tests do (`linkNodeModules`: links to this
 * checkout's node_modules, `kopf-gen` → this checkout). Their tsconfig has no `kopf-gen-source`
 * condition, so `kopf-gen/runtime` resolves to the compiled declarations in `dist/`, as it does
 * for a user. One difference from a user's install: the linked node_modules holds this checkout's
 * devDependencies too, so a package kopf-gen's declarations imported without declaring it would
 * be found and loaded here (none does today); the notes list the loaded files by package, which
 * would show it. Every `tsc` is the project's own `node_modules/.bin/tsc`, timed wall clock from spawn
 * to exit; switching it between TypeScript 5.9 and 7 is `useTypeScript`.
 *
 * The strict check extends the project's tsconfig with the strictest options a user may turn on
 * and `skipLibCheck: false`, then sorts tsc's error lines by where they are: kopf-gen's package
 * (the checkout, reached through node_modules/kopf-gen), other installed packages, or the
 * project's own files.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as generator from '../generator/index.js';
import * as demo from '../scripts/demo.js';
import * as report from './report.js';

const CHECKOUT = demo.CHECKOUT;
/** The options the strict check adds to the project's tsconfig. */
const STRICT_OPTIONS = {
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noPropertyAccessFromIndexSignature: true,
  skipLibCheck: false,
};
/** How many error lines of each group the notes show. */
const SHOWN_ERRORS = 3;

export interface TypecheckOptions {
  work: string;
  tscRuns: number;
}

/** Where the benchmarks take their CRD files from, and how the figures' notes name it. */
export interface CrdFolder {
  readonly directory: string;
  readonly label: string;
}

/**
 * The CRD files the benchmarks generate from: the external real-world corpus when
 * `KOPF_GEN_CRD_CORPUS` names one (as `.ci/run` does), else the repository's own generator
 * fixtures, so a plain clone can run every benchmark. A variable naming no folder of YAML throws.
 */
export function crdFolder(checkout: string = CHECKOUT): CrdFolder {
  const named = process.env['KOPF_GEN_CRD_CORPUS'];
  if (named === undefined || named === '')
    return { directory: path.join(checkout, 'fixtures/crds/generator'), label: 'the generator fixtures (fixtures/crds/generator)' };
  const directory = path.resolve(named);
  if (!fs.existsSync(directory) || !fs.readdirSync(directory).some((name) => name.endsWith('.yaml'))) {
    throw new Error(`KOPF_GEN_CRD_CORPUS=${named}: not a directory with .yaml files`);
  }
  return { directory, label: `the external corpus (KOPF_GEN_CRD_CORPUS=${named})` };
}

/**
 * The package a file belongs to when it is inside a package folder of a node_modules folder (the
 * innermost one), e.g. `@types/node`; undefined otherwise, also for files such as
 * node_modules/.package-lock.json that belong to no package.
 */
export function packageOf(file: string): string | undefined {
  const parts = file.split(/[\\/]/);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return undefined;
  const name = parts[at + 1]?.startsWith('@') ? parts.slice(at + 1, at + 3) : parts.slice(at + 1, at + 2);
  // The file must be inside the package folder, not the folder (or a loose file) itself.
  return at + name.length + 1 < parts.length && name.every(Boolean) ? name.join('/') : undefined;
}

const isInside = (file: string, folder: string): boolean => {
  const relative = path.relative(folder, file);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
};

/**
 * Who a file tsc loaded belongs to: its package when it is in a node_modules folder; `kopf-gen`
 * for the checkout's own files (node_modules/kopf-gen links to it); `(project)` for the
 * project's files; `(other)` otherwise. Relative paths are taken from the project folder.
 */
export function ownerOf(file: string, project: string, checkout: string = CHECKOUT): string {
  const absolute = path.resolve(project, file);
  const name = packageOf(absolute);
  if (name !== undefined) return name;
  if (isInside(absolute, checkout)) return 'kopf-gen';
  return isInside(absolute, project) ? '(project)' : '(other)';
}

export interface ErrorGroups {
  kopfGen: string[];
  otherPackages: string[];
  project: string[];
}

/**
 * Sorts the error lines of `tsc --pretty false` by location: kopf-gen's package, other packages
 * (and any file outside the project), the project. Errors without a file (the configuration's)
 * count as the project's. Continuation lines of long messages are left out.
 */
export function groupErrors(output: string, project: string, checkout: string = CHECKOUT): ErrorGroups {
  const groups: ErrorGroups = { kopfGen: [], otherPackages: [], project: [] };
  for (const line of output.split('\n')) {
    const located = /^(.+?)\(\d+,\d+\): error TS\d+:/.exec(line);
    if (!located) {
      if (/^error TS\d+:/.test(line)) groups.project.push(line);
      continue;
    }
    const owner = ownerOf(located[1]!, project, checkout);
    (owner === 'kopf-gen' ? groups.kopfGen : owner === '(project)' ? groups.project : groups.otherPackages).push(line);
  }
  return groups;
}

interface Finished {
  code: number | null;
  output: string;
  seconds: number;
}

/** Runs the project's tsc with `args`; wall-clock seconds from spawn to exit. */
function tsc(project: string, args: readonly string[]): Finished {
  const started = performance.now();
  const done = spawnSync(path.join(project, 'node_modules/.bin/tsc'), args, {
    cwd: project,
    env: { ...process.env, NODE_OPTIONS: '' },
    encoding: 'utf8',
    maxBuffer: 256 * 1048576,
    timeout: 600_000,
  });
  const seconds = (performance.now() - started) / 1000;
  if (done.error) throw new Error(`tsc ${args.join(' ')} in ${project}: ${done.error.message}`);
  return { code: done.status, output: `${done.stdout}${done.stderr}`, seconds };
}

/** Median seconds of `tsc --noEmit -p tsconfig.json` over `runs`; a failing check's first lines go to the notes. */
function timeCheck(project: string, runs: number, label: string, notes: Record<string, string>): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const done = tsc(project, ['--noEmit', '-p', 'tsconfig.json', '--pretty', 'false']);
    times.push(done.seconds);
    if (done.code !== 0) notes[`${label}_failed`] = `exit ${done.code}: ${done.output.trim().split('\n').slice(0, SHOWN_ERRORS).join(' | ')}`;
  }
  return report.spread(times).median;
}

/** Generates a project from one CRD file into `<work>/<name>` and links its node_modules (TypeScript 5.9). */
async function generated(work: string, name: string, crd: string): Promise<string> {
  const out = path.join(work, name);
  await generator.init({ crds: [crd], out, kopfGenDependency: `file:${CHECKOUT}` });
  demo.linkNodeModules(out, 'typescript');
  return out;
}

/** Times one project with both TypeScript builds; adds `<label>_tsc59_s` and `<label>_tsc7_s`. */
function timeBoth(project: string, label: string, runs: number, result: report.Collected): void {
  result.figures[`${label}_tsc59_s`] = timeCheck(project, runs, `${label}_tsc59`, result.notes);
  demo.useTypeScript(project, 'typescript-7');
  try {
    result.figures[`${label}_tsc7_s`] = timeCheck(project, runs, `${label}_tsc7`, result.notes);
  } finally {
    demo.useTypeScript(project, 'typescript');
  }
}

/** The loaded files counted by owner, the largest `shown` owners first, as `owner N` items. */
function loadedByOwner(files: readonly string[], project: string, shown = 10): string {
  const counts = new Map<string, number>();
  for (const file of files) {
    const owner = ownerOf(file, project);
    counts.set(owner, (counts.get(owner) ?? 0) + 1);
  }
  const sorted = [...counts].sort((a, b) => b[1] - a[1]);
  const rest = sorted.slice(shown).reduce((sum, [, n]) => sum + n, 0);
  return [...sorted.slice(0, shown).map(([owner, n]) => `${owner} ${n}`), ...(rest ? [`${sorted.length - shown} more owners ${rest}`] : [])].join(', ');
}

/** An error line with its file shown relative to the project, or to the checkout for files in it. */
function shortened(line: string, project: string): string {
  const located = /^(.+?)(\(\d+,\d+\): .*)$/.exec(line);
  if (!located) return line;
  const absolute = path.resolve(project, located[1]!);
  return `${path.relative(isInside(absolute, CHECKOUT) ? CHECKOUT : project, absolute)}${located[2]}`;
}

/** The files of kopf-gen's compiled declarations that import `name` (or a subpath of it), relative to the checkout. */
function declarationsImporting(name: string): string[] {
  const pattern = new RegExp(`(?:from\\s*|import\\(\\s*)['"]${name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(?:/[^'"]*)?['"]`);
  return fs
    .readdirSync(path.join(CHECKOUT, 'dist'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.d.ts') && pattern.test(fs.readFileSync(path.join(CHECKOUT, 'dist', file), 'utf8')))
    .map((file) => path.join('dist', file))
    .sort();
}

/** The strict check of a project; adds the three `strict_errors_…` figures and notes. */
function strictCheck(project: string, result: report.Collected): void {
  fs.writeFileSync(path.join(project, 'tsconfig.strict.json'), `${JSON.stringify({ extends: './tsconfig.json', compilerOptions: STRICT_OPTIONS }, null, 2)}\n`);
  const done = tsc(project, ['--noEmit', '-p', 'tsconfig.strict.json', '--pretty', 'false']);
  const groups = groupErrors(done.output, project);
  const names = { kopfGen: 'kopf_gen', otherPackages: 'other_packages', project: 'project' } as const;
  for (const [group, name] of Object.entries(names) as [keyof ErrorGroups, string][]) {
    result.figures[`strict_errors_${name}`] = groups[group].length;
    if (groups[group].length)
      result.notes[`strict_errors_${name}`] = groups[group]
        .slice(0, SHOWN_ERRORS)
        .map((line) => shortened(line, project))
        .join(' | ');
  }
  result.targets['strict_errors_kopf_gen'] = { max: 0 };
  // Which packages the other packages' errors are in, and which of kopf-gen's declarations import them.
  const perPackage = new Map<string, number>();
  for (const line of groups.otherPackages) {
    const owner = ownerOf(/^(.+?)\(/.exec(line)![1]!, project);
    perPackage.set(owner, (perPackage.get(owner) ?? 0) + 1);
  }
  if (perPackage.size) {
    result.notes['strict_errors_other_packages_by_package'] = [...perPackage]
      .sort((a, b) => b[1] - a[1])
      .map(([owner, n]) => {
        const importers = declarationsImporting(owner);
        return `${owner} ${n} (${importers.length ? `imported by kopf-gen's ${importers.join(', ')}` : "not imported by kopf-gen's declarations directly"})`;
      })
      .join('; ');
  }
}

function version(project: string): string {
  return tsc(project, ['--version']).output.trim();
}

/** Parts 2 and 3 of the startup benchmark. */
export async function measure(options: TypecheckOptions, result: report.Collected): Promise<void> {
  const { figures, targets, notes } = result;
  const oneKind = await generated(options.work, 'one-kind', path.join(CHECKOUT, 'fixtures/crds/kopfexamples.yaml'));
  timeBoth(oneKind, 'one_kind', options.tscRuns, result);
  targets['one_kind_tsc59_s'] = { max: 2 };
  const listed = tsc(oneKind, ['-p', 'tsconfig.json', '--listFilesOnly'])
    .output.split('\n')
    .filter((line) => line.trim());
  figures['one_kind_tsc59_files'] = listed.length;
  notes['one_kind_tsc59_files'] = loadedByOwner(listed, oneKind);
  const versions = [version(oneKind)];
  demo.useTypeScript(oneKind, 'typescript-7');
  try {
    versions.push(version(oneKind));
  } finally {
    demo.useTypeScript(oneKind, 'typescript');
  }
  notes['typescript'] = `tsc59: ${versions[0]}, tsc7: ${versions[1]}; each figure the median of ${options.tscRuns} run(s), wall clock`;
  notes['typecheck_layout'] =
    "node_modules linked to this checkout's: it also holds the checkout's devDependencies, which a project's " +
    "own install would not (the loaded files per package, above, show whether kopf-gen's declarations reach any)";

  const corpus = crdFolder();
  const files = fs
    .readdirSync(corpus.directory)
    .filter((name) => name.endsWith('.yaml'))
    .map((name) => path.join(corpus.directory, name));
  const largest = files.reduce((a, b) => (fs.statSync(b).size > fs.statSync(a).size ? b : a));
  let project: string | undefined;
  try {
    project = await generated(options.work, 'largest', largest);
  } catch (error) {
    notes['largest'] = `skipped: generating from ${path.basename(largest)} failed: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (project !== undefined) {
    const modules = fs.readdirSync(path.join(project, 'src/generated')).filter((name) => name.endsWith('.ts')).length;
    notes['largest'] =
      `${path.basename(largest)} of ${corpus.label} (${(fs.statSync(largest).size / 1e6).toFixed(2)} MB of YAML → ${modules} modules in src/generated/)`;
    timeBoth(project, 'largest', options.tscRuns, result);
  }

  strictCheck(oneKind, result);
}
