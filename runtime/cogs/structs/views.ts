/**
 * The read-only views of object bodies that handlers receive (R-KWARGS-1/8).
 *
 * A handler must not change the body it is given: what it wants changed goes through `patch`, and
 * a body changed in place would silently differ from the object on the server (and from the body
 * the next handler sees). So handlers get deep-frozen copies, made lazily — most handlers never
 * read the body, and a copy per handler per event would be most of a cycle's work:
 * - a handler of one event gets a *snapshot* (`viewOf`): one frozen copy of the event's body, made
 *   on first read and shared by every handler of that event;
 * - daemons and timers run for long and get *live* views (`liveView`): read-only proxies that
 *   resolve every property read against the newest body, so `spec.field` read in a loop sees the
 *   latest value; `frozenBody` keeps one frozen copy per body they read.
 *
 * Plain data: nothing here knows of handlers or objects beyond their bodies.
 */

import type * as bodies from './bodies.js';
import * as dicts from './dicts.js';

/** A read-only view factory for one body: a deep-frozen copy made on first use. */
export function viewOf(body: bodies.RawBody): () => dicts.DeepReadonly<bodies.RawBody> {
  let view: dicts.DeepReadonly<bodies.RawBody> | undefined;
  return () => (view ??= dicts.frozenCopy(body));
}

const frozenBodies = new WeakMap<bodies.RawBody, dicts.DeepReadonly<bodies.RawBody>>();

/** The deep-frozen copy of a body: made once per body, then shared. */
export function frozenBody(body: bodies.RawBody): dicts.DeepReadonly<bodies.RawBody> {
  let view = frozenBodies.get(body);
  if (view === undefined) {
    view = dicts.frozenCopy(body);
    frozenBodies.set(body, view);
  }
  return view;
}

function refuse(): never {
  throw new TypeError('The body of a daemon or timer is read-only: write to `patch` instead.');
}

/**
 * A read-only object whose properties are read from `current()` at every access (R-KWARGS-8);
 * nested values are frozen snapshots of the newest body at the moment they are read. Every write
 * throws a `TypeError`.
 */
export function liveView(current: () => object): object {
  return new Proxy(
    {},
    {
      get: (_, key) => Reflect.get(current(), key),
      has: (_, key) => Reflect.has(current(), key),
      ownKeys: () => Reflect.ownKeys(current()),
      getOwnPropertyDescriptor: (_, key) => {
        const source = current();
        if (!Object.hasOwn(source, key)) return undefined;
        return { value: Reflect.get(source, key), writable: false, enumerable: true, configurable: true };
      },
      set: refuse,
      defineProperty: refuse,
      deleteProperty: refuse,
      setPrototypeOf: refuse,
    },
  );
}
