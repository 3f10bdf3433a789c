/**
 * Normalising: a Kubernetes structural schema node → the schema openapi-typescript is given.
 *
 * openapi-typescript turns OpenAPI schemas into TypeScript type nodes, but a CRD schema is not
 * quite the OpenAPI it expects. This small recursive walker rewrites one named type's schema,
 * leaving openapi-typescript the parts it does well (properties and their quoting, `required`,
 * arrays, maps, enums as literal unions, `nullable`) and marking the parts types.ts's transform
 * hook must handle:
 *
 * - nested named types become references (`WidgetSpecTemplate`), so each is declared once;
 * - `x-kubernetes-int-or-string` becomes a marker for `number | string`;
 * - `x-kubernetes-embedded-resource` objects get `apiVersion` and `kind` (required strings, as the
 *   API server requires them) and `metadata` (a reference to the runtime's `ObjectMeta`, or
 *   `ObjectMetaInput` in input types) before their own properties;
 * - `x-kubernetes-preserve-unknown-fields` on an object becomes `additionalProperties: true`
 *   (an open record, intersected with the declared properties); on an untyped node, `{}` (unknown);
 * - a closed object without properties becomes a marker for `{ [key: string]: never }` (not
 *   `Record<…>`: a generated declaration may be named `Record`, and would shadow the global);
 * - `allOf`/`anyOf`/`oneOf`/`not` are dropped: in a structural schema they only validate values;
 * - in body types, properties with a `default` join `required`: the API server fills them in
 *   whenever their parent exists, so they are always present in objects read back; in input
 *   types (what users write) they are optional — even when `required` names them, because the server
 *   applies defaults before it validates — and references go to the input twins;
 * - documentation keys are dropped (types.ts writes TSDoc from the original node, found through
 *   `originals`).
 *
 * Markers never carry `nullable` for openapi-typescript to see (it would lose it on properties and
 * double it elsewhere); they carry their own `NULLABLE` flag, and the hook adds `| null` itself.
 *
 * Runtime types are referred to through `RUNTIME_ALIAS`, the name under which generated modules
 * import the runtime: it starts with `$`, which no generated identifier does (they are made of
 * `[A-Za-z0-9_]`), so no kind or property name can shadow it.
 */
import type { SchemaObject } from 'openapi-typescript';
import * as schemas from '../schemas.js';

/** What the transform hook must produce for a marked node. */
export type Marker =
  | { readonly kind: 'ref'; readonly name: string }
  | { readonly kind: 'intersection'; readonly names: readonly string[] }
  | { readonly kind: 'int-or-string' }
  | { readonly kind: 'empty' };

/** The namespace alias under which generated modules import the runtime (`import * as $kopf …`). */
export const RUNTIME_ALIAS = '$kopf';

/** A runtime type as generated code names it: `$kopf.ObjectMeta`. */
export function runtimeType(name: string): string {
  return `${RUNTIME_ALIAS}.${name}`;
}

/** Keys of the private extensions on normalised nodes. */
export const MARKER = 'x-kopf-gen-marker';
export const NULLABLE = 'x-kopf-gen-nullable';

/** Shared state of one module's normalisation. */
export interface NormaliseContext {
  /** Named schema nodes (from the model) and their TypeScript names (input twins' in input types). */
  readonly typeNames: ReadonlyMap<schemas.Schema, string>;
  /** Body types (as the API server returns objects) or input types (as users write them). */
  readonly mode: 'body' | 'input';
  /** The original node of every normalised one: TSDoc is written from it. */
  readonly originals: WeakMap<object, schemas.Schema>;
}

/** The runtime's metadata type for a mode: `ObjectMeta` as read, `ObjectMetaInput` as written. */
export function metadataType(mode: NormaliseContext['mode']): string {
  return runtimeType(mode === 'input' ? 'ObjectMetaInput' : 'ObjectMeta');
}

/** A marker node for a reference to a named type (or an imported one such as `ObjectMeta`). */
export function refNode(name: string, original: schemas.Schema | undefined, context: NormaliseContext, nullable = false): SchemaObject {
  return remember({ type: 'object', [MARKER]: { kind: 'ref', name }, [NULLABLE]: nullable } as SchemaObject, original, context);
}

