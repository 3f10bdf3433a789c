/**
 * Errors of the `kopf-gen` binary: a command that needs a package that is not installed (the
 * generator; tsx's absence is the runtime's `TypeScriptLoaderError`). Named and coded by the runtime's scheme
 * (docs/architecture.md, "Errors").
 */

/** The generator package is not installed where it was looked for. */
export class GeneratorMissingError extends Error {
  override readonly name = 'GeneratorMissingError';
  readonly code = 'GeneratorMissingError' as const;

  /** @param generator the generator's package name. */
  constructor(command: string, generator: string) {
    super(
      `kopf-gen ${command} needs the generator, a separate package so that operators do not ship it. ` +
        `Install it (npm install --save-dev ${generator}) or run: npx -p kopf-gen -p ${generator} kopf-gen ${command} …`,
    );
  }
}
