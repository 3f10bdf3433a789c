/**
 * Errors of launching an operator: a malformed command line, an operator module that is missing
 * or fails to load (the message names the file, line and column), a TypeScript file without tsx,
 * a cluster without peering resources for `freeze`/`resume`, a `main(import.meta)` where nothing
 * would run the operator, and a test runner that did not see the operator start or stop in time. Named, coded and based by the
 * runtime's scheme (docs/architecture.md, "Errors").
 */

/** Where in a file something happened (1-based line and column). */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/** A file given to `run` does not exist. */
export class MissingModuleError extends Error {
  override readonly name = 'MissingModuleError';
  readonly code = 'MissingModuleError' as const;
}

/** An operator module failed to load; the message names the file, line and column. */
export class ModuleLoadError extends Error {
  override readonly name = 'ModuleLoadError';
  readonly code = 'ModuleLoadError' as const;
  /** Where it failed, when that could be found. */
  readonly location: SourceLocation | undefined;

  constructor(specifier: string, location: SourceLocation | undefined, reason: string, options?: ErrorOptions) {
    const where = location ? `${location.file}:${location.line}:${location.column}` : specifier;
    super(`cannot load ${where}: ${reason}`, options);
    this.location = location;
  }
}

/** A TypeScript operator file must be loaded, and tsx, the loader for it, is not installed. */
export class TypeScriptLoaderError extends Error {
  override readonly name = 'TypeScriptLoaderError';
  readonly code = 'TypeScriptLoaderError' as const;
}

/** A malformed command line (the CLI exits with code 2). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly code = 'UsageError' as const;
}

/** The cluster serves no peering resource for the scope: there is nothing to freeze. */
export class PeeringResourceMissingError extends Error {
  override readonly name = 'PeeringResourceMissingError';
  readonly code = 'PeeringResourceMissingError' as const;
}

/** The runner did not see the operator start or stop within its timeout. */
export class RunnerTimeoutError extends Error {
  override readonly name = 'RunnerTimeoutError';
  readonly code = 'RunnerTimeoutError' as const;
}

/** `main(import.meta)` was called where nothing would run the operator. */
export class EntryPointError extends TypeError {
  override readonly name = 'EntryPointError';
  readonly code = 'EntryPointError' as const;
}
