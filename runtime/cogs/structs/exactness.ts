/**
 * Exactness of converted objects, checked by the compiler: what makes a field renamed or split
 * between two versions of a CRD a type error in the converter until the converter handles it.
 *
 * TypeScript checks excess properties only in object literals written in place; a converter
 * usually spreads the other version's object (`{ ...object, spec: { ...object.spec, … } }`), and
 * spreads carry every field along unchecked. `Exact<Expected, Actual>` is `Actual` with each key
 * that `Expected` lacks — at any depth: nested objects, list items, optional fields — mapped to
 * `never`; a converter declared to return `R & Exact<Target, R>` therefore compiles only when
 * nothing of the source version is left in places the target version does not have, and the
 * compiler's message names the path (`The types of 'spec.size' are incompatible`). Below an index
 * signature of `Expected` (a schema preserving unknown fields), anything goes.
 */

/** `Actual`, with every key `Expected` does not declare (deeply) typed `never`. */
export type Exact<Expected, Actual> = unknown extends Expected
  ? Actual
  : Actual extends readonly (infer Item)[]
    ? Expected extends readonly (infer ExpectedItem)[]
      ? readonly Exact<ExpectedItem, Item>[]
      : Expected
    : Actual extends object
      ? string extends keyof NonNullable<Expected>
        ? Actual
        : { [K in keyof Actual]: K extends keyof NonNullable<Expected> ? Exact<NonNullable<Expected>[K], Actual[K]> : never }
      : Actual;
