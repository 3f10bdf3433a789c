/**
 * Typed resource descriptors and the wire shapes of Kubernetes objects.
 *
 * A descriptor is a plain value (group, version, plural, kind, scope) that carries the object's
 * body type, the type users write, and the patch view handlers write through as phantom type
 * parameters. The generator emits one per served CRD version; the
 * registration functions accept it wherever Kopf accepts a resource reference and infer every
 * handler argument's type from it, so call sites never spell generics.
 *
 * The object shapes here are the JSON the API server sends (timestamps are strings), not the
 * deserialised model classes of client libraries.
 */

/** Standard object metadata as served by the API (`ObjectMeta`, JSON form). */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: { [key: string]: string };
  annotations?: { [key: string]: string };
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: ManagedFieldsEntry[];
  selfLink?: string;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: 'Apply' | 'Update';
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: { [key: string]: unknown };
  subresource?: string;
}

/** Any Kubernetes object: the common envelope. */
export interface KubernetesObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** What a descriptor is made of. */
export interface ResourceInfo {
  /** API group; `''` for the core group. */
  readonly group: string;
  readonly version: string;
  /** Plural resource name as in URLs, e.g. `widgets`. */
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly singular?: string;
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
  /** Whether the resource serves a `status` subresource (decides where status patches go). */
  readonly statusSubresource?: boolean;
}

declare const bodyType: unique symbol;
declare const inputType: unique symbol;
declare const viewType: unique symbol;

/**
 * The metadata a user writes when creating an object: everything the server populates itself
 * (`uid`, `resourceVersion`, `generation`, timestamps, `managedFields`, …) is left out, so that
 * writing it is a type error rather than a request the API server rejects or silently ignores.
 */
export interface ObjectMetaInput {
  name?: string;
  generateName?: string;
  namespace?: string;
  labels?: { [key: string]: string };
  annotations?: { [key: string]: string };
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
}

/**
 * What a user writes to create an object of a body type: the body without the server-populated
 * metadata, with `apiVersion`/`kind` optional (the client fills them in from the descriptor) and
 * `status` optional. The default input type of a descriptor; generated code may give a more
 * precise one as the descriptor's second type parameter.
 */
export type InputOf<Body> = Omit<Body, 'apiVersion' | 'kind' | 'metadata' | 'status'> & {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMetaInput;
} & ('status' extends keyof Body ? { status?: Body['status' & keyof Body] } : unknown);

/**
 * What the API server needs to name an object being created: a `name`, or a `generateName` prefix
 * that it completes with a random suffix. Generated input types require it of `metadata`.
 */
export type NameOrGenerateName = { name: string } | { generateName: string };

/**
 * The members of `Object.prototype`. An object literal without such a property still has it (read
 * from the prototype), so an optional property of that name must accept the prototype member's
 * type too, or no literal lacking it would be assignable.
 */
// biome-ignore lint/complexity/noBannedTypes: the prototype's members are exactly the members of `Object`
type PrototypeMember = keyof Object;

/** The types of the prototype's members (`Function`, `() => string`, …). */
// biome-ignore lint/complexity/noBannedTypes: as above
type PrototypeValue = Object[PrototypeMember];

/** `null` when merge patch can remove `T[K]`: when the property is optional (the empty object lacks it). */
// biome-ignore lint/complexity/noBannedTypes: `{}` is the empty object, whose assignability tells optional properties apart
type RemovalOf<T, K extends keyof T> = {} extends Pick<T, K> ? null : never;

/** The prototype member's type for a property named like one, else nothing. */
// biome-ignore lint/complexity/noBannedTypes: as above
type PrototypeValueOf<K> = K extends PrototypeMember ? Object[K] : never;

/**
 * A JSON merge patch (RFC 7386) of a type a user writes, as plain data: what `client.patch()`
 * sends and what the generated `<Kind>Patch` types are.
 *
 * - every property is optional, at every depth: the server merges nested objects and maps, so
 *   any part of them may be given;
 * - `null` removes a property, and is allowed exactly where the server can remove it: on properties
 *   that are optional (or defaulted: the server then fills the default in again) and on nullable
 *   ones; never on required non-nullable ones, such as `apiVersion` and `kind`;
 * - map entries are partial too and `null` removes an entry; open records accept anything;
 * - lists are replaced whole, so a list is given whole, with its items as written (of `T`, an input
 *   type: fields with defaults are optional there);
 * - `undefined` is allowed everywhere and means "no change" (JSON leaves it out), so values read
 *   from optional fields can be copied in under `exactOptionalPropertyTypes`;
 * - a property named like a member of `Object.prototype` (`constructor`, `toString`, …) also
 *   accepts that member's type, as in the generated types (see the generator's docs).
 *
 * @example
 * type WidgetPatch = MergePatch<WidgetInput>;
 * const patch: WidgetPatch = { spec: { replicas: 3, selector: null }, status: null };
 */
