/**
 * Hierarchy helpers: turning freshly built objects into children of the object being handled
 * (R-HIER-1..6; Kopf's `kopf.adopt()`, `kopf.label()`, …).
 *
 * Operators usually create other objects for the object they handle — ConfigMaps, Deployments,
 * custom resources — and want them cleaned up with it, found by its labels, named after it and
 * kept in its namespace. These functions do that to plain objects (generated bodies, built-in
 * bodies, object literals) before they are sent to the API: they mutate each object in place and
 * return what they were given, with its own type. Without an explicit owner they use the object of
 * the handler currently running (found through the handler context, R-API-6).
 *
 * Owner references that the API server or its garbage collector would not honour are refused here,
 * at the call, rather than after the child exists: an owner in another namespace than the child
 * ("cross-namespace owner references are disallowed by design" — the garbage collector treats them
 * as absent and deletes the child), a namespaced owner of a cluster-scoped child (unresolvable), a
 * second controller reference (the API server answers 422), and an owner without `apiVersion`,
 * `kind`, `name` or `uid` (422 too). Cluster-scoped owners of namespaced children are valid.
 */

import * as dicts from '../cogs/structs/dicts.js';
import type * as resources from '../cogs/structs/resources.js';
import * as execution from '../core/actions/execution.js';
import { builtins } from '../core/intents/builtins.js';

/** What an owner needs to be: any body as served by the API (read-only views included). */
export interface OwnerLike {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: {
    readonly name?: string;
    readonly uid?: string;
    readonly namespace?: string;
    readonly labels?: { readonly [key: string]: string };
  };
}

/** One object to adjust, or several (an array). Objects are mutated in place. */
export type Objects = resources.KubernetesObject | readonly resources.KubernetesObject[];

/** An object reference (for events and the like): the owner's fields, empty ones left out. */
export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  namespace?: string;
}

/** Why a hierarchy helper refused: each a literal `code`, with a message naming the objects. */
export type HierarchyProblem =
  /** No owner given, and no handler of an object is running. */
  | 'NO_OWNER'
  /** No name given, and the owner has none (R-HIER-3). */
  | 'NO_NAME'
  /** The owner lacks `apiVersion`, `kind`, `name` or `uid`: the API server would reject the reference. */
  | 'INCOMPLETE_OWNER'
  /** A namespaced owner of a child in another namespace: the garbage collector would delete the child. */
  | 'CROSS_NAMESPACE_OWNER'
  /** A namespaced owner of a cluster-scoped child: the reference cannot be resolved. */
  | 'NAMESPACED_OWNER_OF_CLUSTER_OBJECT'
  /** The child already has another controller: the API server allows only one. */
  | 'SECOND_CONTROLLER'
  /** A `nested` path leads to a value that is not an object. */
  | 'NOT_AN_OBJECT';

/** A hierarchy helper refused its input. */
export class HierarchyError extends TypeError {
  override readonly name = 'HierarchyError';
  readonly code: HierarchyProblem;

  constructor(code: HierarchyProblem, message: string) {
    super(message);
    this.code = code;
  }
}

/** Options of `appendOwnerReference()` and `buildOwnerReference()`; `null` leaves the field out. */
export interface OwnerReferenceOptions {
  /** Default `true`. */
  readonly controller?: boolean | null;
  /** Default `true`. */
  readonly blockOwnerDeletion?: boolean | null;
}

/** Options of `label()`. */
export interface LabelOptions {
  /** Overwrite labels the objects already have (default: keep them). */
  readonly forced?: boolean;
  /** Paths of sub-objects labelled too if they exist, e.g. `'spec.template'` (dotted, or arrays of keys). */
  readonly nested?: string | ReadonlyArray<string | readonly string[]>;
}

/** Options of `harmonizeNaming()`. */
export interface NamingOptions {
  /** Rename objects that already have a name or a prefix (default: keep them). */
  readonly forced?: boolean;
  /** Use the name as is (`name`), not as a prefix (`generateName: '<name>-'`). */
  readonly strict?: boolean;
}

/** Options of `adjustNamespace()`. */
export interface NamespaceOptions {
  /** Move objects that already have a namespace (default: keep it). */
  readonly forced?: boolean;
}

/** Options of `adopt()`: naming and namespace are `forced` together; `nested` goes to labels. */
export type AdoptOptions = NamingOptions & NamespaceOptions & Pick<LabelOptions, 'nested'>;

