/**
 * Checking the operator's sources before the dev loop restarts it, so that a save with a mistake
 * leaves the running operator alone and says what is wrong in one line
 * (`src/handlers/x.ts:12:5: error TS2322: …`).
 *
 * With the project's own `typescript` (resolved from the project, never kopf-gen's), the check is
 * the compiler's: a semantic-diagnostics builder program over the entry files (and the
 * declaration files of the project's tsconfig.json), kept warm in the launcher — unchanged source
 * files are reused, and only the changed files and those that depend on them are checked again —
 * so a save is checked in tens of milliseconds. Without `typescript`, every changed file is only
 * parsed (esbuild, which tsx brings), which catches syntax errors but not type errors; the
 * launcher says so once.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as module from 'node:module';
import * as path from 'node:path';
import type * as TS from 'typescript';
import * as typescript from './typescript.js';

/** The outcome of a check: fine, or the one line to print. */
export type CheckResult = { readonly ok: true } | { readonly ok: false; readonly line: string };

/** A checker of the project's sources, kept between saves. */
export interface SourceChecker {
  /** `typescript`: the project's compiler checks types; `syntax`: only the syntax of changed files. */
  readonly kind: 'typescript' | 'syntax';
  /** Checks the sources, given the files changed since the last check (absolute paths). */
  check(changed: readonly string[]): CheckResult;
  /** The files outside node_modules that the entry files reach (absolute), for the watcher. */
  files(): readonly string[];
}

/** Files the checkers look at. */
const CODE = /\.(ts|mts|cts|tsx|js|mjs|cjs|jsx)$/;

/**
 * A checker for the project in `cwd`: the TypeScript one if the project has `typescript`,
 * otherwise the syntax one (which needs tsx, as running `.ts` files does).
 */
export function createChecker(cwd: string, entries: readonly string[]): SourceChecker {
  const ts = projectTypeScript(cwd);
  if (ts) return new TypeScriptChecker(ts, cwd, entries);
  return new SyntaxChecker(cwd, entries);
}

/** Where the project's `typescript` is, or undefined when the project does not have it. */
export function projectTypeScriptPath(cwd: string): string | undefined {
  try {
    return module.createRequire(path.join(cwd, 'package.json')).resolve('typescript');
  } catch {
    return undefined;
  }
}

/** The project's `typescript`, or undefined when the project does not have it. */
function projectTypeScript(cwd: string): typeof TS | undefined {
  const resolved = projectTypeScriptPath(cwd);
  return resolved === undefined ? undefined : (module.createRequire(path.join(cwd, 'package.json'))(resolved) as typeof TS);
}

/** `file:line:column: message (and N more)`, the one line of every failed check. */
function oneLine(first: string, more: number): string {
  return more > 0 ? `${first} (and ${more} more error${more === 1 ? '' : 's'})` : first;
}

/** The compiler's check, incremental between calls. */
class TypeScriptChecker implements SourceChecker {
  readonly kind = 'typescript';
  private readonly options: TS.CompilerOptions;
  private readonly roots: string[];
  private readonly host: TS.CompilerHost;
  private readonly cache = new Map<string, { readonly stamp: string; readonly file: TS.SourceFile }>();
  private builder: TS.SemanticDiagnosticsBuilderProgram | undefined;
  private readonly configProblems: readonly TS.Diagnostic[];

