/**
 * `kopf-gen init`, `generate` and `add` belong to the generator, which is a separate package
 * (`@kopf-gen/generator`): its toolchain (TypeScript's compiler API, ts-morph,
 * openapi-typescript, Handlebars) is large, and an operator's production install must not carry
 * it. Generated projects list it as a devDependency. This module finds it — from the project in
 * the working directory first, then from beside kopf-gen — and hands it the command line; when it
 * is not installed, the command fails with one line saying how to get it.
 */
import * as module from 'node:module';
import * as path from 'node:path';
import * as url from 'node:url';
import type * as outputs from '@kopf-gen/generator/cli';
import { GeneratorMissingError } from './errors.js';

/** The generator package's name. */
export const GENERATOR_PACKAGE = '@kopf-gen/generator';

/** What the generator's command-line module offers. */
export interface GeneratorCli {
  main(argv: readonly string[], output?: outputs.Output): Promise<number>;
}

/**
 * Loads the generator's command line.
 *
 * @throws GeneratorMissingError when the package cannot be found.
 */
export async function loadGenerator(command: string, cwd: string = process.cwd()): Promise<GeneratorCli> {
  const specifier = `${GENERATOR_PACKAGE}/cli`;
  try {
    // From kopf-gen's own location: the repository's workspace, or a sibling in node_modules.
    return (await import(specifier)) as GeneratorCli;
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  try {
    // From the project in the working directory (kopf-gen itself may be installed elsewhere, e.g. by npx).
    const resolved = module.createRequire(path.join(cwd, 'package.json')).resolve(specifier);
    return (await import(url.pathToFileURL(resolved).href)) as GeneratorCli;
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  throw new GeneratorMissingError(command, GENERATOR_PACKAGE);
}

/**
 * Whether an import failed because the generator package itself is not there — not because
 * something the installed generator needs is missing (that error names the other package, and is
 * reported as it is).
 */
export function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : '';
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && new RegExp(`^Cannot find (package|module) '${GENERATOR_PACKAGE}(/cli)?'`).test(message)
  );
}
