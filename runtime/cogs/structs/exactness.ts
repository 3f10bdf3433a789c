/**
 * Exactness of converted objects, checked by the compiler: what makes a field renamed or split
 * between two versions of a CRD a type error in the converter until the converter handles it.
 *
 * TypeScript checks excess properties only in object literals written in place; a converter
 * usually spreads the other version's object (`{ ...object, spec: { ...object.spec, … } }`), and
 * spreads carry every field along unchecked. `Exact<Expected, Actual>` is `Actual` with each key
 * that `Expected` lacks — at any depth: nested objects, list items, map values, optional fields —
 * typed `never`; a converter declared to return `R & Exact<Target, R>` (with `R extends Target`)
 * therefore compiles only when nothing of the source version is left in places the target version
 * does not have, and the compiler's message names the path: `The types of 'spec.size' are
 * incompatible between these types` (list items: `spec.ports` then the item's field, one level of
 * elaboration per list).
 *
 * How it reads the generated types:
 * - optional fields and `| null` (nullable): `undefined` and `null` pass, the object member of the
 *   field's type is compared;
 * - unions (enums, int-or-string): primitive members pass (their values are the constraint's
 *   business); when `Expected` has several object members (hand-written types: the generator emits
 *   none, `oneOf`/`anyOf` only validate), `Actual` must be exact against one of them;
 * - index signatures (`additionalProperties`, maps): every key is allowed and each value is
 *   compared with the signature's type — so a field renamed inside map values is caught too;
 *   `unknown` values (`x-kubernetes-preserve-unknown-fields`, `x-kubernetes-embedded-resource`'s
 *   rest, `values?: unknown`) accept anything below them; `{ [key: string]: never }` (an object
 *   schema without properties) accepts no field at all;
 * - lists (mutable or `readonly`) are compared item by item; tuples as lists of their members;
 * - `$kopf.ObjectMeta` is a plain interface like the others (labels and annotations are maps);
 * - `any` in `Actual` (a value from `JSON.parse`, an untyped helper) is not checked.
 *
 * Declaring it: when the target is itself inferred (`on.convert(From, To, …)`, `BodyOf<To>`), a
 * plain `R extends BodyOf<To>` widens the literals of the result (`apiVersion: string`, refused);
 * declare `const R extends ReadonlyDeep<BodyOf<To>>`: `const` keeps the literals, and
 * `ReadonlyDeep` admits the readonly lists that `const` inference gives array literals (the
 * result is JSON for the API server: nobody mutates it).
 *
 * What it cannot catch (the round-trip helper of `kopf-gen/testing`, `roundTrip`, is for these):
 * - a field dropped without a replacement: leaving out a source field is no excess, and when the
 *   target field it maps to is optional (or the target has none: a field only the source version
 *   has), the converter compiles and silently loses data;
 * - a value with the right type and the wrong meaning (units, a swapped pair, a wrong default);
 * - anything typed as the target before it reaches the converter's return: a variable or a
 *   helper annotated `: SpecV2`, a cast (`as`), or a converter whose own return type is annotated
 *   as the target type — the annotation is all `Exact` sees (let the return type be inferred);
 * - anything below an `unknown` or an index signature of `unknown` (preserve-unknown-fields):
 *   the target keeps whatever it gets there;
 * - the run-time shape of `Date`s, class instances and functions: converters return JSON values,
 *   and a non-JSON value is refused only where its own keys are not fields of the target.
 */

/** `Actual`, with every key `Expected` does not declare (deeply) typed `never`. */
export type Exact<Expected, Actual> = unknown extends Expected
  ? Actual // `unknown`/`any` expected (preserve-unknown-fields): anything goes below
  : [Expected] extends [never]
    ? never // nothing is allowed here (a field of `{ [key: string]: never }`, an item of no list)
    : 0 extends 1 & Actual
      ? Actual // an `any` value: nothing to check
      : ExactMember<Expected, Actual>;

/** One member of `Actual` (the union distributes): lists item by item, objects field by field. */
type ExactMember<Expected, Actual> = Actual extends readonly (infer Item)[]
  ? readonly Exact<ItemOf<Expected>, Item>[]
  : Actual extends object
    ? ExactObject<ObjectMembers<Expected>, Actual>
    : Actual;

/** The item types of the list members of `T` (`never` if it has none). */
type ItemOf<T> = T extends readonly (infer Item)[] ? Item : never;

/** The members of `T` that are objects and not lists (`null`, `undefined`, primitives dropped). */
type ObjectMembers<T> = T extends readonly unknown[] ? never : T extends object ? T : never;

/**
 * `Actual`'s fields against one object member of `Expected` (distributed: exact against any of
 * them will do). No object member at all: `Actual` is left to the constraint (`R extends Target`),
 * which reports the mismatch of types itself.
 */
type ExactObject<Members, Actual> = [Members] extends [never] ? Actual : ExactFields<Members, Actual>;

/** Distributes over the object members of `Expected`. */
type ExactFields<Member, Actual> = Member extends unknown ? { [K in keyof Actual]: K extends keyof Member ? Exact<Member[K], Actual[K]> : never } : never;
