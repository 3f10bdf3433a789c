/**
 * The version of the installed kopf-gen package, for the `User-Agent` header and `--version`.
 *
 * It is read from package.json when this module loads instead of being imported as JSON: the
 * same code runs from its TypeScript source in the repository (`runtime/cogs/configs/`) and
 * compiled in the published package (`dist/runtime/cogs/configs/`), so the relative path to
 * package.json differs, and a JSON import would also make the compiler copy package.json into
 * the output folder, where Node would take it for the package's own.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as url from 'node:url';

/** The package's name in the registry. */
export const PACKAGE_NAME = 'kopf-gen';

/**
 * Finds the nearest package.json named `name` above a file, and returns its folder and version.
 *
 * @throws Error if there is none: the file is not inside that package.
 */
export function findPackage(file: string, name: string): { readonly root: string; readonly version: string } {
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

/**
 * This package, or — when the runtime was bundled into an operator's own file (esbuild, rollup),
 * so that no kopf-gen package.json is above it — an unknown version and the bundle's folder.
 */
function ownPackage(): { readonly root: string; readonly version: string } {
  const file = url.fileURLToPath(import.meta.url);
  try {
    return findPackage(file, PACKAGE_NAME);
  } catch {
    return { root: path.dirname(file), version: 'unknown' };
  }
}

const own = ownPackage();

/** The installed kopf-gen's version, e.g. `0.2.0` (`unknown` in a bundle). */
export const VERSION: string = own.version;
/** The installed kopf-gen's folder (the one holding its package.json; a bundle's own folder). */
export const PACKAGE_ROOT: string = own.root;