/**
 * Normalises a node. With `declaring`, the node is the named type being declared: it is expanded
 * (not turned into a reference to itself) and its own `nullable` is left to the references.
 */
export function normalise(node: schemas.Schema, context: NormaliseContext, declaring = false): SchemaObject {
  const nullable = !declaring && schemas.flag(node, 'nullable');
  const name = context.typeNames.get(node);
  if (!declaring && name !== undefined) return refNode(name, node, context, nullable);
  const type = schemas.typeOf(node);
  const enumeration = schemas.own(node, 'enum');
  if (Array.isArray(enumeration) && type !== 'object' && type !== 'array') {
    return remember({ enum: [...enumeration], nullable } as SchemaObject, node, context);
  }
  if (schemas.flag(node, schemas.INT_OR_STRING)) return marker({ kind: 'int-or-string' }, node, context, nullable);
  const preserve = schemas.flag(node, schemas.PRESERVE_UNKNOWN_FIELDS);
  if (type === undefined) return remember({} as SchemaObject, node, context);
  if (type === 'object') {
    const required = new Set(schemas.requiredOf(node));
    const properties: Record<string, SchemaObject> = {};
    if (schemas.flag(node, schemas.EMBEDDED_RESOURCE)) embed(node, properties, required, context);
    for (const [property, child] of schemas.propertiesOf(node)) {
      if (Object.hasOwn(properties, property)) continue;
      define(properties, property, normalise(child, context));
      // Defaults are applied before validation, so a required property with a default may be left out.
      if (schemas.hasDefault(child)) {
        if (context.mode === 'body') required.add(property);
        else required.delete(property);
      }
    }
    const additional = schemas.own(node, 'additionalProperties');
    const open = schemas.isRecord(additional) || additional === true || preserve;
    if (Object.keys(properties).length === 0 && !open) return marker({ kind: 'empty' }, node, context, nullable);
    const result: Record<string, unknown> = { type: 'object', properties, required: [...required], nullable };
    if (schemas.isRecord(additional)) result['additionalProperties'] = normalise(additional, context);
    else if (open) result['additionalProperties'] = true;
    return remember(result as SchemaObject, node, context);
  }
  if (type === 'array') {
    const items = schemas.itemsOf(node);
    return remember({ type: 'array', items: items ? normalise(items, context) : {}, nullable } as SchemaObject, node, context);
  }
  return remember({ type, nullable } as SchemaObject, node, context);
}

/** The marker of a normalised node, if it has one. */
export function markerOf(node: SchemaObject): { marker: Marker; nullable: boolean } | undefined {
  const record = node as unknown as Record<string, unknown>;
  const marker = record[MARKER];
  if (!schemas.isRecord(marker)) return undefined;
  return { marker: marker as unknown as Marker, nullable: record[NULLABLE] === true };
}

/** Sets an own, enumerable property — also for keys such as `__proto__` that assignment would not create. */
export function define<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * The envelope of an embedded resource: `apiVersion` and `kind` required (their own schemas when
 * declared, else strings), `metadata` the runtime's type for the mode (the CRD's own metadata
 * schema is not used, as for the object itself).
 */
function embed(node: schemas.Schema, properties: Record<string, SchemaObject>, required: Set<string>, context: NormaliseContext): void {
  const declared = new Map(schemas.propertiesOf(node));
  for (const key of ['apiVersion', 'kind']) {
    const own = declared.get(key);
    define(properties, key, own ? normalise(own, context) : ({ type: 'string' } as SchemaObject));
    required.add(key);
  }
  define(properties, 'metadata', refNode(metadataType(context.mode), declared.get('metadata'), context));
}

/** A marker node for an intersection of named types (the input metadata: `ObjectMetaInput & NameOrGenerateName`). */
export function intersectionNode(names: readonly string[], original: schemas.Schema | undefined, context: NormaliseContext): SchemaObject {
  return marker({ kind: 'intersection', names }, original, context, false);
}

function marker(value: Marker, original: schemas.Schema | undefined, context: NormaliseContext, nullable: boolean): SchemaObject {
  return remember({ type: 'object', [MARKER]: value, [NULLABLE]: nullable } as SchemaObject, original, context);
}

function remember(node: SchemaObject, original: schemas.Schema | undefined, context: NormaliseContext): SchemaObject {
  if (original) context.originals.set(node, original);
  return node;
}
