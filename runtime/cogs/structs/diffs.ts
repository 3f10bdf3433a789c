/**
 * Diffs between essences: what changed, where, from what, to what (R-ESSENCE-3/4/5).
 *
 * Change handlers receive a `diff` computed between the stored diff-base and the freshly built
 * essence (see `configs/diffbase`). Field handlers (`on.field(…, 'spec.x')`) receive the same diff
 * reduced to their field. The item shape and the ordering are those of Kopf, so handler code and
 * logs read the same in both frameworks:
 *
 * - items are read-only 4-tuples `[op, field, old, new]` with `.operation`/`.op`/`.field`/`.old`/`.new`;
 * - `null` means "absent", never a value of its own;
 * - arrays are compared as whole values, never element by element;
 * - within one map, keys only in the new value come first, then keys only in the old value, then
 *   common keys; each group is sorted by key (code-unit order) so diffs are deterministic.
 */

import * as dicts from './dicts.js';

/** What happened to a field. */
export type DiffOperation = 'add' | 'change' | 'remove';

/** The tuple form of a diff item. */
export type DiffTuple = readonly [op: DiffOperation, field: dicts.FieldPath, old: unknown, new: unknown];

/** One diff item: a read-only 4-tuple that also exposes named getters. */
export type DiffItem = DiffTuple & {
  readonly operation: DiffOperation;
  /** Alias of `operation`. */
  readonly op: DiffOperation;
  readonly field: dicts.FieldPath;
  readonly old: unknown;
  readonly new: unknown;
};

/** A diff: a read-only array of items. */
export type Diff = readonly DiffItem[];

const itemGetters: PropertyDescriptorMap = {
  operation: {
    get(this: DiffTuple) {
      return this[0];
    },
    enumerable: false,
  },
  op: {
    get(this: DiffTuple) {
      return this[0];
    },
    enumerable: false,
  },
  field: {
    get(this: DiffTuple) {
      return this[1];
    },
    enumerable: false,
  },
  old: {
    get(this: DiffTuple) {
      return this[2];
    },
    enumerable: false,
  },
  new: {
    get(this: DiffTuple) {
      return this[3];
    },
    enumerable: false,
  },
};

/**
 * Creates one read-only diff item. `undefined` values are normalised to `null`.
 *
 * @example
 * const item = diffItem('change', ['spec', 'size'], '1G', '2G');
 * item.op === 'change'; item[1] === item.field;
 */
export function diffItem(op: DiffOperation, field: dicts.FieldSpec, old: unknown, now: unknown): DiffItem {
  const tuple = [op, dicts.parseField(field), old ?? null, now ?? null];
  Object.defineProperties(tuple, itemGetters);
  return Object.freeze(tuple) as unknown as DiffItem;
}

/** Creates a read-only diff from items or plain tuples. */
export function makeDiff(items: Iterable<DiffTuple>): Diff {
  return Object.freeze([...items].map((item) => diffItem(item[0], item[1], item[2], item[3])));
}

/** The empty diff. */
export const EMPTY: Diff = makeDiff([]);

function* iterateDiff(a: unknown, b: unknown, path: dicts.FieldPath): Generator<DiffItem> {
  if (dicts.deepEqual(a, b)) return;
  if (a === null || a === undefined) {
    yield diffItem('add', path, null, b);
  } else if (b === null || b === undefined) {
    yield diffItem('remove', path, a, null);
  } else if (dicts.isObject(a) && dicts.isObject(b)) {
    const aKeys = Object.keys(a).filter((key) => a[key] !== undefined);
    const bKeys = Object.keys(b).filter((key) => b[key] !== undefined);
    const aSet = new Set(aKeys);
    const bSet = new Set(bKeys);
    const sorted = (keys: string[]): string[] => keys.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    for (const key of sorted(bKeys.filter((key) => !aSet.has(key)))) {
      yield* iterateDiff(null, b[key], [...path, key]);
    }
    for (const key of sorted(aKeys.filter((key) => !bSet.has(key)))) {
      yield* iterateDiff(a[key], null, [...path, key]);
    }
    for (const key of sorted(aKeys.filter((key) => bSet.has(key)))) {
      yield* iterateDiff(a[key], b[key], [...path, key]);
    }
  } else {
    yield diffItem('change', path, a, b);
  }
}

/**
 * Computes the diff from `a` (old) to `b` (new) — R-ESSENCE-3.
 *
 * @example
 * diff({ spec: { size: '1G' } }, { spec: { size: '2G' }, metadata: { labels: { l: 'v' } } })
 * // [['add', ['metadata'], null, { labels: { l: 'v' } }], ['change', ['spec', 'size'], '1G', '2G']]
 */
export function diff(a: unknown, b: unknown, path: dicts.FieldSpec = []): Diff {
  return Object.freeze([...iterateDiff(a, b, dicts.parseField(path))]);
}

function startsWith(path: dicts.FieldPath, prefix: dicts.FieldPath): boolean {
  return prefix.length <= path.length && prefix.every((key, index) => path[index] === key);
}

/**
 * Reduces a diff to one field — R-ESSENCE-4:
 * items under the field keep their path relative to it; items on a parent of the field are
 * re-diffed at the field (adding a whole `spec` yields one `add` item with path `[]` for
 * `spec.field`); unrelated items are dropped. The root field keeps the diff as it is.
 */
export function reduceDiff(d: Diff, field: dicts.FieldSpec): Diff {
  const path = dicts.parseField(field);
  if (path.length === 0) return d;
  const items: DiffItem[] = [];
  for (const item of d) {
    const [op, itemPath, old, now] = item;
    if (startsWith(itemPath, path)) {
      items.push(diffItem(op, itemPath.slice(path.length), old, now));
    } else if (startsWith(path, itemPath)) {
      const tail = path.slice(itemPath.length);
      items.push(...iterateDiff(dicts.resolve(old, tail, null), dicts.resolve(now, tail, null), []));
    }
  }
  return Object.freeze(items);
}

/**
 * The field-scoped diff between two essences: `reduceDiff(diff(oldEssence, newEssence), field)`.
 * The handler's `old`/`new` values are `dicts.resolve(essence, field, null)` of the same essences.
 */
export function diffAt(field: dicts.FieldSpec, oldEssence: unknown, newEssence: unknown): Diff {
  return reduceDiff(diff(oldEssence, newEssence), field);
}