type Meta = resources.ObjectMeta;

function list(objs: Objects): readonly resources.KubernetesObject[] {
  const all = (Array.isArray(objs) ? objs : [objs]) as readonly unknown[];
  const bad = all.find((obj) => !dicts.isObject(obj));
  if (bad !== undefined)
    throw new HierarchyError('NOT_AN_OBJECT', `Hierarchy helpers work on objects (or arrays of them), got ${JSON.stringify(bad) ?? String(bad)}.`);
  return all as readonly resources.KubernetesObject[];
}

function metaOf(obj: resources.KubernetesObject): Meta {
  return (obj.metadata ??= {});
}

function describe(obj: resources.KubernetesObject | OwnerLike): string {
  const meta = obj.metadata;
  const name = meta?.name ?? (meta as Meta | undefined)?.generateName ?? '<unnamed>';
  return `${obj.kind ?? 'object'} ${meta?.namespace ? `${meta.namespace}/` : ''}${name}`;
}

/** The object of the handler running now, as the default owner (R-API-6). */
function currentOwner(what: string): OwnerLike {
  const context = execution.findHandler();
  if (context === undefined) {
    throw new HierarchyError('NO_OWNER', `${what} was called outside of a handler: pass the owner explicitly.`);
  }
  const body = context.scope.body?.() ?? context.scope.change?.body;
  if (!dicts.isObject(body)) {
    throw new HierarchyError('NO_OWNER', `${what} was called in handler '${context.handler.id}', which runs for no object: pass the owner explicitly.`);
  }
  return body as OwnerLike;
}

function ownerOf(owner: OwnerLike | undefined, what: string): OwnerLike {
  return owner ?? currentOwner(what);
}

/**
 * The object reference of a body (R-HIER-6): `apiVersion`, `kind`, `name`, `uid`, `namespace`,
 * without empty fields.
 */
export function buildObjectReference(body: OwnerLike): ObjectReference {
  const meta = body.metadata;
  const ref: ObjectReference = {};
  if (body.apiVersion) ref.apiVersion = body.apiVersion;
  if (body.kind) ref.kind = body.kind;
  if (meta?.name) ref.name = meta.name;
  if (meta?.uid) ref.uid = meta.uid;
  if (meta?.namespace) ref.namespace = meta.namespace;
  return ref;
}

/**
 * The owner reference of a body (R-HIER-1/6): `controller`, `blockOwnerDeletion` (both default
 * `true`; `null` leaves them out), `apiVersion`, `kind`, `name`, `uid`.
 *
 * @throws HierarchyError `INCOMPLETE_OWNER` if the body lacks one of the four identifying fields
 *   (the API server would reject such a reference).
 */
export function buildOwnerReference(body: OwnerLike, options: OwnerReferenceOptions = {}): resources.OwnerReference {
  const { controller = true, blockOwnerDeletion = true } = options;
  const meta = body.metadata;
  const fields = { apiVersion: body.apiVersion, kind: body.kind, name: meta?.name, uid: meta?.uid };
  const missing = Object.entries(fields)
    .filter(([, value]) => typeof value !== 'string' || value === '')
    .map(([key]) => key);
  if (missing.length > 0) {
    throw new HierarchyError(
      'INCOMPLETE_OWNER',
      `The owner ${describe(body)} has no ${missing.join(', ')}: an owner reference needs apiVersion, kind, name and uid (use a body read from the API).`,
    );
  }
  const ref: resources.OwnerReference = { ...(fields as resources.OwnerReference) };
  const flags: Partial<resources.OwnerReference> = {};
  if (controller !== null) flags.controller = controller;
  if (blockOwnerDeletion !== null) flags.blockOwnerDeletion = blockOwnerDeletion;
  return { ...flags, ...ref };
}

/** `apiVersion/kind` of the built-in kinds that are cluster-scoped (a child's scope is known only for these). */
const CLUSTER_SCOPED: ReadonlySet<string> = new Set(
  Object.values(builtins)
    .filter((descriptor) => !descriptor.namespaced)
    .map((descriptor) => `${descriptor.apiVersion}/${descriptor.kind}`),
);

