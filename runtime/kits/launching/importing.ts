/**
 * Importing the operator's own modules — the files and `-m` modules given to `run`, whose
 * imports register the handlers — and saying precisely where one of them failed.
 *
 * Every load evaluates the user's module graph afresh (`freshness.ts`, R-TEST-102), and a
 * TypeScript file loads whatever the process's `import()` understands: when it cannot load `.ts`,
 * tsx's loader is registered and the import tried again (`typescript.ts`, R-TEST-101).
 *
 * A module can fail to load in three ways, and each reports its position differently: a
 * TypeScript loader's transform error (esbuild-style errors with a `location`), a JavaScript
 * syntax error (V8 puts `file:line` and a caret above the message, not in it), or an exception
 * thrown while the module runs (the position is in a stack frame). `ModuleLoadError` turns all
 * three into one line, `cannot load src/main.ts:3:7: SyntaxError: Unexpected ";"`, so a user
 * never has to dig through a loader's stack trace to find the line to fix.
 */

import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as module from 'node:module';
import * as path from 'node:path';
import * as url from 'node:url';
import * as versions from '../../cogs/configs/versions.js';
import { MissingModuleError, ModuleLoadError, type SourceLocation } from './errors.js';
import * as freshness from './freshness.js';
import * as typescript from './typescript.js';

let loads = 0;

/**
 * How many operator modules are being imported right now, process-wide. Kept on `globalThis`
 * under a registered symbol so that two copies of kopf-gen in one process (a linked checkout and
 * an installed package) agree; `main()` reads it to tell an import by a launcher from a mistake.
 */
const LOADING = Symbol.for('kopf-gen.loading-operator-modules');

interface LoadingCounter {
  [LOADING]?: number;
}

/** Whether `loadOperatorModules()` (of `kopf-gen run`, `KopfRunner`, …) is importing a module now. */
export function isLoadingOperatorModules(): boolean {
  return ((globalThis as LoadingCounter)[LOADING] ?? 0) > 0;
}

/**
 * Imports the operator's files and modules in order (R-CLI-1/3). Files are imported by absolute
 * file URL and executed on every call, as Kopf does, together with every file of the user's they
 * import (R-TEST-102); so are `-m` modules that resolve to the user's own files. `-m` packages
 * (in node_modules) are imported once per process, as any package.
 *
 * @throws MissingModuleError for a file that does not exist; ModuleLoadError (with the original
 *   error as its `cause`) for anything a module throws while loading, and for a TypeScript file
 *   where tsx is not installed.
 */
export async function loadOperatorModules(options: {
  readonly paths?: readonly string[];
  readonly modules?: readonly string[];
  readonly cwd?: string;
}): Promise<void> {
  const cwd = options.cwd ?? process.cwd();
  for (const file of options.paths ?? []) {
    const absolute = path.resolve(cwd, file);
    if (!fs.existsSync(absolute)) throw new MissingModuleError(`No such file: ${file}`);
    await importLocated(url.pathToFileURL(absolute).href, file, cwd);
  }
  for (const specifier of options.modules ?? []) {
    await importLocated(resolveModule(specifier, cwd), specifier, cwd);
  }
}

/** Whether a module is the user's own file, loaded afresh each time (not a package). */
function isOwnFile(target: string): boolean {
  return target.startsWith('file:') && !target.includes('/node_modules/');
}

/** The URL of one fresh load of the user's file. */
function freshUrl(target: string): string {
  loads += 1;
  const fresh = new URL(target);
  fresh.searchParams.set(freshness.QUERY, String(loads));
  return fresh.href;
}

async function importLocated(target: string, given: string, cwd: string): Promise<void> {
  const counter = globalThis as LoadingCounter;
  counter[LOADING] = (counter[LOADING] ?? 0) + 1;
  const own = isOwnFile(target);
  if (own) freshness.ensureFreshGraphs();
  let attempted = own ? freshUrl(target) : target;
  try {
    try {
      await import(attempted);
    } catch (error) {
      // Nothing of the graph ran yet: with tsx's loader registered, a fresh load can succeed.
      if (!own || !typescript.isUnloadableTypeScript(error) || typescript.isLoaderRegistered()) throw error;
      await typescript.registerLoader(cwd);
      attempted = freshUrl(target);
      await import(attempted);
    }
  } catch (error) {
    const location = locate(error, cwd) ?? (error instanceof SyntaxError ? checkSyntax(attempted, cwd) : undefined);
    throw new ModuleLoadError(given, location, describe(error), { cause: error });
  } finally {
    counter[LOADING] = (counter[LOADING] ?? 1) - 1;
  }
}

