/**
 * The enumerations of the built-in kinds (`enums.json`, derived from the Go types of kubernetes/api
 * by `scripts/upstream/derive-enums.mjs`): per OpenAPI definition and property, the values upstream's
 * validation accepts, in the order its `Unsupported value` message lists them. The published OpenAPI
 * document carries none. Fields whose type upstream accepts beyond its constants are exceptions,
 * kept with their reason and not checked. Read on first use.
 */
import * as files from './files.js';

interface EnumsFile {
  readonly definitions: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;
  readonly exceptions: Readonly<Record<string, Readonly<Record<string, { readonly values: readonly string[]; readonly reason: string }>>>>;
}

let cached: EnumsFile | undefined;

function load(): EnumsFile {
  cached ??= JSON.parse(files.readDataFile('enums.json')) as EnumsFile;
  return cached;
}

/** The values of an enum property (`io.k8s.api.batch.v1.JobSpec`, `completionMode`), or undefined. */
export function valuesOf(definition: string, property: string): readonly string[] | undefined {
  const byProperty = Object.hasOwn(load().definitions, definition) ? load().definitions[definition] : undefined;
  return byProperty && Object.hasOwn(byProperty, property) ? byProperty[property] : undefined;
}

/** Whether a definition has enum properties at all (most have none). */
export function hasEnums(definition: string): boolean {
  return Object.hasOwn(load().definitions, definition);
}

/** Why an enum property is not checked, when it is an exception. */
export function exceptionOf(definition: string, property: string): string | undefined {
  const byProperty = Object.hasOwn(load().exceptions, definition) ? load().exceptions[definition] : undefined;
  return byProperty && Object.hasOwn(byProperty, property) ? byProperty[property]!.reason : undefined;
}