/** Refuses a reference of `owner` on a child in `namespace` (the child's namespace as it will be). */
function checkScope(owner: OwnerLike, child: resources.KubernetesObject, namespace: string | undefined): void {
  const ownerNamespace = owner.metadata?.namespace;
  if (!ownerNamespace) return; // Cluster-scoped owners may own anything.
  if (CLUSTER_SCOPED.has(`${child.apiVersion}/${child.kind}`)) {
    throw new HierarchyError(
      'NAMESPACED_OWNER_OF_CLUSTER_OBJECT',
      `${describe(owner)} is namespaced and cannot own the cluster-scoped ${describe(child)}: Kubernetes cannot resolve such an owner reference.`,
    );
  }
  if (namespace && namespace !== ownerNamespace) {
    throw new HierarchyError(
      'CROSS_NAMESPACE_OWNER',
      `${describe(owner)} cannot own ${describe(child)} in namespace '${namespace}': cross-namespace owner references are disallowed (the garbage collector would delete the child).`,
    );
  }
}

function checkController(ref: resources.OwnerReference, child: resources.KubernetesObject): void {
  if (ref.controller !== true) return;
  const other = (child.metadata?.ownerReferences ?? []).find((existing) => existing.controller === true && existing.uid !== ref.uid);
  if (other !== undefined) {
    throw new HierarchyError(
      'SECOND_CONTROLLER',
      `${describe(child)} is already controlled by ${other.kind}/${other.name}: only one owner reference can have controller: true (pass { controller: false }).`,
    );
  }
}

function appendChecked(children: readonly resources.KubernetesObject[], ref: resources.OwnerReference): void {
  for (const child of children) {
    const refs = (metaOf(child).ownerReferences ??= []);
    if (!refs.some((existing) => existing.uid === ref.uid)) refs.push({ ...ref });
  }
}

/**
 * Adds an owner reference to each object unless one with the owner's uid is there (R-HIER-1);
 * returns `objs`. The owner defaults to the object of the current handler.
 *
 * @throws HierarchyError (`NO_OWNER`, `INCOMPLETE_OWNER`, `CROSS_NAMESPACE_OWNER`,
 *   `NAMESPACED_OWNER_OF_CLUSTER_OBJECT`, `SECOND_CONTROLLER`) before any object is changed.
 */
export function appendOwnerReference<T extends Objects>(objs: T, owner?: OwnerLike, options: OwnerReferenceOptions = {}): T {
  const real = ownerOf(owner, 'appendOwnerReference()');
  const ref = buildOwnerReference(real, options);
  const children = list(objs);
  for (const child of children) {
    checkScope(real, child, child.metadata?.namespace);
    checkController(ref, child);
  }
  appendChecked(children, ref);
  return objs;
}

/**
 * Removes the owner's references (by uid) from each object (R-HIER-1); returns `objs`.
 *
 * @throws HierarchyError `NO_OWNER`, or `INCOMPLETE_OWNER` for an owner without a uid.
 */
export function removeOwnerReference<T extends Objects>(objs: T, owner?: OwnerLike): T {
  const real = ownerOf(owner, 'removeOwnerReference()');
  const uid = real.metadata?.uid;
  if (!uid) throw new HierarchyError('INCOMPLETE_OWNER', `The owner ${describe(real)} has no uid: its references cannot be found.`);
  for (const child of list(objs)) {
    const refs = child.metadata?.ownerReferences;
    if (refs?.some((ref) => ref.uid === uid)) child.metadata!.ownerReferences = refs.filter((ref) => ref.uid !== uid);
  }
  return objs;
}

function nestedPaths(nested: LabelOptions['nested']): ReadonlyArray<string | readonly string[]> {
  if (nested === undefined) return [];
  return typeof nested === 'string' ? [nested] : nested;
}

/** The objects and their existing sub-objects at the `nested` paths. */
function withNested(objs: Objects, nested: LabelOptions['nested']): resources.KubernetesObject[] {
  const out: resources.KubernetesObject[] = [];
  const paths = nestedPaths(nested);
  for (const obj of list(objs)) {
    out.push(obj);
    for (const path of paths) {
      const sub = dicts.resolve(obj, path);
      if (sub === undefined || sub === null) continue;
      if (!dicts.isObject(sub)) {
        const shown = typeof path === 'string' ? path : path.join('.');
        throw new HierarchyError('NOT_AN_OBJECT', `The nested field '${shown}' of ${describe(obj)} is not an object and cannot be labelled.`);
      }
      out.push(sub as resources.KubernetesObject);
    }
  }
  return out;
}

