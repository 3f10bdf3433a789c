/**
 * The patch accumulator of one processing cycle (R-PATCH-1) and its conversions (R-PATCH-2).
 *
 * Handlers and the framework itself (progress records, the diff-base, results, finalizers) write
 * into one `Patch` per cycle; the reactor applies it once at the end. A patch holds:
 *
 * - a JSON merge-patch (`application/merge-patch+json`: maps merge, `null` deletes, anything else
 *   — arrays included — replaces), written through auto-vivifying property access:
 *   `patch.status.a.b = 1` creates `status` and `a` as needed;
 * - `fns`: transformation functions `(body) => void` that mutate a deep copy of the freshest body;
 *   they become JSON-Patch operations (used for finalizers, where merge-patches cannot append).
 *
 * How the merge-patch part is typed depends on what the resource's descriptor knows:
 * - a generated descriptor carries a *patch view* (`<Kind>PatchView`), emitted from the schema with
 *   accessors whose read and write types differ: reading an object property gives its view (always
 *   there to write into), writing accepts a partial merge-patch value, `null` only where merge patch
 *   can remove the property, lists only as whole values (their reading type is deeply read-only, so
 *   `patch.spec.items[0].name = 'x'` does not compile);
 * - any other body type gets the generic view `PatchViewOf<Body>`, a mapped type: every property
 *   writable with its own type or `null`, nested objects always there to be written into. A mapped
 *   type cannot give one property different read and write types, so there a nested *object* field
 *   cannot be assigned `null` or partially (use `patch.setAt('spec.struct', null)`); the top-level
 *   sections (`patch.spec = null`, `patch.status = {…}`) do accept whole values and `null`.
 *
 * Caveat: because nested objects vivify on access, *reading* a field that was never written gives
 * an empty view object, not `undefined`; use `getAt()`/`hasAt()` (or `toMergePatch()`) to inspect.
 * Reading back what was written (a scalar, a whole list) gives that value.
 *
 * The neighbours: `dicts` (paths and copies), `configs/*` storages (which write here), and the
 * client's patching module (which sends `split()` and `toJsonPatch()` to the API).
 */

import * as dicts from './dicts.js';
import * as jsonpatches from './jsonpatches.js';
import type * as resources from './resources.js';

type PatchField<V> = unknown extends V
  ? unknown
  : [NonNullable<V>] extends [readonly unknown[]]
    ? NonNullable<V> | null
    : [NonNullable<V>] extends [object]
      ? PatchOf<NonNullable<V>>
      : NonNullable<V> | null;

/**
 * The writable, auto-vivifying patch view of a body type: a deep partial where scalar and array
 * properties accept their type or `null` (merge-patch removal), and object properties are always
 * present (writing into them creates them).
 *
 * @example
 * declare const status: PatchOf<{ replicas?: number; conditions?: Condition[] }>;
 * status.replicas = 3;      // ok
 * status.replicas = null;   // ok: removes the field
 * status.replicas = 'x';    // type error
 */
export type PatchOf<T> = { -readonly [K in keyof T]-?: PatchField<T[K]> };

/** Plain data accepted when a whole section is assigned at once (`patch.status = { … }`). */
export type PatchInput<T> = unknown extends T
  ? unknown
  : T extends readonly unknown[]
    ? T
    : T extends object
      ? { [K in keyof T]?: PatchInput<NonNullable<T[K]>> | null }
      : T;

/**
 * A value as reading it from a patch view gives it back: deeply read-only, so that nothing can be
 * written into a list through the view (merge patches replace lists whole; an index write would be
 * sent as a map with the key `"0"`).
 */
export type ReadonlyDeep<T> = T extends (...args: never[]) => unknown ? T : T extends object ? { readonly [K in keyof T]: ReadonlyDeep<T[K]> } : T;

/**
 * The writable view of an object's metadata in a patch, with merge-patch semantics: `null` removes
 * a field or a label/annotation, lists (finalizers, owner references) are written whole.
 * Server-populated fields other than the `resourceVersion` and `uid` preconditions are left out.
 */
