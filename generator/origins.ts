/**
 * Where the running generator — and the kopf-gen runtime beside it — came from, so that a
 * generated project's `npm install` finds the same packages: a source checkout (`file:` links to
 * its folders), a tarball (`file:` links to the `.tgz` files, as npm recorded them when it
 * installed them), or the registry (a version range).
 *
 * The generator's own version is read from its package.json at run time: this module runs from
 * TypeScript sources in the repository and compiled from `dist/` when published, and the relative
 * path to package.json differs between the two.
 */
import * as fs from 'node:fs';
import * as module from 'node:module';
import * as path from 'node:path';
import * as url from 'node:url';

/** The generator package's name. */
export const GENERATOR_PACKAGE = '@kopf-gen/generator';
/** The runtime package's name. */
export const RUNTIME_PACKAGE = 'kopf-gen';

/** An installed package: its folder and version. */
export interface InstalledPackage {
  readonly root: string;
  readonly version: string;
}

/**
 * Finds the nearest package.json named `name` above a file.
 *
 * @throws Error if there is none.
 */
export function findPackage(file: string, name: string): InstalledPackage {
  let dir = path.dirname(file);
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest)) {
      const json = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: unknown; version?: unknown };
      if (json.name === name && typeof json.version === 'string') return { root: dir, version: json.version };
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`${file} is not inside the ${name} package`);
    dir = parent;
  }
}

/** This generator package. */
export const GENERATOR: InstalledPackage = findPackage(url.fileURLToPath(import.meta.url), GENERATOR_PACKAGE);

/** The dependency specs a generated package.json uses for the two packages. */
export interface DependencySpecs {
  readonly kopfGen: string;
  readonly generator: string;
}

/**
 * The dependency specs for a generated project, from where this generator runs:
 * - a checkout (the generator's folder is not inside node_modules, and its parent folder is the
 *   kopf-gen package): `file:<checkout>` and `file:<checkout>/generator`;
 * - installed from tarballs: `file:<absolute .tgz>` for each, from npm's lock file of the install;
 * - otherwise (the registry): `^<version>` for each.
 */
export function dependencySpecs(generator: InstalledPackage = GENERATOR): DependencySpecs {
  const root = fs.realpathSync(generator.root);
  if (!root.split(path.sep).includes('node_modules')) {
    const checkout = path.dirname(root);
    return { kopfGen: `file:${checkout}`, generator: `file:${root}` };
  }
  const runtime = installedRuntime(root);
  return {
    kopfGen: tarballOf(runtime?.root) ?? `^${runtime?.version ?? generator.version}`,
    generator: tarballOf(root) ?? `^${generator.version}`,
  };
}

/** The kopf-gen package as seen from the generator's folder, if installed. */
function installedRuntime(generatorRoot: string): InstalledPackage | undefined {
  try {
    const manifest = module.createRequire(path.join(generatorRoot, 'package.json')).resolve(`${RUNTIME_PACKAGE}/package.json`);
    return findPackage(manifest, RUNTIME_PACKAGE);
  } catch {
    return undefined;
  }
}

/**
 * The `file:` spec of the tarball a package was installed from, from the lock files npm keeps in
 * the installing project (`node_modules/.package-lock.json`, then `package-lock.json`).
 */
function tarballOf(packageRoot: string | undefined): string | undefined {
  if (!packageRoot) return undefined;
  const parts = fs.realpathSync(packageRoot).split(path.sep);
  const index = parts.lastIndexOf('node_modules');
  if (index < 0) return undefined;
  const project = parts.slice(0, index).join(path.sep) || path.sep;
  const key = parts.slice(index).join('/');
  for (const lock of [path.join(project, 'node_modules', '.package-lock.json'), path.join(project, 'package-lock.json')]) {
    const resolved = resolvedIn(lock, key);
    if (resolved?.startsWith('file:') && /\.(tgz|tar\.gz)$/.test(resolved)) {
      return `file:${path.resolve(project, resolved.slice('file:'.length))}`;
    }
    if (resolved !== undefined) return undefined;
  }
  return undefined;
}

function resolvedIn(lockFile: string, key: string): string | undefined {
  try {
    const lock = JSON.parse(fs.readFileSync(lockFile, 'utf8')) as { packages?: Record<string, { resolved?: unknown }> };
    const resolved = lock.packages?.[key]?.resolved;
    return typeof resolved === 'string' ? resolved : undefined;
  } catch {
    return undefined;
  }
}
