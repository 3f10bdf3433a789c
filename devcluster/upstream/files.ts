/**
 * Where the upstream data files live. They sit beside this module in the sources
 * (`devcluster/upstream/`); the compiled distribution (`dist/devcluster/upstream/`) does not copy
 * them, so from there they are read from the package's own `devcluster/upstream/` folder, which the
 * package ships. Reading is synchronous: callers load each file once, lazily, on first use.
 */
import * as fs from 'node:fs';

const candidates = (name: string): URL[] => [new URL(`./${name}`, import.meta.url), new URL(`../../../devcluster/upstream/${name}`, import.meta.url)];

/** The text of an upstream data file; throws naming every place looked at when it is missing. */
export function readDataFile(name: string): string {
  for (const url of candidates(name)) {
    if (fs.existsSync(url)) return fs.readFileSync(url, 'utf8');
  }
  throw new Error(
    `devcluster: upstream data file ${name} not found (looked in ${candidates(name)
      .map((u) => u.pathname)
      .join(', ')})`,
  );
}
