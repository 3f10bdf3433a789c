/**
 * The production-install part of the startup benchmark (`startup.ts` defines its figures): what
 * an operator's container carries in node_modules. Both packages are packed as they would be
 * published (`npm pack --ignore-scripts`: the distribution is already built, and a rebuild would
 * rewrite dist/ under anything else using it); a fresh folder whose package.json depends on the
 * kopf-gen tarball, with the generator's tarball as a devDependency as in a generated project,
 * is installed with `npm install --omit=dev`; a second folder depending on the kopf-gen tarball
 * alone is installed the same way, so that a difference shows devDependencies that reached the
 * production install. Sizes are apparent file sizes (symbolic links such as node_modules/.bin
 * entries are not followed), attributed to the innermost package folder.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as demo from '../scripts/demo.js';
import type * as report from './report.js';
import * as typechecking from './typechecking.js';

const CHECKOUT = demo.CHECKOUT;
const NPM_FLAGS = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];
const MB = 1e6;
/** How many of the largest packages the notes list. */
const LISTED_PACKAGES = 8;

export interface InstallOptions {
  work: string;
}

/** Runs npm; throws with its output when it fails. */
function npm(args: readonly string[], cwd: string): string {
  const done = spawnSync('npm', args, { cwd, env: { ...process.env, NODE_OPTIONS: '' }, encoding: 'utf8', maxBuffer: 64 * 1048576, timeout: 900_000 });
  if (done.error || done.status !== 0) {
    throw new Error(
      `npm ${args.join(' ')} failed (${done.error?.message ?? `exit ${done.status}`}): ${`${done.stdout}${done.stderr}`.trim().split('\n').slice(-5).join(' | ')}`,
    );
  }
  return done.stdout;
}

interface Packed {
  filename: string;
  size: number;
  unpackedSize: number;
}

/** Packs the package in `cwd` (or a workspace of it) into `destination`; the tarball's path and sizes. */
function pack(extra: readonly string[], destination: string): Packed {
  const [packed] = JSON.parse(
    npm(['pack', ...extra, '--ignore-scripts', '--json', '--pack-destination', destination, '--loglevel=error'], CHECKOUT),
  ) as Packed[];
  if (!packed) throw new Error(`npm pack ${extra.join(' ')} reported no tarball`);
  return { ...packed, filename: path.join(destination, path.basename(packed.filename)) };
}

/** Bytes per package (innermost package folder) of the regular files under `folder`. */
export function sizesByPackage(folder: string): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const entry of fs.readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const owner = typechecking.packageOf(path.relative(path.dirname(folder), file)) ?? '(none)';
    sizes.set(owner, (sizes.get(owner) ?? 0) + fs.lstatSync(file).size);
  }
  return sizes;
}

/** Installs `manifest` with `npm install --omit=dev` in a new folder; bytes per package of its node_modules, and the seconds it took. */
function install(folder: string, manifest: object): { sizes: Map<string, number>; seconds: number } {
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(path.join(folder, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const started = performance.now();
  npm(['install', '--omit=dev', ...NPM_FLAGS], folder);
  return { sizes: sizesByPackage(path.join(folder, 'node_modules')), seconds: (performance.now() - started) / 1000 };
}

const total = (sizes: ReadonlyMap<string, number>): number => [...sizes.values()].reduce((sum, bytes) => sum + bytes, 0);
const packages = (sizes: ReadonlyMap<string, number>): string[] => [...sizes.keys()].filter((name) => name !== '(none)');

/** Part 4 of the startup benchmark. */
export async function measure(options: InstallOptions, result: report.Collected): Promise<void> {
  const { figures, targets, notes } = result;
  const tarballs = path.join(options.work, 'tarballs');
  fs.mkdirSync(tarballs, { recursive: true });
  const kopfGen = pack([], tarballs);
  const generator = pack(['--workspace', 'generator'], tarballs);
  figures['kopf_gen_tarball_mb'] = kopfGen.size / MB;
  figures['kopf_gen_unpacked_mb'] = kopfGen.unpackedSize / MB;
  const base = { version: '0.1.0', private: true, type: 'module', dependencies: { 'kopf-gen': `file:${kopfGen.filename}` } };
  const project = install(path.join(options.work, 'production-install'), {
    name: 'production-install',
    ...base,
    devDependencies: { '@kopf-gen/generator': `file:${generator.filename}` },
  });
  figures['install_node_modules_mb'] = total(project.sizes) / MB;
  figures['install_packages'] = packages(project.sizes).length;
  targets['install_node_modules_mb'] = { max: 25 };
  notes['install'] = `npm install --omit=dev of the kopf-gen tarball took ${project.seconds.toFixed(1)} s (registry, --prefer-offline); MB = 10^6 bytes`;
  notes['install_largest_packages'] = [...project.sizes]
    .sort((a, b) => b[1] - a[1])
    .slice(0, LISTED_PACKAGES)
    .map(([name, bytes]) => `${name} ${(bytes / MB).toFixed(2)} MB`)
    .join(', ');

  // The same without the generator as a devDependency: what kopf-gen itself brings. A difference
  // means devDependencies reached the production install.
  const alone = install(path.join(options.work, 'runtime-only-install'), { name: 'runtime-only-install', ...base });
  figures['install_runtime_only_mb'] = total(alone.sizes) / MB;
  const extra = packages(project.sizes)
    .filter((name) => !alone.sizes.has(name))
    .sort((a, b) => project.sizes.get(b)! - project.sizes.get(a)!);
  if (extra.length) {
    const bytes = extra.reduce((sum, name) => sum + project.sizes.get(name)!, 0);
    notes['install_devdependencies_kept'] =
      `${extra.length} packages (${(bytes / MB).toFixed(1)} MB) are there only because of the generator devDependency, ` +
      `although --omit=dev, largest first: ${extra.slice(0, LISTED_PACKAGES).join(', ')}${extra.length > LISTED_PACKAGES ? ', …' : ''} ` +
      '(`npm explain @kopf-gen/generator` in the install folder says which edges keep it)';
  }
}
