// Type-level tests of typed indices (R-INDEX-2/3/8): `IndexOf<typeof fn>` turns an index
// function's return type into the index's key and value types, and augmenting `OperatorIndices`
// puts the index into every handler's arguments by name — with no casts where it is looked up.
// `tsc` checks this file in `npm test`; vitest runs it too, so every registration here is real (into
// a private registry), and the runtime index tables are checked against the public `Index` shape.
import { describe, expect, expectTypeOf, it } from 'vitest';

import { IndexTable } from '../../../runtime/core/engines/indexing.js';
import { on, OperatorRegistry, resource } from '../../../runtime/index.js';
import type { Index, IndexOf, IndexOfResult, ObjectMeta, Store } from '../../../runtime/index.js';

interface GadgetSpec {
  owner: string;
  size: number;
  tags?: string[];
}
interface Gadget {
  apiVersion?: 'example.com/v1';
  kind?: 'Gadget';
  metadata?: ObjectMeta;
  spec: GadgetSpec;
  status?: { ready?: boolean };
}

const Gadgets = resource<Gadget>({ group: 'example.com', version: 'v1', plural: 'gadgets', kind: 'Gadget', namespaced: true });
const registry = new OperatorRegistry();

// Index functions of every result shape, registered for real; `on.index` keeps each function's type.
// The ids are explicit: vitest's transform renames a function expression named like the constant it
// is assigned to (`typeTestGadgetsByOwner2`), and the index name is the id.
const typeTestGadgetsByOwner = on.index(Gadgets, { registry, id: 'typeTestGadgetsByOwner' }, function typeTestGadgetsByOwner({ spec, name }) {
  return { [spec.owner]: name };
});
const typeTestGadgetsByPair = on.index(Gadgets, { registry, id: 'typeTestGadgetsByPair' }, function typeTestGadgetsByPair({ namespace, name, spec }) {
  return new Map([[[namespace ?? '', name] as [string, string], spec.size]]);
});
const typeTestGadgetSizes = on.index(Gadgets, { registry, id: 'typeTestGadgetSizes' }, function typeTestGadgetSizes({ spec }) {
  return spec.size;
});
const typeTestGadgetTags = on.index(Gadgets, { registry, id: 'typeTestGadgetTags' }, async function typeTestGadgetTags({ spec, name }) {
  if (!spec.tags) return null; // keep the previous values: not part of the index's type
  return new Map(spec.tags.map((tag) => [tag, { name, size: spec.size }] as const));
});

// Augmentation is program-wide: optional entries with distinctive names keep it harmless for the
// other files of the program (handlers elsewhere simply see `undefined`-able extra arguments).
declare module '../../../runtime/index.js' {
  interface OperatorIndices {
    typeTestGadgetsByOwner?: IndexOf<typeof typeTestGadgetsByOwner>;
    typeTestGadgetsByPair?: IndexOf<typeof typeTestGadgetsByPair>;
    typeTestGadgetSizes?: IndexOf<typeof typeTestGadgetSizes>;
    typeTestGadgetTags?: IndexOf<typeof typeTestGadgetTags>;
  }
}