  constructor(
    private readonly ts: typeof TS,
    private readonly cwd: string,
    entries: readonly string[],
  ) {
    const config = ts.findConfigFile(cwd, ts.sys.fileExists, 'tsconfig.json');
    const problems: TS.Diagnostic[] = [];
    const parsed = config
      ? ts.getParsedCommandLineOfConfigFile(config, { noEmit: true }, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => problems.push(d) })
      : undefined;
    this.configProblems = [...problems, ...(parsed?.errors ?? [])];
    this.options = { ...(parsed?.options ?? { module: ts.ModuleKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true }), noEmit: true };
    // The entry files, and the declaration files of the tsconfig's include (ambient types), not the tests.
    const declarations = (parsed?.fileNames ?? []).filter((file) => /\.d\.[cm]?ts$/.test(file));
    this.roots = [...entries.map((entry) => path.resolve(cwd, entry)), ...declarations];
    this.host = this.cachingHost();
  }

  check(): CheckResult {
    if (this.configProblems.length > 0) return this.report(this.configProblems);
    const ts = this.ts;
    this.builder = ts.createSemanticDiagnosticsBuilderProgram(this.roots, this.options, this.host, this.builder);
    const syntax = [...this.builder.getOptionsDiagnostics(), ...this.builder.getSyntacticDiagnostics()];
    if (syntax.length > 0) return this.report(syntax);
    const semantic = [...this.builder.getGlobalDiagnostics(), ...this.builder.getSemanticDiagnostics()];
    return semantic.length > 0 ? this.report(semantic) : { ok: true };
  }

  files(): readonly string[] {
    const program = this.builder?.getProgram();
    if (!program) return [];
    return program
      .getSourceFiles()
      .filter((file) => !program.isSourceFileDefaultLibrary(file) && !file.fileName.includes('/node_modules/'))
      .map((file) => path.resolve(file.fileName));
  }

  /** Reads each file once per change: unchanged files keep their SourceFile, so the program is reused. */
  private cachingHost(): TS.CompilerHost {
    const host = this.ts.createCompilerHost(this.options);
    const read = host.getSourceFile.bind(host);
    host.getSourceFile = (fileName, language, onError, shouldCreate) => {
      const stamp = stampOf(fileName);
      const cached = this.cache.get(fileName);
      if (cached && cached.stamp === stamp && !shouldCreate) return cached.file;
      const file = read(fileName, language, onError, shouldCreate);
      if (!file) return undefined;
      // Builder programs compare versions to know what changed.
      (file as TS.SourceFile & { version?: string }).version = crypto.createHash('sha1').update(file.text).digest('hex');
      this.cache.set(fileName, { stamp, file });
      return file;
    };
    return host;
  }

  private report(diagnostics: readonly TS.Diagnostic[]): CheckResult {
    const errors = diagnostics.filter((d) => d.category === this.ts.DiagnosticCategory.Error);
    if (errors.length === 0) return { ok: true };
    const first = errors[0]!;
    const message = this.ts.flattenDiagnosticMessageText(first.messageText, ' ').replace(/\s+/g, ' ');
    let where = '';
    if (first.file && first.start !== undefined) {
      const { line, character } = first.file.getLineAndCharacterOfPosition(first.start);
      where = `${path.relative(this.cwd, first.file.fileName) || first.file.fileName}:${line + 1}:${character + 1}: `;
    }
    return { ok: false, line: oneLine(`${where}error TS${first.code}: ${message}`, errors.length - 1) };
  }
}

/** Files in node_modules and the compiler's own libraries are taken as unchanging; others by mtime and size. */
function stampOf(fileName: string): string {
  if (fileName.includes('/node_modules/')) return 'fixed';
  try {
    const stat = fs.statSync(fileName);
    return `${stat.mtimeMs}:${stat.size}`;
  } catch {
    return 'missing';
  }
}

/** The shape of esbuild's `transformSync` that the syntax check uses. */
interface Esbuild {
  transformSync(code: string, options: { loader: string; sourcefile: string; format?: string }): unknown;
}
interface EsbuildFailure {
  readonly errors?: readonly { readonly text: string; readonly location?: { readonly line: number; readonly column: number } | null }[];
}

/** Parses changed files only (no types): what can be checked without the project's `typescript`. */
class SyntaxChecker implements SourceChecker {
  readonly kind = 'syntax';
  private readonly esbuild: Esbuild;
  private readonly failures = new Map<string, string>();
  private readonly seen = new Set<string>();

  constructor(
    private readonly cwd: string,
    entries: readonly string[],
  ) {
    this.esbuild = module.createRequire(typescript.tsxManifest(cwd))('esbuild') as Esbuild;
    for (const entry of entries) this.seen.add(path.resolve(cwd, entry));
    for (const file of listTree(path.join(cwd, 'src'))) this.seen.add(file);
  }

  check(changed: readonly string[]): CheckResult {
    const targets = changed.length > 0 ? changed.filter((file) => CODE.test(file)) : [...this.seen];
    for (const file of targets) {
      this.seen.add(file);
      const failure = this.parse(file);
      if (failure === undefined) this.failures.delete(file);
      else this.failures.set(file, failure);
    }
    const lines = [...this.failures.values()];
    return lines.length > 0 ? { ok: false, line: oneLine(lines[0]!, lines.length - 1) } : { ok: true };
  }

  files(): readonly string[] {
    return [...this.seen];
  }

  private parse(file: string): string | undefined {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      this.seen.delete(file); // Deleted: the operator's loading says whether it was needed.
      return undefined;
    }
    const extension = path.extname(file).slice(1);
    const loader = /^[cm]?ts$/.test(extension) ? 'ts' : extension === 'tsx' ? 'tsx' : extension === 'jsx' ? 'jsx' : 'js';
    try {
      this.esbuild.transformSync(text, { loader, sourcefile: file });
      return undefined;
    } catch (error) {
      const first = (error as EsbuildFailure).errors?.[0];
      const relative = path.relative(this.cwd, file) || file;
      if (!first) return `${relative}: error: ${(error as Error).message}`;
      const where = first.location ? `${relative}:${first.location.line}:${first.location.column + 1}` : relative;
      return `${where}: error: ${first.text}`;
    }
  }
}

/** The code files under a folder (none if it does not exist). */
function listTree(folder: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(folder, { recursive: true }) as string[];
  } catch {
    return [];
  }
  return names.filter((name) => CODE.test(name) && !name.split(path.sep).includes('node_modules')).map((name) => path.join(folder, name));
}
