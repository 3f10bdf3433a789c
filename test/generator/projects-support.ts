/**
 * Helpers for the project-level generator tests: temporary directories, a captured CLI output,
 * small CRD texts, and a type-check of a generated project with the in-process TypeScript compiler
 * — using the project's own tsconfig.json, with `kopf-gen/runtime` and `kopf-gen/testing` mapped
 * to this checkout (no npm install needed).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import ts from 'typescript';
import * as yaml from 'yaml';
import type * as reporting from '../../generator/commands/reporting.js';
import * as support from './support.js';

/** A fresh temporary directory (removed by `cleanup`). */
export function tempDir(prefix = 'kopf-gen-project-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Removes directories made by `tempDir`. */
export function cleanup(...dirs: string[]): void {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
}

/** Every file under a directory (relative, `/`-separated) with its content; `{}` when absent. */
export function snapshot(dir: string): Record<string, string> {
  if (!fs.existsSync(dir)) return {};
  const result: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[]) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    result[path.relative(dir, full).split(path.sep).join('/')] = fs.readFileSync(full, 'utf8');
  }
  return result;
}

/** A CLI output that records what is printed; `stdin` serves the given text. */
export function capture(stdin = ''): reporting.Output & { readonly stdout: () => string; readonly stderr: () => string } {
  let out = '';
  let err = '';
  return {
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
    stdin: async () => stdin,
    stdout: () => out,
    stderr: () => err,
  };
}

/** A Widget CRD (example.com/v1) with the given spec properties, as YAML. */
export function widgetCrd(
  specProperties: Record<string, unknown>,
  options: { required?: string[]; status?: Record<string, unknown>; kind?: string } = {},
): string {
  const spec = { type: 'object', properties: specProperties, ...(options.required ? { required: options.required } : {}) };
  const root = { type: 'object', properties: { spec, status: options.status ?? { type: 'object', properties: { phase: { type: 'string' } } } } };
  return yaml.stringify(support.crd(undefined, { root, ...(options.kind ? { kind: options.kind } : {}) }));
}

/** Writes a file (creating folders) and returns its path. */
export function write(file: string, text: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

export interface TypecheckOptions {
  /** Also the projects' `test/`. */
  readonly tests?: boolean;
  /** What `kopf-gen/runtime` resolves to (default: this checkout's runtime/index.ts). */
  readonly runtime?: string;
}

/**
 * Type-checks generated projects' `src/` (and `test/` when asked) in one program, with the options
 * of the first project's tsconfig.json (every generated project has the same). Returns the
 * diagnostics of the projects' own files, formatted `<project>/<path>:<line>: message`.
 */
export function typecheckProjects(dirs: readonly string[], options: TypecheckOptions = {}): string[] {
  const parsedOf = (dir: string): ts.ParsedCommandLine => {
    const read = ts.readConfigFile(path.join(dir, 'tsconfig.json'), (file) => ts.sys.readFile(file));
    if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
    return ts.parseJsonConfigFileContent(read.config, ts.sys, dir);
  };
  const parsed = dirs.map(parsedOf);
  const roots = parsed.flatMap((config, index) => config.fileNames.filter((file) => options.tests || !path.relative(dirs[index]!, file).startsWith('test')));
  const modules = path.join(support.REPO_ROOT, 'node_modules');
  const program = ts.createProgram(roots, {
    ...parsed[0]!.options,
    typeRoots: [path.join(modules, '@types')],
    paths: {
      'kopf-gen/runtime': [options.runtime ?? path.join(support.REPO_ROOT, 'runtime/index.ts')],
      'kopf-gen/testing': [path.join(support.REPO_ROOT, 'testing/index.ts')],
      vitest: [path.join(modules, 'vitest/dist/index.d.ts')],
    },
  });
  const owner = (file: ts.SourceFile): string | undefined => dirs.find((dir) => !path.relative(dir, file.fileName).startsWith('..'));
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...program
      .getSourceFiles()
      .filter((file) => owner(file) !== undefined)
      .flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]),
  ];
  return diagnostics.map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (!diagnostic.file || diagnostic.start === undefined) return message;
    const dir = owner(diagnostic.file)!;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return `${path.basename(dir)}/${path.relative(dir, diagnostic.file.fileName).split(path.sep).join('/')}:${line + 1}: ${message}`;
  });
}

/** Type-checks one generated project (see `typecheckProjects`). */
export function typecheckProject(dir: string, options: TypecheckOptions = {}): string[] {
  return typecheckProjects([dir], options).map((line) => line.slice(path.basename(dir).length + 1));
}
