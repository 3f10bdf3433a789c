/**
 * The Kubernetes OpenAPI v2 document (`swagger.json`, Kubernetes 1.32, kept as published) from
 * which the devcluster derives its built-in kinds: their schemas for decoding and validation, their
 * strategic-merge and apply list semantics, and what `/openapi/v2` and `/openapi/v3` serve.
 *
 * The document is 3 MB: it is parsed on first use, not at start-up, and then shared by every
 * devcluster of the process (it never changes).
 */
import * as files from './files.js';

/** One schema of the document: the subset of OpenAPI v2 / JSON Schema that Kubernetes uses. */
export interface Schema {
  readonly type?: 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array';
  readonly format?: string;
  readonly description?: string;
  readonly $ref?: string;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly additionalProperties?: Schema | boolean;
  readonly items?: Schema;
  readonly required?: readonly string[];
  readonly enum?: readonly unknown[];
  readonly 'x-kubernetes-group-version-kind'?: readonly { group: string; version: string; kind: string }[];
  readonly 'x-kubernetes-patch-strategy'?: string;
  readonly 'x-kubernetes-patch-merge-key'?: string;
  readonly 'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
  readonly 'x-kubernetes-map-type'?: 'atomic' | 'granular';
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-int-or-string'?: boolean;
  readonly 'x-kubernetes-embedded-resource'?: boolean;
  readonly [extension: `x-${string}`]: unknown;
}

/** The parts of the document the devcluster reads. */
export interface Document {
  readonly swagger: string;
  readonly info: { readonly title: string; readonly version: string };
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly definitions: Readonly<Record<string, Schema>>;
}

let cached: Document | undefined;

/** The whole document (parsed once per process). */
export function document(): Document {
  cached ??= JSON.parse(files.readDataFile('swagger.json')) as Document;
  return cached;
}

/** The named definition (`io.k8s.api.batch.v1.Job`), or undefined. */
export function definition(name: string): Schema | undefined {
  return Object.hasOwn(document().definitions, name) ? document().definitions[name] : undefined;
}

/** The definition a `$ref` names (`#/definitions/<name>`). */
export function refName(schema: Schema): string | undefined {
  return schema.$ref?.startsWith('#/definitions/') ? schema.$ref.slice('#/definitions/'.length) : undefined;
}

/** The schema itself, or the definition it refers to (one level). */
export function resolve(schema: Schema): Schema {
  const name = refName(schema);
  if (name === undefined) return schema;
  const target = definition(name);
  if (!target) throw new Error(`devcluster: the OpenAPI document has no definition ${name}`);
  return target;
}

/** Whether the document has been parsed (start-up must not parse it). */
export const isLoaded = (): boolean => cached !== undefined;
