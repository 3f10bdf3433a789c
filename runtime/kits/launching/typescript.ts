/**
 * Loading operator files written in TypeScript where the process cannot: registering tsx's loader
 * (R-TEST-101).
 *
 * Whoever loads the operator's `src/main.ts` — `kopf-gen run`, or `KopfRunner` inside a project's
 * own tests — needs an `import()` that understands TypeScript. Under `node --import tsx`, mocha
 * with tsx, or vitest transforming kopf-gen itself, it already does; under plain Node, and under
 * vitest when it leaves kopf-gen in node_modules to Node (its default), it does not ("Unknown file
 * extension .ts"). Then this module registers tsx's loader — a devDependency of generated projects,
 * resolved from the project first, then from beside kopf-gen — once per process. It is loaded only
 * when a TypeScript file must be loaded: compiled operators (`node dist/main.js`) never touch tsx.
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
  return files.some((file) => TYPESCRIPT.test(file.replace(/[?#].*$/, '')));
}

/**
 * Whether an error of `import()` says that the process cannot load TypeScript at all — raised
 * while the module graph was being resolved and loaded, before any module of it ran, so the
 * import can be retried once a loader is registered.
 */
export function isUnloadableTypeScript(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ERR_UNKNOWN_FILE_EXTENSION') return error instanceof Error && /"\.(ts|mts|cts|tsx)"/.test(error.message);
  return code === 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX' || code === 'ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING';
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

/**
 * Set once tsx is registered, on `globalThis` under a registered symbol: two copies of kopf-gen in
 * one process (the command line's and a project's) must not register it twice.
 */
const REGISTERED = Symbol.for('kopf-gen.typescript-loader');

interface LoaderFlag {
  [REGISTERED]?: boolean;
}

/** Whether this process has registered tsx's loader through kopf-gen. */
export function isLoaderRegistered(): boolean {
  return (globalThis as LoaderFlag)[REGISTERED] === true;
}

/**
 * Registers tsx's ESM loader and the format hook, once per process. tsx is resolved from `cwd`
 * (the user's project) first, then from kopf-gen's own location.
 *
 * @throws TypeScriptLoaderError naming the fix when tsx is not installed.
 */
export async function registerLoader(cwd: string): Promise<void> {
  if (isLoaderRegistered()) return;
  const api = resolveTsx(cwd);
  const tsx = (await import(api)) as { register: () => unknown };
  tsx.register();
  module.register(`data:text/javascript,${encodeURIComponent(FORMAT_HOOK)}`);
  (globalThis as LoaderFlag)[REGISTERED] = true;
}

/**
 * The path of tsx's package.json: from `cwd` (the user's project) first, then from kopf-gen's own
 * location. The command line's syntax check finds tsx's esbuild through it, too.
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
    'running TypeScript files needs tsx: install it in the project (npm install --save-dev tsx), or compile the operator and run the .js file',
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