describe('typed indices', () => {
  it('R-INDEX-3 IndexOf: a plain object result gives Index<string, V>', () => {
    expectTypeOf<IndexOf<typeof typeTestGadgetsByOwner>>().toEqualTypeOf<Index<string, string>>();
    expectTypeOf<IndexOfResult<Record<string, boolean>>>().toEqualTypeOf<Index<string, boolean>>();
  });

  it('R-INDEX-3 IndexOf: a Map with tuple keys gives Index<[K1, K2], V>', () => {
    expectTypeOf<IndexOf<typeof typeTestGadgetsByPair>>().toEqualTypeOf<Index<[string, string], number>>();
    expectTypeOf<IndexOfResult<ReadonlyMap<readonly [string | null, string], boolean>>>().toEqualTypeOf<Index<readonly [string | null, string], boolean>>();
  });

  it('R-INDEX-3 IndexOf: a single value gives Index<null, R> (arrays too)', () => {
    expectTypeOf<IndexOf<typeof typeTestGadgetSizes>>().toEqualTypeOf<Index<null, number>>();
    expectTypeOf<IndexOfResult<string[]>>().toEqualTypeOf<Index<null, string[]>>();
    expectTypeOf<IndexOfResult<'on' | 'off'>>().toEqualTypeOf<Index<null, 'on' | 'off'>>();
  });

  it('R-INDEX-3 IndexOf: async functions are awaited, and null/undefined results (keep the previous values) do not count', () => {
    expectTypeOf<IndexOf<typeof typeTestGadgetTags>>().toEqualTypeOf<Index<string, { readonly name: string; readonly size: number }>>();
    expectTypeOf<IndexOfResult<Promise<{ [key: string]: number } | undefined>>>().toEqualTypeOf<Index<string, number>>();
    expectTypeOf<IndexOfResult<null>>().toEqualTypeOf<Index<never, never>>();
  });

  it("R-INDEX-2 the engine's tables are indices of the public shape", () => {
    const table = new IndexTable<[string, string], number>('typeTestGadgetsByPair');
    expectTypeOf(table).toMatchTypeOf<Index<[string, string], number>>();
    expectTypeOf(table.get(['default', 'g'])).toEqualTypeOf<Store<number> | undefined>();
    expect(registry.indexNames()).toEqual(['typeTestGadgetsByOwner', 'typeTestGadgetsByPair', 'typeTestGadgetSizes', 'typeTestGadgetTags']);
  });

  it('R-INDEX-8 indices are typed in the arguments of every kind of handler by name, with no casts at lookups', () => {
    on.create(Gadgets, { registry, id: 'created' }, ({ typeTestGadgetsByOwner: byOwner, typeTestGadgetsByPair: byPair, spec }) => {
      expectTypeOf(byOwner).toEqualTypeOf<Index<string, string> | undefined>();
      const names: string[] = [...(byOwner?.get(spec.owner) ?? [])];
      const size: number | undefined = [...(byPair?.get(['default', 'gadget-1']) ?? [])][0];
      void names;
      void size;
      // @ts-expect-error: the owners index is keyed by strings
      byOwner?.get(42);
      // @ts-expect-error: the pairs index is keyed by [namespace, name] tuples
      byPair?.get(['default']);
      // @ts-expect-error: its values are numbers
      const wrong: string | undefined = [...(byPair?.get(['default', 'gadget-1']) ?? [])][0];
      void wrong;
    });
    on.timer(Gadgets, { registry, id: 'ticked', interval: 10 }, ({ typeTestGadgetSizes: sizes, typeTestGadgetTags: tags, patch }) => {
      expectTypeOf(sizes?.get(null)).toEqualTypeOf<Store<number> | undefined>();
      // @ts-expect-error: a single-value index has only the key null
      sizes?.get('total');
      for (const [tag, store] of tags ?? []) {
        expectTypeOf(tag).toEqualTypeOf<string>();
        for (const { name, size } of store) patch.status.ready = name !== '' && size > 0 && tag !== '';
      }
    });
    on.daemon(Gadgets, { registry, id: 'watched' }, async ({ typeTestGadgetsByOwner: byOwner, stopped }) => {
      expectTypeOf(byOwner?.keys()).toEqualTypeOf<IterableIterator<string> | undefined>();
      await stopped.wait(1);
    });
    on.event(Gadgets, { registry, id: 'seen' }, ({ typeTestGadgetsByPair: byPair }) => {
      expectTypeOf(byPair?.has(['default', 'gadget-1'])).toEqualTypeOf<boolean | undefined>();
    });
    on.startup({ registry }, function typeTestStartup({ typeTestGadgetsByOwner: byOwner }) {
      expectTypeOf(byOwner?.size).toEqualTypeOf<number | undefined>();
    });
    // Index functions see the indices as well.
    on.index(Gadgets, { registry, id: 'typeTestDerived' }, ({ typeTestGadgetsByOwner: byOwner, name }) => {
      expectTypeOf(byOwner).toEqualTypeOf<Index<string, string> | undefined>();
      return name;
    });
    expect(registry.handlers.filter((h) => ['created', 'ticked', 'watched', 'seen', 'typeTestDerived'].includes(h.id))).toHaveLength(5);
  });
});
