/**
 * Compiled operators for the benchmarks: production runs `node dist/main.js`, not a TypeScript
 * loader, so the benchmarks measure JavaScript on the compiled runtime in `dist/`. Operator files
 * are transpiled (no type checking: `npm run typecheck` does that) into a folder under
 * `bench/.build/` (gitignored). That folder is inside the package, so `kopf-gen/runtime` resolves
 * there by the package's self-reference to `dist/runtime/index.js` (a folder under
 * `node_modules/` would not: Node ends the package-scope lookup at a `node_modules` segment), and
 * `.js` files there are ES modules by the package's `"type": "module"`.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

export const ROOT = path.resolve(import.meta.dirname, '..');

/**
 * Throws unless `dist/` holds the compiled runtime and command line, built after the last change
 * of any TypeScript source of `runtime/` and `cli/` (by file modification times).
 */
export function requireFreshDistribution(): void {
  const entry = path.join(ROOT, 'dist/runtime/index.js');
  if (!fs.existsSync(entry) || !fs.existsSync(path.join(ROOT, 'dist/cli/main.js'))) {
    throw new Error('the compiled distribution is missing (dist/runtime, dist/cli): run npm run build');
  }
  const built = fs.statSync(entry).mtimeMs;
  const newer: string[] = [];
  const walk = (dir: string): void => {
    for (const item of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, item.name);
      if (item.isDirectory()) walk(full);
      else if (item.name.endsWith('.ts') && fs.statSync(full).mtimeMs > built) newer.push(path.relative(ROOT, full));
    }
  };
  walk(path.join(ROOT, 'runtime'));
  walk(path.join(ROOT, 'cli'));
  if (newer.length)
    throw new Error(`the compiled distribution is older than ${newer.slice(0, 3).join(', ')}${newer.length > 3 ? ', …' : ''}: run npm run build`);
}

/**
 * Transpiles the TypeScript file `source` (relative to the package folder) to an ES2022 ES module
 * at `target` (likewise relative); returns `target`.
 */
export function transpile(source: string, target: string): string {
  const compiled = ts.transpileModule(fs.readFileSync(path.join(ROOT, source), 'utf8'), {
    fileName: path.basename(source),
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
  });
  fs.mkdirSync(path.dirname(path.join(ROOT, target)), { recursive: true });
  fs.writeFileSync(path.join(ROOT, target), compiled.outputText);
  return target;
}

/**
 * The file `kopf-gen/runtime` resolves to from `folder` (relative to the package folder) for plain
 * Node; throws unless it is the compiled runtime, `dist/runtime/index.js`.
 */
export function requireRuntimeFromDist(folder: string): string {
  const probe = spawnSync(process.execPath, ['--input-type=module', '-e', "process.stdout.write(import.meta.resolve('kopf-gen/runtime'))"], {
    cwd: path.join(ROOT, folder),
    env: { ...process.env, NODE_OPTIONS: '' },
    encoding: 'utf8',
  });
  const resolved = probe.stdout.trim();
  if (!resolved.endsWith('/dist/runtime/index.js')) {
    throw new Error(`kopf-gen/runtime resolves from ${folder} to ${resolved || `nothing (${probe.stderr.trim()})`}, not to dist/runtime/index.js`);
  }
  return path.relative(ROOT, new URL(resolved).pathname);
}
