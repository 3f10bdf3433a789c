/**
 * Limits: how large an input the generator reads, and how large a schema the generated types can carry.
 *
 * Three bounds, each far above what real CRDs need and each refused with its own code before the
 * work it guards:
 * - `MAX_INPUT_BYTES`: a CRD file larger than this is refused before it is read (a 59 MB file
 *   used to take 37 s and 2.8 GB to parse); the largest real CRD files are about 1 MB (a file of
 *   15 CRDs), and etcd, as Kubernetes sets it up by default, stores no object above 1.5 MiB;
 * - `MAX_DEPTH`: a document nested deeper (mappings and lists) is refused right after parsing (the
 *   parser itself stops there), so no later stage — validating, modeling, emitting — recurses
 *   deeper; the deepest real CRDs nest 38 levels (schemas 18 levels deep);
 * - `MAX_FIELD_PATHS`, below.
 *
 * The runtime types the field of a field handler (`on.field(Widgets, 'spec.size', …)`) by the union
 * of every dotted path of the kind's body (`FieldPathOf`, down to nine levels; lists are leaves).
 * TypeScript builds the paths below an object as one template-literal union, and refuses one of
 * 100,000 members or more ("Expression produces a union type that is too complex to represent",
 * TS2590) — in the handler stubs, at every registration. Long before that, the unions make the
 * type-check slow (a body of 110,000 paths took 79 s and then failed). So a served version whose
 * schema declares more than `MAX_FIELD_PATHS` paths is refused here, naming the object that holds
 * most of them, rather than generating code that cannot compile. Pure: schema in, counts out.
 */
import * as schemas from './schemas.js';

/** The largest CRD file the generator reads (16 MiB), unless a run raises it. */
export const MAX_INPUT_BYTES = 16 * 1024 * 1024;

/**
 * How deep a CRD document may nest, counting its mappings and lists (the document itself is level
 * 1; `spec.versions[0].schema.openAPIV3Schema` is level 6, and each schema level below adds two:
 * `properties` and the property). 100 levels is a schema about 46 levels deep.
 */
export const MAX_DEPTH = 100;

/** The most dotted field paths a kind's body may declare (TypeScript's bound is 100,000 per object). */
export const MAX_FIELD_PATHS = 50_000;

/** How many levels of keys the runtime's `FieldPathOf` spells out. */
const PATH_LEVELS = 9;

/**
 * The dotted field paths below an object schema, as `FieldPathOf` enumerates them: each property
 * (and an `additionalProperties` map's keys, as one pattern) is a path, plus the paths below it
 * when it is an object; items of lists are not descended into.
 */
export function countFieldPaths(node: schemas.Schema, level = 1): number {
  if (level > PATH_LEVELS) return 0;
  let count = 0;
  const children = [...schemas.propertiesOf(node).map(([, child]) => child), ...optional(schemas.additionalSchemaOf(node))];
  for (const child of children) count += 1 + (schemas.typeOf(child) === 'array' ? 0 : countFieldPaths(child, level + 1));
  return count;
}

/** Where the paths of a too-large schema are: the deepest object (JSON path) that still holds more than the limit, and its count. */
export function largestObject(root: schemas.Schema, rootPath: string): { jsonPath: string; count: number } {
  let node = root;
  let jsonPath = rootPath;
  let level = 1;
  let count = countFieldPaths(root);
  for (;;) {
    let next: { node: schemas.Schema; path: string; count: number } | undefined;
    for (const [name, child] of schemas.propertiesOf(node)) {
      const below = schemas.typeOf(child) === 'array' ? 0 : countFieldPaths(child, level + 1);
      if (below > MAX_FIELD_PATHS && (next === undefined || below > next.count)) {
        next = { node: child, path: schemas.childPath(schemas.childPath(jsonPath, 'properties'), name), count: below };
      }
    }
    if (next === undefined) return { jsonPath, count };
    ({ node, path: jsonPath, count } = next);
    level += 1;
  }
}

function optional(schema: schemas.Schema | undefined): schemas.Schema[] {
  return schema === undefined ? [] : [schema];
}
