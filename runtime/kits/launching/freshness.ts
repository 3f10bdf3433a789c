/**
 * Every load of the operator's files evaluates the user's whole module graph afresh (R-TEST-102),
 * as a new process would.
 *
 * Handlers register as a side effect of importing the modules that declare them. The entry file
 * is imported with a query of its own (`src/main.ts?kopf-load=2`), so it runs again; but the
 * modules it imports (`./generated/handlers.js`, `./handlers/widget.js`) would come from Node's
 * module cache, already evaluated — and a second `KopfRunner` in a test process would get an empty
 * registry. A resolve hook (Node's `module.register`) therefore hands the importer's `kopf-load`
 * query on to what it imports by a relative or absolute path (or a `#` subpath import): the user's
 * own files, evaluated again with fresh module-level state. Packages (bare specifiers), anything
 * under node_modules and kopf-gen's own folders keep their one instance, so the fresh handlers
 * register into the runtime the runner uses.
 *
 * The hook is a few lines of JavaScript registered as a `data:` URL the first time a file is
 * loaded; it never loads tsx. It acts on Node's own `import()` only: where a test runner resolves
 * modules itself (vitest transforming kopf-gen's sources, as in this repository's tests), only the
 * entry file is fresh (docs/testing.md says so).
 */
import * as module from 'node:module';
import * as path from 'node:path';
import * as url from 'node:url';
import * as versions from '../../cogs/configs/versions.js';

/** The query that names one load of the operator's files. */
export const QUERY = 'kopf-load';

/** The hook: hands an importer's `kopf-load` on to the user's own files it imports; see the header. */
const HOOK = `
let kept = [];
export async function initialize(data) { kept = data?.kept ?? []; }
export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  const parent = context.parentURL;
  if (!parent || !parent.includes('${QUERY}=') || !result.url.startsWith('file:')) return result;
  if (!/^(\\.{1,2}\\/|\\/|file:|#)/.test(specifier)) return result;
  const load = new URL(parent).searchParams.get('${QUERY}');
  const target = new URL(result.url);
  if (load === null || target.searchParams.has('${QUERY}') || target.pathname.includes('/node_modules/')) return result;
  if (kept.some((prefix) => target.pathname.startsWith(prefix))) return result;
  target.searchParams.set('${QUERY}', load);
  return { ...result, url: target.href };
}
`;

/**
 * Set once the hook is registered, on `globalThis` under a registered symbol: two copies of
 * kopf-gen in one process must not chain it twice.
 */
const REGISTERED = Symbol.for('kopf-gen.fresh-module-graphs');

interface HookFlag {
  [REGISTERED]?: boolean;
}

/** kopf-gen's own folders: the fresh user modules must import the runtime that runs them. */
function keptFolders(): string[] {
  return ['dist', 'runtime', 'devcluster', 'cli', 'testing'].map((folder) => `${url.pathToFileURL(path.join(versions.PACKAGE_ROOT, folder)).pathname}/`);
}

/** Registers the hook, once per process (where Node offers `module.register`). */
export function ensureFreshGraphs(): void {
  const flag = globalThis as HookFlag;
  if (flag[REGISTERED] === true || typeof module.register !== 'function') return;
  module.register(`data:text/javascript,${encodeURIComponent(HOOK)}`, { data: { kept: keptFolders() } });
  flag[REGISTERED] = true;
}