export interface ObjectMetaPatchView {
  get name(): string | null | undefined;
  set name(value: string | null);
  get generateName(): string | null | undefined;
  set generateName(value: string | null);
  get namespace(): string | null | undefined;
  set namespace(value: string | null);
  /** A precondition: the patch fails with a conflict unless the object has this version. */
  get resourceVersion(): string | null | undefined;
  set resourceVersion(value: string | null);
  /** A precondition: the patch fails unless the object has this uid. */
  get uid(): string | null | undefined;
  set uid(value: string | null);
  get labels(): { [key: string]: string | null };
  set labels(value: { [key: string]: string | null } | null);
  get annotations(): { [key: string]: string | null };
  set annotations(value: { [key: string]: string | null } | null);
  get finalizers(): readonly string[] | null | undefined;
  set finalizers(value: string[] | null);
  get ownerReferences(): ReadonlyDeep<resources.OwnerReference[]> | null | undefined;
  set ownerReferences(value: resources.OwnerReference[] | null);
}

/** The type of a top-level section of a body; untyped bodies get open records. */
export type SectionOf<Body, K extends string> = K extends keyof Body
  ? unknown extends Body[K]
    ? Record<string, unknown>
    : NonNullable<Body[K]>
  : Record<string, unknown>;

/**
 * A transformation function of a patch. Declared with method (bivariant) parameters so that a patch
 * of a specific body type can be passed where a patch of any body is expected (storages, the reactor).
 */
export type PatchFn<Body> = { bivarianceHack(body: Body): void }['bivarianceHack'];

/** How a patch splits into the requests of R-PATCH-2. */
export interface SplitPatch {
  /** Merge-patch of the object itself (`{}` if nothing to send). */
  readonly main: dicts.JsonObject;
  /** Merge-patch of the `/status` subresource, as `{status: …}` (`{}` if nothing to send). */
  readonly status: dicts.JsonObject;
}

const DATA: unique symbol = Symbol('patch-data');
const VIEWS = new WeakMap<object, { data: Record<string, unknown>; path: dicts.FieldPath }>();

function unwrap(value: unknown): unknown {
  const view = typeof value === 'object' && value !== null ? VIEWS.get(value) : undefined;
  return view ? dicts.deepCopy(dicts.resolve(view.data, view.path, {})) : value;
}

function makeView(data: Record<string, unknown>, path: dicts.FieldPath): object {
  const at = (prop: string): dicts.FieldPath => [...path, prop];
  const snapshot = (): unknown => dicts.deepCopy(dicts.resolve(data, path, {}));
  const view: object = new Proxy(
    {},
    {
      get(_target, prop) {
        if (typeof prop === 'symbol') return undefined;
        if (prop === 'toJSON') return snapshot;
        if (prop === 'toString') return () => JSON.stringify(snapshot());
        if (prop === 'constructor') return Object;
        if (prop === 'then') return undefined;
        const value = dicts.resolve(data, at(prop));
        return value === undefined || dicts.isObject(value) ? makeView(data, at(prop)) : value;
      },
      set(_target, prop, value) {
        if (typeof prop === 'symbol') return false;
        dicts.ensure(data, at(prop), unwrap(value));
        return true;
      },
      deleteProperty(_target, prop) {
        if (typeof prop === 'string') dicts.remove(data, at(prop));
        return true;
      },
      has(_target, prop) {
        return typeof prop === 'string' && dicts.has(data, at(prop));
      },
      ownKeys() {
        const value = dicts.resolve(data, path);
        return dicts.isObject(value) ? Object.keys(value) : [];
      },
      getOwnPropertyDescriptor(_target, prop) {
        if (typeof prop === 'symbol' || !dicts.has(data, at(prop))) return undefined;
        const value = dicts.resolve(data, at(prop));
        return {
          value: dicts.isObject(value) ? makeView(data, at(prop)) : value,
          writable: true,
          enumerable: true,
          configurable: true,
        };
      },
      defineProperty(_target, prop, descriptor) {
        if (typeof prop === 'symbol' || !('value' in descriptor)) return false;
        dicts.ensure(data, at(prop), unwrap(descriptor.value));
        return true;
      },
    },
  );
  VIEWS.set(view, { data, path });
  return view;
}