/**
 * Sets labels on each object (and on its existing sub-objects at the `nested` paths) without
 * overwriting existing keys unless `forced` (R-HIER-2); returns `objs`. The labels default to the
 * current handler's object's labels.
 */
export function label<T extends Objects>(objs: T, labels?: { readonly [key: string]: string }, options: LabelOptions = {}): T {
  const real = labels ?? currentOwner('label()').metadata?.labels ?? {};
  for (const obj of withNested(objs, options.nested)) {
    const own = (metaOf(obj).labels ??= {});
    for (const [key, value] of Object.entries(real)) {
      if (options.forced || !Object.hasOwn(own, key)) own[key] = value;
    }
  }
  return objs;
}

/**
 * Names the objects after `name` (default: the current handler's object's name) (R-HIER-3): an
 * object with neither `name` nor `generateName` (or any, if `forced`) gets `generateName: '<name>-'`,
 * or with `strict` the exact `name`; returns `objs`.
 *
 * @throws HierarchyError `NO_NAME` when no name is given and the owner has none.
 */
export function harmonizeNaming<T extends Objects>(objs: T, name?: string, options: NamingOptions = {}): T {
  const real = name ?? currentOwner('harmonizeNaming()').metadata?.name;
  if (!real) throw new HierarchyError('NO_NAME', 'harmonizeNaming() needs a name: pass it explicitly (the owner has none).');
  for (const obj of list(objs)) {
    const meta = metaOf(obj);
    const unnamed = (meta.name === undefined || meta.name === null) && (meta.generateName === undefined || meta.generateName === null);
    if (!options.forced && !unnamed) continue;
    if (options.strict) {
      meta.name = real;
      delete meta.generateName;
    } else {
      meta.generateName = `${real}-`;
      delete meta.name;
    }
  }
  return objs;
}

function setNamespace(objs: Objects, namespace: string | null, forced: boolean): void {
  for (const obj of list(objs)) {
    const meta = metaOf(obj);
    if (!forced && meta.namespace !== undefined && meta.namespace !== null) continue;
    if (namespace === null) delete meta.namespace;
    else meta.namespace = namespace;
  }
}

/**
 * Sets `metadata.namespace` of objects that have none, or of all with `forced` (R-HIER-4); returns
 * `objs`. The namespace defaults to the current handler's object's; `null` (a cluster-scoped owner)
 * leaves objects without one (with `forced`, removes it).
 */
export function adjustNamespace<T extends Objects>(objs: T, namespace?: string | null, options: NamespaceOptions = {}): T {
  const real = namespace !== undefined ? namespace : (currentOwner('adjustNamespace()').metadata?.namespace ?? null);
  setNamespace(objs, real, options.forced ?? false);
  return objs;
}

/**
 * Makes the objects children of the owner (default: the current handler's object) (R-HIER-5): its
 * owner reference, names after it, its namespace, its labels — in this order; returns `objs`.
 * Everything is checked before any object is changed; a child that keeps its own namespace must be
 * in the owner's (or the owner cluster-scoped).
 *
 * @throws HierarchyError as `appendOwnerReference()` and `harmonizeNaming()`.
 */
export function adopt<T extends Objects>(objs: T, owner?: OwnerLike, options: AdoptOptions = {}): T {
  const real = ownerOf(owner, 'adopt()');
  const { forced = false, strict = false, nested } = options;
  const meta = real.metadata;
  const ref = buildOwnerReference(real);
  const namespace = meta?.namespace ?? null;
  const children = list(objs);
  for (const child of children) {
    const own = child.metadata?.namespace;
    checkScope(real, child, forced || own === undefined || own === null ? (namespace ?? undefined) : own);
    checkController(ref, child);
  }
  if (!meta?.name) throw new HierarchyError('NO_NAME', `adopt() needs the owner's name to name the children after it; ${describe(real)} has none.`);
  withNested(objs, nested); // Refuses bad nested paths before anything changes.
  appendChecked(children, ref);
  harmonizeNaming(objs, meta.name, { forced, strict });
  setNamespace(objs, namespace, forced);
  label(objs, meta.labels ?? {}, { forced, nested });
  return objs;
}
