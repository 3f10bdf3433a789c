/**
 * The Kubernetes OpenAPI v2 document (`swagger.json`, Kubernetes 1.32, kept as published) from
 * which the devcluster derives its built-in kinds: their schemas for decoding and validation, their
 * strategic-merge and apply list semantics, and what `/openapi/v2` and `/openapi/v3` serve.
 *
 * Two ways in, both lazy and shared by every devcluster of the process (the data never changes):
 * `definition(name)` reads one schema's shape (no descriptions) from `shapes.tsv`, parsing only the
 * definitions asked for — what decoding and validation need, cheap enough for the writes a
 * devcluster makes at start-up; `document()` parses the whole 3 MB document, with descriptions and
 * paths, for what serves OpenAPI — never at start-up.
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

/** The whole document, descriptions and paths included (parsed once per process). */
export function document(): Document {
  cached ??= JSON.parse(files.readDataFile('swagger.json')) as Document;
  return cached;
}

/** Unparsed shapes by definition name, and the ones parsed so far. */
let shapeTexts: Map<string, string> | undefined;
const shapes = new Map<string, Schema>();

function shapeText(name: string): string | undefined {
  if (!shapeTexts) {
    shapeTexts = new Map();
    for (const line of files.readDataFile('shapes.tsv').split('\n')) {
      const tab = line.indexOf('\t');
      if (tab > 0) shapeTexts.set(line.slice(0, tab), line.slice(tab + 1));
    }
  }
  return shapeTexts.get(name);
}

/** The named definition's shape (`io.k8s.api.batch.v1.Job`; no descriptions), or undefined. */
export function definition(name: string): Schema | undefined {
  let schema = shapes.get(name);
  if (schema === undefined) {
    const text = shapeText(name);
    if (text === undefined) return undefined;
    schema = JSON.parse(text) as Schema;
    shapes.set(name, schema);
  }
  return schema;
}

/**
 * The named definition as published, descriptions included (`document()`'s: parses the whole
 * document), for what serves OpenAPI; decoding and validation use `definition`.
 */
export function publishedDefinition(name: string): Schema | undefined {
  const definitions = document().definitions;
  return Object.hasOwn(definitions, name) ? definitions[name] : undefined;
}

/** How many definitions' shapes have been parsed (start-up parses only those its own writes need). */
export const parsedDefinitions = (): number => shapes.size;

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

/** Whether the whole document has been parsed (start-up never parses it). */
export const isDocumentLoaded = (): boolean => cached !== undefined;