/**
 * The class behind `Patch`: methods and the typed `metadata`/`meta`/`spec`/`status` sections.
 * Use `new Patch<Body>()`; other top-level keys of the body (`data`, `rules`, …) are reachable as
 * properties too.
 */
export class PatchBase<Body extends object = Record<string, unknown>> {
  /** Transformation functions, applied in order to a deep copy of the freshest body (R-PATCH-1). */
  readonly fns: Array<PatchFn<Body>>;
  /** @internal The merge-patch data. */
  readonly [DATA]: Record<string, unknown>;

  constructor(initial?: dicts.JsonObject, fns?: Iterable<PatchFn<Body>>) {
    this[DATA] = dicts.deepCopy(initial ?? {});
    this.fns = [...(fns ?? [])];
    // biome-ignore lint/correctness/noConstructorReturn: the patch is its own merge-patch view, so `patch.spec.x = 1` works
    return new Proxy(this, {
      get(target, prop, receiver) {
        if (typeof prop === 'symbol' || prop in target) return Reflect.get(target, prop, receiver);
        return Reflect.get(makeView(target[DATA], []), prop);
      },
      set(target, prop, value, receiver) {
        // `__proto__` is a key of the body like any other (R-ESSENCE-6), not the patch's prototype.
        if (typeof prop === 'symbol' || (prop in target && prop !== '__proto__')) return Reflect.set(target, prop, value, receiver);
        dicts.setOwn(target[DATA], prop, unwrap(value));
        return true;
      },
      deleteProperty(target, prop) {
        if (typeof prop === 'symbol' || prop in target) return Reflect.deleteProperty(target, prop);
        delete target[DATA][prop];
        return true;
      },
    });
  }

  /** The metadata section (Kopf: `patch.metadata`, alias `patch.meta`), with `labels`/`annotations`. */
  get metadata(): ObjectMetaPatchView {
    return this.section('metadata') as ObjectMetaPatchView;
  }
  set metadata(value: PatchInput<resources.ObjectMeta> | null) {
    this[DATA]['metadata'] = unwrap(value);
  }
  /** Alias of `metadata`. */
  get meta(): ObjectMetaPatchView {
    return this.metadata;
  }
  set meta(value: PatchInput<resources.ObjectMeta> | null) {
    this.metadata = value;
  }
  /**
   * The spec section, typed by the view the patch is used with (`Patch<Body>` or a descriptor's
   * patch view); the accumulator alone does not know its shape.
   */
  get spec(): unknown {
    return this.section('spec');
  }
  set spec(value: unknown) {
    this[DATA]['spec'] = unwrap(value);
  }
  /** The status section, typed by the view the patch is used with (as `spec`). */
  get status(): unknown {
    return this.section('status');
  }
  set status(value: unknown) {
    this[DATA]['status'] = unwrap(value);
  }

  private section(name: string): object {
    return makeView(this[DATA], [name]);
  }

  /** A patch is empty if it has no merge-patch keys and no transformation functions. */
  isEmpty(): boolean {
    return Object.keys(this[DATA]).length === 0 && this.fns.length === 0;
  }

  /** The merge-patch as plain JSON (a deep copy; `null`s are kept: they delete fields). */
  toMergePatch(): dicts.JsonObject {
    return dicts.deepCopy(this[DATA]) as dicts.JsonObject;
  }

  /** `JSON.stringify(patch)` renders the merge-patch. */
  toJSON(): dicts.JsonObject {
    return this.toMergePatch();
  }

  /**
   * Splits the merge-patch into the object's part and the `/status` part (R-PATCH-2). Without a
   * status subresource everything goes to the object.
   */
  split(options: { readonly statusSubresource: boolean }): SplitPatch {
    const data = this.toMergePatch();
    if (!options.statusSubresource || !('status' in data)) return { main: data, status: {} };
    const { status, ...main } = data;
    return { main, status: { status: status ?? null } };
  }

