/**
 * Checking the operator's sources before the dev loop restarts it, so that a save with a mistake
 * leaves the running operator alone and says what is wrong in one line
 * (`src/handlers/x.ts:12:5: error TS2322: …`).
 *
 * With the project's own `typescript` (resolved from the project, never kopf-gen's), the check is
 * the compiler's: a semantic-diagnostics builder program over the entry files (and the
 * declaration files of the project's tsconfig.json), kept warm in the launcher — unchanged source
 * files are reused, and only the changed files and those that depend on them are checked again —
 * so a save is checked in tens of milliseconds. Without `typescript`, the files the entry reaches
 * are only parsed (esbuild, which tsx brings), which catches syntax errors and missing files but
 * not type errors; the launcher says so once.
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
  /** `typescript`: the project's compiler checks types; `syntax`: only the syntax of the files reached. */
  readonly kind: 'typescript' | 'syntax';
  /** Checks the sources as they are now (each checker finds what changed since its last check). */
  check(): CheckResult;
  /** The files outside node_modules that the entry files reach (absolute), for the watcher. */
  files(): readonly string[];
}

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
    return (
      program
        .getSourceFiles()
        // Packages reached through node_modules are not the project's, even when linked from elsewhere.
        .filter(
          (file) => !program.isSourceFileDefaultLibrary(file) && !program.isSourceFileFromExternalLibrary(file) && !file.fileName.includes('/node_modules/'),
        )
        .map((file) => path.resolve(file.fileName))
    );
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

/** The shape of esbuild's `buildSync` that the syntax check uses. */
interface Esbuild {
  buildSync(options: Record<string, unknown>): { readonly metafile?: { readonly inputs: Record<string, unknown> } };
}
interface EsbuildFailure {
  readonly errors?: readonly {
    readonly text: string;
    readonly location?: { readonly file: string; readonly line: number; readonly column: number } | null;
  }[];
}

/**
 * Parses what the entry files reach, without types: what can be checked without the project's
 * `typescript`. esbuild (which tsx brings) follows the imports outside node_modules, so a syntax
 * error or a missing file anywhere the operator loads is found, and the files are known to watch.
 */
class SyntaxChecker implements SourceChecker {
  readonly kind = 'syntax';
  private readonly esbuild: Esbuild;
  private reached: string[] = [];

  constructor(
    private readonly cwd: string,
    private readonly entries: readonly string[],
  ) {
    this.esbuild = module.createRequire(typescript.tsxManifest(cwd))('esbuild') as Esbuild;
  }

  check(): CheckResult {
    try {
      const result = this.esbuild.buildSync({
        entryPoints: this.entries.map((entry) => path.resolve(this.cwd, entry)),
        absWorkingDir: this.cwd,
        bundle: true,
        write: false,
        metafile: true,
        packages: 'external',
        platform: 'node',
        format: 'esm',
        target: 'esnext',
        logLevel: 'silent',
      });
      this.reached = Object.keys(result.metafile?.inputs ?? {}).map((file) => path.resolve(this.cwd, file));
      return { ok: true };
    } catch (error) {
      const errors = (error as EsbuildFailure).errors ?? [];
      const first = errors[0];
      if (!first) return { ok: false, line: `error: ${(error as Error).message.split('\n')[0]}` };
      const where = first.location
        ? `${path.relative(this.cwd, path.resolve(this.cwd, first.location.file))}:${first.location.line}:${first.location.column + 1}: `
        : '';
      return { ok: false, line: oneLine(`${where}error: ${first.text}`, errors.length - 1) };
    }
  }

  files(): readonly string[] {
    return this.reached;
  }
}