export type MergePatch<T> = T extends readonly unknown[]
  ? T
  : T extends PrototypeValue
    ? T
    : T extends object
      ? { [K in keyof T]?: MergePatch<T[K]> | RemovalOf<T, K> | PrototypeValueOf<K> | undefined }
      : T;

/** Every field optional, at every depth (array items too). */
export type DeepPartial<T> = T extends readonly (infer E)[] ? DeepPartial<E>[] : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/**
 * What a server-side apply sends: the fields this manager wants to own, any subset of the input
 * at any depth, with `metadata.name` required (the object is addressed by it).
 */
export type ApplyOf<Input> = DeepPartial<Omit<Input, 'metadata'>> & { metadata: ObjectMetaInput & { name: string } };

/**
 * A resource descriptor: `ResourceInfo` plus the phantom body type `Body`, the phantom type of
 * what users write to create one, `Input` (default: `InputOf<Body>`), and the phantom type of the
 * patch view handlers receive, `View` (generated `<Kind>PatchView`s; default `unknown`: no view of
 * its own, handlers get the generic `Patch<Body>`), and the scope, `Namespaced`: `true` or `false`
 * when it is known (generated descriptors and `builtins.*` know it), so that handlers' `namespace`
 * is a `string` or `null` (`NamespaceOf`); the default `boolean` leaves it `string | null`.
 * The phantom members exist only at the type level; they are never set at run time.
 */
export interface ResourceDescriptor<
  Body extends KubernetesObject = KubernetesObject,
  Input = InputOf<Body>,
  View = unknown,
  Namespaced extends boolean = boolean,
> extends ResourceInfo {
  readonly [bodyType]?: Body;
  readonly [inputType]?: Input;
  readonly [viewType]?: View;
  /** `group/version` (or just `version` for the core group), as in `apiVersion`. */
  readonly apiVersion: string;
  readonly namespaced: Namespaced;
}

/** The body type carried by a descriptor. */
export type BodyOf<D> = D extends ResourceDescriptor<infer B, unknown, unknown> ? B : never;

/** The input type carried by a descriptor (what `client.create()` accepts). */
export type InputTypeOf<D> = D extends ResourceDescriptor<KubernetesObject, infer I, unknown> ? I : never;

/** The patch view carried by a descriptor; `unknown` when it has none (and for other references). */
export type ViewOf<D> = D extends ResourceDescriptor<KubernetesObject, unknown, infer V> ? V : unknown;

/**
 * What `namespace` is for the objects of a resource reference: `string` for a descriptor of a
 * namespaced kind, `null` for a cluster-scoped one, `string | null` when the scope is not known at
 * the type level (a descriptor typed `namespaced: boolean`, strings, tuples, selectors).
 */
export type NamespaceOf<D> =
  D extends ResourceDescriptor<KubernetesObject, unknown, unknown, true>
    ? string
    : D extends ResourceDescriptor<KubernetesObject, unknown, unknown, false>
      ? null
      : string | null;

/**
 * Creates a typed resource descriptor. Give the scope as the fourth type argument for handlers to
 * see `namespace` as a `string` (`true`) or `null` (`false`); it must match `info.namespaced`.
 *
 * @example
 * export const Widgets = resource<Widget, WidgetInput, unknown, true>({ group: 'example.com', version: 'v1',
 *                                            plural: 'widgets', kind: 'Widget', namespaced: true });
 */
export function resource<Body extends KubernetesObject, Input = InputOf<Body>, View = unknown, Namespaced extends boolean = boolean>(
  info: ResourceInfo & { readonly namespaced: Namespaced },
): ResourceDescriptor<Body, Input, View, Namespaced> {
  if (!info.plural) throw new TypeError('A resource descriptor needs a non-empty plural name.');
  if (!info.version) throw new TypeError('A resource descriptor needs a non-empty version.');
  const apiVersion = info.group ? `${info.group}/${info.version}` : info.version;
  return Object.freeze({ ...info, apiVersion });
}

/** Whether a value is a descriptor (as opposed to a string/tuple/selector reference). */
export function isDescriptor(value: unknown): value is ResourceDescriptor {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as ResourceInfo).plural === 'string' &&
    typeof (value as ResourceInfo).version === 'string' &&
    typeof (value as ResourceInfo).kind === 'string' &&
    typeof (value as ResourceInfo).namespaced === 'boolean'
  );
}