  /**
   * Computes JSON-Patch operations: applies the merge-patch (unless `merge: false`, e.g. when
   * `freshBody` is already the response to it), then `fns`, to a deep copy of `freshBody`, and diffs
   * the result against `freshBody`. Maps are diffed per key; arrays are replaced as whole values,
   * except `metadata.finalizers`, where appends become `add …/finalizers/<n>` and removals become
   * `remove …/finalizers/<index>` (or `remove …/finalizers` when none is left), as in R-FINAL-3/5.
   * The `test` of the resource version is not included (see `jsonpatches.resourceVersionTest`).
   */
  toJsonPatch(freshBody: unknown, options?: { readonly merge?: boolean }): jsonpatches.JsonPatchOperation[] {
    const base = dicts.deepCopy(freshBody);
    const merged = options?.merge === false ? base : jsonpatches.applyMergePatch(base, this.toMergePatch());
    const target = (dicts.isObject(merged) ? merged : {}) as Body;
    for (const fn of this.fns) fn(target);
    return jsonpatches.diffAsJsonPatch(freshBody, dicts.deepCopy(target));
  }

  /** Sets a nested field of the merge-patch, creating parents (Kopf: `dicts.ensure(patch, …)`). */
  setAt(path: dicts.FieldSpec, value: unknown): void {
    dicts.ensure(this[DATA], path, unwrap(value));
  }

  /** Reads a nested field of the merge-patch; `undefined` if never written (`null` if deleted). */
  getAt(path: dicts.FieldSpec): unknown {
    return dicts.resolve(this[DATA], path);
  }

  /** Whether a nested field is present in the merge-patch (possibly as `null`). */
  hasAt(path: dicts.FieldSpec): boolean {
    return dicts.has(this[DATA], path);
  }

  /** Removes a field from the pending merge-patch (not a `null`!), and parents left empty. */
  removeAt(path: dicts.FieldSpec): void {
    dicts.remove(this[DATA], path);
  }

  /** Forgets the merge-patch; also the functions unless `keepFns` (R-PATCH-3/8 carry-over). */
  clear(options?: { readonly keepFns?: boolean }): void {
    for (const key of Object.keys(this[DATA])) delete this[DATA][key];
    if (!options?.keepFns) this.fns.length = 0;
  }
}

/** The writable `spec` and `status` sections of the generic view. */
export interface SectionsOf<Body> {
  get spec(): PatchOf<SectionOf<Body, 'spec'>>;
  set spec(value: PatchInput<SectionOf<Body, 'spec'>> | null);
  get status(): PatchOf<SectionOf<Body, 'status'>>;
  set status(value: PatchInput<SectionOf<Body, 'status'>> | null);
}

/**
 * The generic patch view of a body type, derived by mapped types: the sections plus every other
 * top-level property of the body (`data`, `rules`, …). What handlers of builtin resources, of
 * hand-written descriptors and of untyped references write through.
 */
export type PatchViewOf<Body> = SectionsOf<Body> & PatchOf<Omit<Body, 'metadata' | 'spec' | 'status' | keyof PatchBase>>;

/** A patch: the accumulator methods plus typed writable sections of `Body`. */
export type Patch<Body extends object = Record<string, unknown>> = PatchBase<Body> & PatchViewOf<Body>;

/**
 * The patch a handler receives: the accumulator with the descriptor's patch view, or `Patch<Body>`
 * when the descriptor carries none (`View` is `unknown`).
 */
export type PatchWithView<Body extends object, View> = unknown extends View ? Patch<Body> : PatchBase<Body> & View;

/**
 * Creates a patch (optionally from an existing merge-patch and functions).
 *
 * @example
 * const patch = new Patch<Widget>();
 * patch.status.replicas = 3;
 * patch.metadata.labels['app'] = null;
 * patch.toMergePatch(); // {status: {replicas: 3}, metadata: {labels: {app: null}}}
 */
export const Patch = PatchBase as unknown as new <Body extends object = Record<string, unknown>>(
  initial?: dicts.JsonObject,
  fns?: Iterable<PatchFn<Body>>,
) => Patch<Body>;
