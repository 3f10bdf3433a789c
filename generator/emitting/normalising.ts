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
 * - `x-kubernetes-embedded-resource` becomes a marker for a Kubernetes object type;
 * - `x-kubernetes-preserve-unknown-fields` on an object becomes `additionalProperties: true`
 *   (an open record, intersected with the declared properties); on an untyped node, `{}` (unknown);
 * - `allOf`/`anyOf`/`oneOf`/`not` are dropped: in a structural schema they only validate values;
 * - properties with a `default` join `required`: the API server fills them in whenever their parent
 *   exists, so they are always present in objects read back;
 * - documentation keys are dropped (types.ts writes TSDoc from the original node, found through
 *   `originals`).
 *
 * Markers never carry `nullable` for openapi-typescript to see (it would lose it on properties and
 * double it elsewhere); they carry their own `NULLABLE` flag, and the hook adds `| null` itself.
 */
import type { SchemaObject } from 'openapi-typescript';
import * as schemas from '../schemas.js';

/** What the transform hook must produce for a marked node. */
export type Marker =
  | { readonly kind: 'ref'; readonly name: string }
  | { readonly kind: 'int-or-string' }
  | { readonly kind: 'embedded'; readonly open: boolean };

/** Keys of the private extensions on normalised nodes. */
export const MARKER = 'x-kopf-gen-marker';
export const NULLABLE = 'x-kopf-gen-nullable';

/** Shared state of one module's normalisation. */
export interface NormaliseContext {
  /** Named schema nodes (from the model) and their TypeScript names. */
  readonly typeNames: ReadonlyMap<schemas.Schema, string>;
  /** The original node of every normalised one: TSDoc is written from it. */
  readonly originals: WeakMap<object, schemas.Schema>;
  /** Set when a marker needs the runtime's `KubernetesObject` type. */
  usesKubernetesObject: boolean;
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
    if (schemas.flag(node, schemas.EMBEDDED_RESOURCE) && !declaring) {
      context.usesKubernetesObject = true;
      return marker({ kind: 'embedded', open: preserve }, node, context, nullable);
    }
    const required = new Set(schemas.requiredOf(node));
    const properties: Record<string, SchemaObject> = {};
    for (const [property, child] of schemas.propertiesOf(node)) {
      define(properties, property, normalise(child, context));
      if (schemas.hasDefault(child)) required.add(property);
    }
    const additional = schemas.own(node, 'additionalProperties');
    const result: Record<string, unknown> = { type: 'object', properties, required: [...required], nullable };
    if (schemas.isRecord(additional)) result['additionalProperties'] = normalise(additional, context);
    else if (additional === true || preserve) result['additionalProperties'] = true;
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

function marker(value: Marker, original: schemas.Schema, context: NormaliseContext, nullable: boolean): SchemaObject {
  return remember({ type: 'object', [MARKER]: value, [NULLABLE]: nullable } as SchemaObject, original, context);
}

function remember(node: SchemaObject, original: schemas.Schema | undefined, context: NormaliseContext): SchemaObject {
  if (original) context.originals.set(node, original);
  return node;
}
