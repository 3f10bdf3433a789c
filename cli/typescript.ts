/**
 * Running operator files written in TypeScript: `kopf-gen run src/main.ts`.
 *
 * Compiled `.js`/`.mjs` files need nothing: plain Node imports them. For `.ts`, `.mts` and `.cts`
 * files the command registers tsx's loader (a devDependency of generated projects, resolved from
 * the project first, then from beside kopf-gen), so development runs need no build step.
 *
 * tsx decides between ES modules and CommonJS by the enclosing package.json's `type`, as Node
 * does for `.js`. In a package without `"type": "module"` (what `npm init -y` writes) an operator
 * file with `import` statements and top-level `await` would then be compiled as CommonJS and
 * fail. A small resolve hook registered after tsx's therefore marks `.ts` files (outside
 * node_modules) as ES modules whatever the package's type; `.cts` stays CommonJS, `.mts` is ESM.
 */
import * as fs from 'node:fs';
import * as module from 'node:module';
import * as path from 'node:path';
import * as url from 'node:url';
import { TypeScriptLoaderError } from './errors.js';

/** The file extensions that need a TypeScript loader. */
const TYPESCRIPT = /\.(ts|mts|cts|tsx)$/;

/** Whether any of the files needs a TypeScript loader. */
export function needsLoader(files: readonly string[]): boolean {
  return files.some((file) => TYPESCRIPT.test(file));
}

/** The hook that makes `.ts` files (outside node_modules) ES modules; see the module's header. */
const FORMAT_HOOK = `
export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  if (!result.url.startsWith('file:')) return result;
  const pathname = new URL(result.url).pathname;
  if (/\\.(ts|tsx)$/.test(pathname) && !pathname.includes('/node_modules/')) return { ...result, format: 'module' };
  return result;
}
`;

let registered = false;

/**
 * Registers tsx's ESM loader and the format hook, once per process. tsx is resolved from `cwd`
 * (the user's project) first, then from kopf-gen's own location.
 *
 * @throws TypeScriptLoaderError naming the fix when tsx is not installed.
 */
export async function registerLoader(cwd: string): Promise<void> {
  if (registered) return;
  const api = resolveTsx(cwd);
  const tsx = (await import(api)) as { register: () => unknown };
  tsx.register();
  module.register(`data:text/javascript,${encodeURIComponent(FORMAT_HOOK)}`);
  registered = true;
}

/**
 * The path of tsx's package.json: from `cwd` (the user's project) first, then from kopf-gen's own
 * location.
 *
 * @throws TypeScriptLoaderError naming the fix when tsx is not installed.
 */
export function tsxManifest(cwd: string): string {
  for (const base of [path.join(cwd, 'package.json'), url.fileURLToPath(import.meta.url)]) {
    try {
      return module.createRequire(base).resolve('tsx/package.json');
    } catch {
      // Not installed there; try the next place.
    }
  }
  throw new TypeScriptLoaderError(
    'running TypeScript files needs tsx: install it in the project (npm install --save-dev tsx), ' + 'or compile the operator and run the .js file',
  );
}

/**
 * The URL of tsx's ES-module API (`tsx/esm/api`, its `import` condition). `require.resolve` would
 * pick the CommonJS build, which cannot register the ESM loader, so the path comes from tsx's own
 * package.json `exports`.
 */
function resolveTsx(cwd: string): string {
  const manifest = tsxManifest(cwd);
  const json = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { exports?: Record<string, { import?: { default?: string } | string }> };
  const entry = json.exports?.['./esm/api']?.import;
  const target = typeof entry === 'string' ? entry : entry?.default;
  if (!target) throw new TypeScriptLoaderError(`${manifest}: this version of tsx has no ES-module API (tsx/esm/api); install tsx 4 or later`);
  return url.pathToFileURL(path.join(path.dirname(manifest), target)).href;
}