/**
 * Where a JavaScript file's syntax error is. V8 keeps the position of a module's syntax error
 * out of the error object (Node prints it only for uncaught errors), so on that rare failure
 * path `node --check` compiles the file again and its report is read. A syntax error in a module
 * the file imports is not found this way; the error then names the given file only.
 */
function checkSyntax(target: string, cwd: string): SourceLocation | undefined {
  if (!target.startsWith('file:')) return undefined;
  const file = url.fileURLToPath(target.replace(/\?.*$/, ''));
  const checked = childProcess.spawnSync(process.execPath, ['--check', file], { encoding: 'utf8', timeout: 10_000 });
  const header = /^(\S+?):(\d+)\n[^\n]*\n( *)\^/m.exec(checked.stderr ?? '');
  return header ? at(header[1]!, Number(header[2]), header[3]!.length + 1, cwd) : undefined;
}

function resolveModule(specifier: string, cwd: string): string {
  if (specifier.startsWith('.') || path.isAbsolute(specifier)) return url.pathToFileURL(path.resolve(cwd, specifier)).href;
  try {
    return url.pathToFileURL(module.createRequire(path.join(cwd, 'noop.js')).resolve(specifier)).href;
  } catch {
    return specifier;
  }
}

/** `Name: message` of an error, with a transform error's first message instead of its summary. */
function describe(error: unknown): string {
  const first = transformErrors(error)[0];
  if (first?.text) return `SyntaxError: ${first.text}`;
  if (error instanceof Error) return `${error.name}: ${error.message.split('\n')[0]}`;
  return String(error);
}

interface TransformMessage {
  readonly text?: string;
  readonly location?: { readonly file?: string; readonly line?: number; readonly column?: number } | null;
}

/**
 * A TypeScript loader's transform errors: esbuild's `errors` list when the error carries it, else
 * the `FILE:LINE:COLUMN: ERROR: TEXT` lines of its message (tsx passes only the message on).
 */
function transformErrors(error: unknown): readonly TransformMessage[] {
  const list = (error as { errors?: unknown } | null)?.errors;
  if (Array.isArray(list)) return list as TransformMessage[];
  const message = error instanceof Error ? error.message : '';
  if (!message.startsWith('Transform failed')) return [];
  return [...message.matchAll(/^(\S+?):(\d+):(\d+): ERROR: (.*)$/gm)].map((m) => ({
    text: m[4]!,
    location: { file: m[1]!, line: Number(m[2]), column: Number(m[3]) },
  }));
}

/**
 * Where an error raised while loading a module happened, relative to `cwd`; `undefined` if no
 * position outside node_modules and Node's internals is known.
 */
export function locate(error: unknown, cwd: string): SourceLocation | undefined {
  const transformed = transformErrors(error).find((message) => message.location?.file);
  if (transformed?.location?.file && transformed.location.line) {
    // esbuild's columns are 0-based.
    return at(transformed.location.file, transformed.location.line, (transformed.location.column ?? 0) + 1, cwd);
  }
  const stack = error instanceof Error ? (error.stack ?? '') : '';
  if (error instanceof SyntaxError) return undefined; // Its frames are the loader's, not the file's.
  for (const frame of stack.split('\n')) {
    const match = /(?:\(|at )((?:file:\/\/)?\/[^():]+):(\d+):(\d+)\)?$/.exec(frame.trim());
    if (!match || match[1]!.includes('/node_modules/') || isOwnCode(match[1]!)) continue;
    return at(match[1]!, Number(match[2]), Number(match[3]), cwd);
  }
  return undefined;
}

/** kopf-gen's own code (also when linked from a checkout, outside node_modules): never the user's line. */
const OWN_FOLDERS = ['dist', 'runtime', 'devcluster', 'cli'].map((folder) => path.join(versions.PACKAGE_ROOT, folder) + path.sep);

function isOwnCode(file: string): boolean {
  const absolute = file.startsWith('file:') ? url.fileURLToPath(file.replace(/\?.*$/, '')) : file;
  return OWN_FOLDERS.some((folder) => absolute.startsWith(folder));
}

function at(file: string, line: number, column: number, cwd: string): SourceLocation {
  const absolute = file.startsWith('file:') ? url.fileURLToPath(file.replace(/\?.*$/, '')) : file;
  const relative = path.relative(cwd, absolute);
  return { file: relative.startsWith('..') ? absolute : relative, line, column };
}
