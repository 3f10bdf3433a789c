/**
 * Memos (R-MEMO): free-form containers that handlers share, one per operator and one per object.
 *
 * Activity handlers get the operator memo; each object gets its own memo when first seen, created
 * by `copyMemo()` from the operator memo — a shallow copy, unless the memo defines how it copies
 * itself (`memo[COPY]()`, Kopf's `__copy__`, or a `copy()` method; returning `this` shares one memo
 * across all objects). Handlers see memos typed through the augmentable `OperatorMemo` interface
 * (`callbacks.ts`).
 */

/** The key of a memo's own copy method (R-MEMO-2). Kopf: `__copy__`. */
export const COPY: unique symbol = Symbol.for('kopf.COPY');

/**
 * A plain mutable container: entries are properties (`memo.counter`, `memo['counter']`).
 * Kopf: `kopf.Memo`.
 *
 * @example
 * const memo = new Memo({ counter: 0 });
 * memo['counter'] = 1;
 */
export class Memo {
  [key: string]: unknown;

  constructor(entries?: Readonly<Record<string, unknown>>) {
    if (entries) Object.assign(this, entries);
  }
}

/**
 * Makes the per-object memo from the operator memo (R-MEMO-2): `memo[COPY]()` if defined, else
 * `memo.copy()` if it is a function, else a shallow copy with the same prototype.
 */
export function copyMemo<M extends object>(memo: M): M {
  const own = (memo as { [COPY]?: unknown })[COPY];
  if (typeof own === 'function') return own.call(memo) as M;
  const copy = (memo as { copy?: unknown }).copy;
  if (typeof copy === 'function') return copy.call(memo) as M;
  return Object.assign(Object.create(Object.getPrototypeOf(memo) as object | null) as M, memo);
}
