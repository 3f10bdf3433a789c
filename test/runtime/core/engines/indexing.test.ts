/**
 * The indexing engine (R-INDEX-1..8): first the pure parts — key encoding, result interpretation,
 * the index table with its reverse index — with plain values; then indices in a real operator
 * serving the devcluster over loopback HTTP (on a `VirtualClock`, so that the delays of temporary
 * errors are exact and nothing waits in real time): pre-created indices, updates and removals, error
 * modes, terse logging, the readiness barrier against a slow listing, and injection by name.
 *
 * Tests know that the operator has processed an object's newest version through an observer (see
 * `virtualtime.ts`): on-event filters run after indexing in the same cycle.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import type { DevCluster } from '../../../../devcluster/testing.js';
import * as clocks from '../../../../runtime/cogs/aio/clocks.js';
import { PermanentError, TemporaryError } from '../../../../runtime/core/actions/errors.js';
import * as logging from '../../../../runtime/core/actions/logging.js';
import { encodeKey, IndexTable, interpretResult } from '../../../../runtime/core/engines/indexing.js';
import type { Index } from '../../../../runtime/core/intents/indices.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import { on } from '../../../../runtime/on.js';
import * as fx from '../../../support/operators.js';
import * as vt from '../../../support/virtualtime.js';
import { IndexKeyError } from '../../../../runtime/core/engines/errors.js';

type Json = Record<string, unknown>;
const PODS = { group: '', version: 'v1', resource: 'pods' } as const;

/** An index's contents as sorted `[encoded key, sorted values]` pairs. */
function contents(index: Index<unknown, unknown> | undefined): [string, unknown[]][] {
  if (!index) throw new Error('No such index.');
  return [...index.entries()].map(([key, store]): [string, unknown[]] => [JSON.stringify(key), [...store].sort()]).sort(([a], [b]) => a.localeCompare(b));
}

/** Entries as the engine keeps them (encoded key → key and value), for `IndexTable.replace()`. */
function entries(pairs: readonly (readonly [unknown, unknown])[]): Map<string, { key: unknown; value: unknown }> {
  return new Map(pairs.map(([key, value]) => [encodeKey(key), { key, value }]));
}

describe('index keys, results and tables (pure)', () => {
  it('R-INDEX-3 keys are encoded by value: composite keys structurally, object keys order-insensitive, types distinct', () => {
    expect(encodeKey(['default', 'web-0'])).toBe(encodeKey(['default', 'web-0']));
    expect(encodeKey(['default', 'web-0'])).not.toBe(encodeKey(['web-0', 'default']));
    expect(encodeKey({ a: 1, b: { c: [1, 2], d: null } })).toBe(encodeKey({ b: { d: null, c: [1, 2] }, a: 1 }));
    expect(encodeKey({ a: 1 })).not.toBe(encodeKey({ a: '1' }));
    expect(encodeKey('1')).not.toBe(encodeKey(1));
    expect(encodeKey(null)).not.toBe(encodeKey('null'));
    expect(encodeKey([['a', 1], true])).toBe(encodeKey([['a', 1], true]));
  });

  it.each([
    ['undefined', undefined],
    ['a function', () => 1],
    ['a symbol', Symbol('key')],
    ['a bigint', 10n],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['a class instance', new Date(0)],
    ['a Map', new Map([['a', 1]])],
    ['an array holding undefined', ['a', undefined]],
    [
      'a circular structure',
      (() => {
        const o: Json = {};
        o['self'] = o;
        return o;
      })(),
    ],
  ])('R-INDEX-3 a key that is not JSON-encodable (%s) is an IndexKeyError', (_title, key) => {
    let thrown: unknown;
    try {
      encodeKey(key);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(IndexKeyError);
    expect((thrown as IndexKeyError).code).toBe('IndexKeyError');
    expect(() => interpretResult(new Map([[key, 'value']]))).toThrow(IndexKeyError);
  });

  it('R-INDEX-3 results: a plain object or Map gives its entries, other values go under null, null/undefined keep the previous values', () => {
    const nested = new Map([['deep', { x: 1 }]]);
    expect([...interpretResult({ alice: 'a', bob: nested })!.values()]).toEqual([
      { key: 'alice', value: 'a' },
      { key: 'bob', value: nested },
    ]);
    expect(interpretResult({ bob: nested })!.get(encodeKey('bob'))!.value).toBe(nested); // values are stored as-is
    expect([...interpretResult(new Map([[['default', 'web-0'], true]]))!.entries()]).toEqual([
      [encodeKey(['default', 'web-0']), { key: ['default', 'web-0'], value: true }],
    ]);
    expect([...interpretResult('scalar')!.values()]).toEqual([{ key: null, value: 'scalar' }]);
    expect([...interpretResult(0)!.values()]).toEqual([{ key: null, value: 0 }]);
    expect([...interpretResult(false)!.values()]).toEqual([{ key: null, value: false }]);
    expect([...interpretResult(['a', 'b'])!.values()]).toEqual([{ key: null, value: ['a', 'b'] }]);
    // Class instances are single values, not maps of their fields.
    const date = new Date(0);
    class Owner {
      constructor(readonly name: string) {}
    }
    expect(interpretResult(date)!.get(encodeKey(null))!.value).toBe(date);
    expect([...interpretResult(new Owner('alice'))!.keys()]).toEqual([encodeKey(null)]);
    expect([...interpretResult(Object.assign(Object.create(null) as object, { k: 1 }))!.values()]).toEqual([{ key: 'k', value: 1 }]);
    expect(interpretResult({})!.size).toBe(0); // an empty result: the object contributes nothing
    expect(interpretResult(null)).toBeNull();
    expect(interpretResult(undefined)).toBeNull();
  });

  it("R-INDEX-2 R-INDEX-4 stores hold every object's value (no deduplication), updates replace an object's keys, empty stores are removed", () => {
    const table = new IndexTable<unknown, unknown>('by_owner');
    table.replace(
      'uid-a',
      entries([
        ['alice', 'a'],
        [['ns', 'x'], 1],
      ]),
    );
    table.replace(
      'uid-b',
      entries([
        ['alice', 'a'],
        ['bob', 'b'],
      ]),
    );
    expect(contents(table)).toEqual([
      ['"alice"', ['a', 'a']],
      ['"bob"', ['b']],
      ['["ns","x"]', [1]],
    ]);
    expect(table.get(['ns', 'x'])?.size).toBe(1); // a fresh array: found by value
    expect(table.has(['x', 'ns'])).toBe(false);
    expect(table.objects).toBe(2);

    table.replace('uid-a', entries([['carol', 'a']])); // a's keys are replaced: alice loses a's value, ns/x is gone
    expect(contents(table)).toEqual([
      ['"alice"', ['a']],
      ['"bob"', ['b']],
      ['"carol"', ['a']],
    ]);
    table.remove('uid-b');
    expect(contents(table)).toEqual([['"carol"', ['a']]]);
    expect(table.has('alice')).toBe(false);
    expect(table.get('bob')).toBeUndefined();
    table.replace('uid-a', entries([]));
    expect(table.size).toBe(0);
    expect(table.objects).toBe(0);
    table.remove('uid-unknown'); // nothing to remove: no error
    // Lookups with keys that cannot be encoded find nothing (they do not throw).
    expect(table.get(Symbol('x') as unknown)).toBeUndefined();
    expect(table.has(() => 1)).toBe(false);
  });

  it('R-INDEX-2 per-object updates, removals and lookups take the same number of map operations for 10 or 10,000 objects', () => {
    /** Map operations (get/set/has/delete) made by `work` on a table of `n` objects. */
    const operations = (n: number, work: (table: IndexTable<unknown, unknown>) => void): number => {
      const table = new IndexTable<unknown, unknown>('by_group');
      for (let i = 0; i < n; i += 1)
        table.replace(
          `uid-${i}`,
          entries([
            [`group-${i % 3}`, i],
            [['pair', i], i],
          ]),
        );
      const spies = (['get', 'set', 'has', 'delete'] as const).map((method) => vi.spyOn(Map.prototype, method));
      const setSpies = (['add', 'has', 'delete'] as const).map((method) => vi.spyOn(Set.prototype, method));
      try {
        work(table);
        return [...spies, ...setSpies].reduce((sum, spy) => sum + spy.mock.calls.length, 0);
      } finally {
        for (const spy of [...spies, ...setSpies]) spy.mockRestore();
      }
    };
    const update = (table: IndexTable<unknown, unknown>): void =>
      table.replace(
        'uid-7',
        entries([
          ['group-9', 7],
          [['pair', 7], 8],
        ]),
      );
    const remove = (table: IndexTable<unknown, unknown>): void => table.remove('uid-7');
    const lookup = (table: IndexTable<unknown, unknown>): void => {
      table.get(['pair', 7]);
      table.has('group-1');
    };
    for (const work of [update, remove, lookup]) {
      const small = operations(10, work);
      expect(small).toBeGreaterThan(0);
      expect(operations(10_000, work)).toBe(small);
    }
  });
});

describe('indices in an operator', () => {
  let cluster: DevCluster;
  let op: vt.VirtualOperator | undefined;
  const logs = new fx.LogCapture();
  beforeEach(async () => {
    cluster = await fx.startCluster();
    logs.install();
    op = undefined;
  });
  afterEach(async () => {
    if (op && !op.stopped) await op.stop();
    logs.uninstall();
    await cluster.stop();
  });

  const start = async (
    registry: OperatorRegistry,
    options: { configure?: Parameters<typeof vt.virtualSettings>[0]; watches?: string | false; clock?: clocks.VirtualClock } = {},
  ): Promise<vt.VirtualOperator> => {
    op = await vt.startVirtual({ cluster, registry, settings: vt.virtualSettings(options.configure), watches: options.watches, clock: options.clock });
    return op;
  };
  const index = (name: string): Index<unknown, unknown> => op!.context.indices!.table(name)!;
  const kex = async (name: string, extra: Json = {}): Promise<void> => {
    await cluster.store.create(fx.kopfExample(name, extra));
  };
  const patch = async (name: string, body: Json): Promise<void> => {
    await cluster.store.patch(fx.KEX, name, body, { namespace: 'default', type: 'merge-patch' });
  };
  const remove = async (name: string): Promise<void> => {
    await cluster.store.delete(fx.KEX, name, { namespace: 'default' });
  };
  const pod = async (name: string, options: { namespace?: string; labels?: Record<string, string>; phase?: string } = {}): Promise<void> => {
    const namespace = options.namespace ?? 'default';
    await cluster.store.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace, labels: options.labels ?? {} },
      spec: { containers: [{ name: 'main', image: 'busybox' }] },
    });
    if (options.phase) await cluster.store.patch(PODS, name, { status: { phase: options.phase } }, { namespace, subresource: 'status', type: 'merge-patch' });
  };
  /** Virtual milliseconds since the start. */
  const now = (): number => op!.clock.now() - vt.EPOCH;

  it('R-INDEX-1 indices are named by the handler id (no field suffix) and exist empty from the start: startup handlers see them', async () => {
    const registry = new OperatorRegistry();
    on.index('kopfexamples', { registry, field: 'spec.field' }, function by_field({ spec, name }) {
      return { [String(spec['field'])]: name };
    });
    on.index('kopfexamples', { registry, id: 'named' }, ({ name }) => name);
    const seen: { name: string; size: number; index: unknown }[] = [];
    on.startup({ registry }, function peek(args) {
      for (const name of ['by_field', 'named']) {
        const found = (args as unknown as Record<string, Index<unknown, unknown>>)[name]!;
        seen.push({ name, size: found.size, index: found });
      }
    });
    expect(registry.indexNames()).toEqual(['by_field', 'named']);
    await kex('kex-a'); // exists before the operator starts: listed, indexed after the startup
    await start(registry);
    expect(seen.map(({ name, size }) => [name, size])).toEqual([
      ['by_field', 0],
      ['named', 0],
    ]);
    // The very objects the startup handler got are the live indices.
    await fx.eventually(() => index('by_field').size === 1 && index('named').size === 1, 'the indices to fill');
    expect(seen[0]!.index).toBe(index('by_field'));
    expect(seen[1]!.index).toBe(index('named'));
    expect(contents(index('by_field'))).toEqual([['"value"', ['kex-a']]]);
    expect(contents(index('named'))).toEqual([['null', ['kex-a']]]);
  });

  it('R-INDEX-2 R-INDEX-3 results of every object: plain objects, Maps with tuple keys, single values under null; null keeps the previous values; empty stores go', async () => {
    const registry = new OperatorRegistry();
    const observer = new vt.Observer(registry);
    on.index('kopfexamples', { registry }, function by_owner({ spec, name }) {
      return { [String(spec['owner'])]: name };
    });
    on.index('kopfexamples', { registry }, function by_pair({ namespace, name, spec }) {
      return new Map([[[namespace, name], spec['size']]]);
    });
    on.index('kopfexamples', { registry }, function sizes({ spec }) {
      return spec['size'];
    });
    on.index('kopfexamples', { registry }, function skippable({ spec, name }) {
      return spec['skip'] ? null : { [String(spec['field'])]: name };
    });
    await start(registry);
    await kex('kex-a', { spec: { owner: 'alice', size: 1, field: 'one' } });
    await kex('kex-b', { spec: { owner: 'alice', size: 1, field: 'two' } });
    await kex('kex-c', { spec: { owner: 'bob', size: 3, field: 'three' } });
    for (const name of ['kex-a', 'kex-b', 'kex-c']) await observer.caughtUp(cluster, name);
    expect(contents(index('by_owner'))).toEqual([
      ['"alice"', ['kex-a', 'kex-b']],
      ['"bob"', ['kex-c']],
    ]);
    expect([...index('by_pair').get(['default', 'kex-c'])!]).toEqual([3]); // looked up by value
    expect(index('by_pair').has(['kex-c', 'default'])).toBe(false);
    expect(contents(index('sizes'))).toEqual([['null', [1, 1, 3]]]); // no deduplication
    expect(contents(index('skippable'))).toEqual([
      ['"one"', ['kex-a']],
      ['"three"', ['kex-c']],
      ['"two"', ['kex-b']],
    ]);

    await patch('kex-a', { spec: { skip: true, field: 'changed' } }); // null: kex-a's previous values stay
    await patch('kex-c', { spec: { owner: 'carol' } }); // bob's only contributor moves: the key goes
    await observer.caughtUp(cluster, 'kex-a');
    await observer.caughtUp(cluster, 'kex-c');
    expect(contents(index('skippable'))).toEqual([
      ['"one"', ['kex-a']],
      ['"three"', ['kex-c']],
      ['"two"', ['kex-b']],
    ]);
    expect(contents(index('by_owner'))).toEqual([
      ['"alice"', ['kex-a', 'kex-b']],
      ['"carol"', ['kex-c']],
    ]);
    expect(index('by_owner').has('bob')).toBe(false);
  });

  it("R-INDEX-4 an update replaces the object's keys; a filter mismatch and a deletion remove its values", async () => {
    const registry = new OperatorRegistry();
    const observer = new vt.Observer(registry);
    on.index('kopfexamples', { registry, labels: { indexed: 'yes' } }, function by_field({ spec, name }) {
      return { [String(spec['field'])]: name };
    });
    await start(registry);
    await kex('kex-a', { metadata: { labels: { indexed: 'yes' } } });
    await kex('kex-b', { metadata: { labels: { indexed: 'yes' } } });
    await observer.caughtUp(cluster, 'kex-a');
    await observer.caughtUp(cluster, 'kex-b');
    expect(contents(index('by_field'))).toEqual([['"value"', ['kex-a', 'kex-b']]]);
    await patch('kex-a', { spec: { field: 'other' } });
    await observer.caughtUp(cluster, 'kex-a');
    expect(contents(index('by_field'))).toEqual([
      ['"other"', ['kex-a']],
      ['"value"', ['kex-b']],
    ]);
    await patch('kex-a', { metadata: { labels: { indexed: null } } });
    await observer.caughtUp(cluster, 'kex-a');
    expect(contents(index('by_field'))).toEqual([['"value"', ['kex-b']]]);
    await patch('kex-a', { metadata: { labels: { indexed: 'yes' } } });
    await observer.caughtUp(cluster, 'kex-a');
    expect(contents(index('by_field'))).toEqual([
      ['"other"', ['kex-a']],
      ['"value"', ['kex-b']],
    ]);
    await remove('kex-b');
    await fx.eventually(() => !index('by_field').has('value'), 'kex-b to leave the index');
    expect(contents(index('by_field'))).toEqual([['"other"', ['kex-a']]]);
  });

  describe('R-INDEX-5 errors', () => {
    it('R-INDEX-5 IGNORED (the default): a plain error or a key that is not JSON-encodable keeps the previous values', async () => {
      const registry = new OperatorRegistry();
      const observer = new vt.Observer(registry);
      on.index('kopfexamples', { registry }, function by_field({ spec, name }) {
        if (spec['field'] === 'boom') throw new Error('Boom.');
        if (spec['field'] === 'badkey') return new Map([[Symbol('key'), name]]);
        return { [String(spec['field'])]: name };
      });
      await start(registry);
      await kex('kex-a');
      await observer.caughtUp(cluster, 'kex-a');
      expect(contents(index('by_field'))).toEqual([['"value"', ['kex-a']]]);
      await patch('kex-a', { spec: { field: 'boom' } });
      await observer.caughtUp(cluster, 'kex-a');
      expect(contents(index('by_field'))).toEqual([['"value"', ['kex-a']]]);
      expect(logs.grep("[default/kex-a] Indexer 'by_field' failed with an exception and will ignore it: Boom.", fx.ERROR)).toHaveLength(1);
      await patch('kex-a', { spec: { field: 'badkey' } });
      await observer.caughtUp(cluster, 'kex-a');
      expect(contents(index('by_field'))).toEqual([['"value"', ['kex-a']]]);
      expect(
        logs.grep("[default/kex-a] Indexer 'by_field' failed with an exception and will ignore it: Index keys must be JSON-encodable", fx.ERROR),
      ).toHaveLength(1);
      await patch('kex-a', { spec: { field: 'fine' } });
      await observer.caughtUp(cluster, 'kex-a');
      expect(contents(index('by_field'))).toEqual([['"fine"', ['kex-a']]]);
    });

    it.each([
      [
        'errors=TEMPORARY with backoff',
        { errors: 'TEMPORARY', backoff: 10 },
        () => {
          throw new Error('Not now.');
        },
        undefined,
      ],
      [
        'a TemporaryError with a delay',
        {},
        () => {
          throw new TemporaryError('Not now.', { delay: 10 });
        },
        undefined,
      ],
      [
        'errors=TEMPORARY with the default backoff',
        { errors: 'TEMPORARY' },
        () => {
          throw new Error('Not now.');
        },
        10,
      ],
    ] as const)(
      'R-INDEX-5 %s: the values go, and the object is skipped until its first event after the delay',
      async (_title, options, fail, defaultBackoff) => {
        const registry = new OperatorRegistry();
        const observer = new vt.Observer(registry);
        const calls: string[] = [];
        on.index('kopfexamples', { registry, ...options }, function by_field({ spec, name }) {
          calls.push(`${String(spec['field'])}@${now()}`);
          if (spec['field'] === 'bad') fail();
          return { [String(spec['field'])]: name };
        });
        await start(registry, {
          configure: (s) => {
            if (defaultBackoff !== undefined) s.execution.defaultBackoff = defaultBackoff;
          },
        });
        const sync = (): Promise<void> => observer.caughtUp(cluster, 'kex-a');
        await kex('kex-a');
        await sync();
        expect(contents(index('by_field'))).toEqual([['"value"', ['kex-a']]]);
        await patch('kex-a', { spec: { field: 'bad' } });
        await sync();
        expect(contents(index('by_field'))).toEqual([]); // removed at once
        await vt.runTo(op!, vt.EPOCH + 5000, sync);
        await patch('kex-a', { spec: { field: 'early' } }); // within the delay: not indexed
        await sync();
        expect(contents(index('by_field'))).toEqual([]);
        await vt.runTo(op!, vt.EPOCH + 10_500, sync);
        expect(contents(index('by_field'))).toEqual([]); // nothing re-indexes it without an event
        await patch('kex-a', { spec: { field: 'later' } }); // the first event after the delay
        await sync();
        expect(contents(index('by_field'))).toEqual([['"later"', ['kex-a']]]);
        expect(calls).toEqual(['value@0', 'bad@0', 'later@10500']);
      },
    );

    it.each([
      [
        'errors=PERMANENT',
        { errors: 'PERMANENT' },
        () => {
          throw new Error('Never.');
        },
        1,
      ],
      [
        'a PermanentError',
        {},
        () => {
          throw new PermanentError('Never.');
        },
        1,
      ],
      [
        'exhausted retries',
        { retries: 2, backoff: 1 },
        () => {
          throw new TemporaryError('Not now.', { delay: 1 });
        },
        2,
      ],
    ] as const)(
      'R-INDEX-5 %s: the values go, and the object is excluded from the index until the operator restarts',
      async (_title, options, fail, failures) => {
        const registry = new OperatorRegistry();
        const observer = new vt.Observer(registry);
        const calls: string[] = [];
        on.index('kopfexamples', { registry, ...options }, function by_field({ spec, name }) {
          calls.push(`${name}:${String(spec['field'])}`);
          if (spec['field'] === 'bad') fail();
          return { [String(spec['field'])]: name };
        });
        await start(registry);
        const sync = async (): Promise<void> => {
          await observer.caughtUp(cluster, 'kex-a');
          await observer.caughtUp(cluster, 'kex-b');
        };
        await kex('kex-a');
        await kex('kex-b');
        await sync();
        await patch('kex-a', { spec: { field: 'bad' } });
        await sync();
        for (let attempt = 1; attempt < failures; attempt += 1) {
          await vt.runTo(op!, op!.clock.now() + 2000, sync); // past the retry delay, the next event fails again
          await patch('kex-a', { spec: { attempt } });
          await sync();
        }
        expect(calls.filter((call) => call === 'kex-a:bad')).toHaveLength(failures);
        expect(contents(index('by_field'))).toEqual([['"value"', ['kex-b']]]);
        const before = calls.length;
        await vt.runTo(op!, op!.clock.now() + 60_000, sync);
        await patch('kex-a', { spec: { field: 'good' } });
        await patch('kex-b', { spec: { field: 'fine' } });
        await sync();
        expect(calls.slice(before)).toEqual(['kex-b:fine']); // kex-a is not indexed any more, kex-b is
        expect(contents(index('by_field'))).toEqual([['"fine"', ['kex-b']]]);

        await op!.stop();
        calls.length = 0;
        await start(registry);
        await sync();
        await fx.eventually(() => index('by_field').size === 2, 'both objects indexed after the restart');
        expect(contents(index('by_field'))).toEqual([
          ['"fine"', ['kex-b']],
          ['"good"', ['kex-a']],
        ]);
      },
    );

    it('R-INDEX-5 a success resets the error state: retries count from zero again', async () => {
      const registry = new OperatorRegistry();
      const observer = new vt.Observer(registry);
      const calls: string[] = [];
      on.index('kopfexamples', { registry, errors: 'TEMPORARY', retries: 2, backoff: 1 }, function by_field({ spec, name, retry }) {
        calls.push(`${String(spec['field'])}#${retry}`);
        if (String(spec['field']).startsWith('bad')) throw new Error('Not now.');
        return { [String(spec['field'])]: name };
      });
      await start(registry);
      const sync = (): Promise<void> => observer.caughtUp(cluster, 'kex-a');
      await kex('kex-a', { spec: { field: 'bad1' } });
      await sync();
      for (const [at, field] of [
        [2000, 'good1'],
        [4000, 'bad2'],
        [6000, 'good2'],
      ] as const) {
        await vt.runTo(op!, vt.EPOCH + at, sync);
        await patch('kex-a', { spec: { field } });
        await sync();
      }
      // With two retries allowed, a second failure in a row would exclude the object for good;
      // the success in between makes `bad2` a first failure again.
      expect(calls).toEqual(['bad1#0', 'good1#1', 'bad2#0', 'good2#1']);
      expect(contents(index('by_field'))).toEqual([['"good2"', ['kex-a']]]);
      expect(logs.grep('would exceed 2 retries')).toEqual([]);
    });
  });

  it.each([
    ['default', {}, { info: false, debug: false }],
    ['verbose', { verbose: true }, { info: true, debug: false }],
    ['debug', { debug: true }, { info: true, debug: true }],
  ] as const)(
    'R-INDEX-6 indexing logs tersely (%s mode): INFO only when verbose, DEBUG only in debug mode, never as k8s-events',
    async (_mode, options, shown) => {
      const registry = new OperatorRegistry();
      const observer = new vt.Observer(registry);
      on.index('kopfexamples', { registry }, function by_field({ spec, name, logger }) {
        logger.debug('Indexer says debug.');
        logger.info('Indexer says info.');
        logger.warning('Indexer says warning.');
        return { [String(spec['field'])]: name };
      });
      on.create('kopfexamples', { registry }, function create_fn({ logger }) {
        logger.info('Create handler says info.');
      });
      const lines: { level: number; message: string }[] = [];
      logs.uninstall();
      logging.configure(options);
      const restore = logging.setLogSink((_line, record) => {
        lines.push({ level: record.level, message: record.message });
      });
      try {
        await start(registry, {
          configure: (s) => {
            s.posting.enabled = true;
            s.posting.loggers = true;
            s.posting.level = 10;
          },
        });
        await kex('kex-a');
        await observer.caughtUp(cluster, 'kex-a');
        await fx.eventually(
          () => lines.some((l) => l.message === "Handler 'create_fn' succeeded." || l.message === 'Create handler says info.'),
          'the create handler',
        );
        await vt.runTo(op!, vt.EPOCH + 10_000, () => observer.caughtUp(cluster, 'kex-a')); // the poster's batches go out
        await fx.eventually(
          () => cluster.store.list({ group: '', version: 'v1', resource: 'events' }, 'default').some((e) => e['message'] === 'Create handler says info.'),
          "the create handler's k8s-event",
        );
        await op!.stop();
      } finally {
        restore();
        logging.configure({});
      }
      /** The levels a message was shown at (the indexer runs for every event of the object). */
      const levels = (message: string): number[] => [...new Set(lines.filter((l) => l.message === message).map((l) => l.level))];
      expect(levels('Indexer says warning.')).toEqual([fx.WARNING]);
      expect(levels('Indexer says info.')).toEqual(shown.info ? [fx.DEBUG] : []); // shown as DEBUG, in verbose mode only
      expect(levels('Indexer says debug.')).toEqual(shown.debug ? [fx.DEBUG] : []);
      expect(levels("Indexer 'by_field' succeeded.")).toEqual(shown.info ? [fx.DEBUG] : []);
      expect(levels("Indexer 'by_field' is invoked.")).toEqual(shown.debug ? [fx.DEBUG] : []);
      expect(levels('Create handler says info.')).toEqual([fx.INFO]); // a handler's logger is not terse
      const posted = cluster.store.list({ group: '', version: 'v1', resource: 'events' }, 'default').map((e) => String(e['message']));
      expect(posted).toContain('Create handler says info.');
      expect(posted.filter((m) => m.includes('Indexer'))).toEqual([]);
    },
  );

  it('R-INDEX-7 no handler of any resource runs before the listing of the indexed resource is fully indexed; startup handlers are not blocked; later objects block nothing', async () => {
    const clock = new clocks.VirtualClock({ start: vt.EPOCH });
    const registry = new OperatorRegistry();
    const sequence: string[] = [];
    const note = (what: string): void => {
      sequence.push(`${what}@${clock.now() - vt.EPOCH}`);
    };
    let release4 = (): void => undefined;
    const pod4 = new Promise<void>((resolve) => {
      release4 = resolve;
    });
    on.index('pods', { registry }, async function pod_names({ name }) {
      note(`index:${name}`);
      if (name === 'pod-3') await clock.sleep(5000); // slow indexing of the last listed pod
      if (name === 'pod-4') await pod4; // a pod appearing later: its indexing never finishes on its own
      note(`indexed:${name}`);
      return name;
    });
    on.startup({ registry }, function startup_fn(args) {
      note(`startup:${(args as unknown as { pod_names: Index<null, string> }).pod_names.size}`);
    });
    on.event('pods', { registry }, function pod_event({ name }) {
      note(`pod-event:${name}`);
    });
    on.event('kopfexamples', { registry }, function kex_event({ name }) {
      note(`event:${name}`);
    });
    on.create('kopfexamples', { registry }, function kex_create({ name }) {
      note(`create:${name}`);
    });
    on.daemon('kopfexamples', { registry }, async function kex_daemon({ name, stopped }) {
      note(`daemon:${name}`);
      await stopped.wait();
    });
    on.timer('kopfexamples', { registry, interval: 60 }, function kex_timer({ name }) {
      note(`timer:${name}`);
    });
    for (const name of ['pod-1', 'pod-2', 'pod-3']) await pod(name);
    await kex('kex-1');
    // The devcluster answers the listing of pods slowly.
    cluster.faults.add({ resource: 'pods', verb: 'list', times: 1, action: { delay: { beforeMs: 1000 } } });
    await start(registry, { clock, watches: 'kopfexamples' });
    await fx.eventually(() => sequence.includes('index:pod-3@0'), 'the slow indexing to start');
    await clock.advance(5000);
    await fx.eventually(
      () => ['event', 'create', 'daemon', 'timer'].every((kind) => sequence.some((s) => s.startsWith(`${kind}:kex-1@`))),
      'the handlers of kex-1',
    );
    await fx.eventually(() => sequence.filter((s) => s.startsWith('pod-event:')).length === 3, 'the on-event handlers of pods');

    const opened = sequence.indexOf('indexed:pod-3@5000');
    expect(opened).toBeGreaterThan(0);
    expect(sequence[0]).toBe('startup:0@0'); // startup ran first, with an empty index
    for (const name of ['pod-1', 'pod-2']) expect(sequence.indexOf(`indexed:${name}@0`)).toBeGreaterThan(0);
    const handlers = sequence.filter((s) => /^(event|create|daemon|timer|pod-event):/.test(s));
    expect(new Set(handlers.map((entry) => entry.split('@')[0]))).toEqual(
      new Set(['event:kex-1', 'create:kex-1', 'daemon:kex-1', 'timer:kex-1', 'pod-event:pod-1', 'pod-event:pod-2', 'pod-event:pod-3']),
    );
    for (const entry of handlers) expect(sequence.indexOf(entry)).toBeGreaterThan(opened);
    expect(handlers.every((entry) => entry.endsWith('@5000'))).toBe(true);

    // Objects appearing later block nothing: kex-2 is handled while pod-4 is still being indexed.
    await pod('pod-4');
    await fx.eventually(() => sequence.some((s) => s.startsWith('index:pod-4')), 'the indexing of pod-4');
    await kex('kex-2');
    await fx.eventually(
      () => ['event', 'create', 'daemon', 'timer'].every((kind) => sequence.some((s) => s.startsWith(`${kind}:kex-2@`))),
      'the handlers of kex-2',
    );
    expect(sequence.some((s) => s.startsWith('indexed:pod-4'))).toBe(false);
    release4();
    await fx.eventually(() => sequence.some((s) => s.startsWith('indexed:pod-4')), 'pod-4 indexed');
  });

  it('R-INDEX-8 indices are injected by name into every handler, overriding built-in arguments of the same name (`spec`, `name`)', async () => {
    const registry = new OperatorRegistry();
    // Indexers see the indices too (so an index named `name` hides `name` from them as well).
    on.index('kopfexamples', { registry, id: 'spec' }, ({ meta }) => ({ [String(meta['name'])]: 'from spec' }));
    on.index('kopfexamples', { registry, id: 'name' }, ({ meta }) => ({ [String(meta['name'])]: 'from name' }));
    const got: Record<string, { spec: unknown; name: unknown; meta?: unknown }> = {};
    const keep =
      (kind: string) =>
      (args: object): void => {
        const { spec, name, meta } = args as { spec: unknown; name: unknown; meta?: { name?: unknown } };
        got[kind] ??= { spec, name, meta: meta?.name };
      };
    on.startup({ registry }, function startup_fn(args) {
      keep('startup')(args);
    });
    on.event('kopfexamples', { registry }, function event_fn(args) {
      keep('event')(args);
    });
    on.create('kopfexamples', { registry }, function create_fn(args) {
      keep('create')(args);
    });
    on.timer('kopfexamples', { registry, interval: 60 }, function timer_fn(args) {
      keep('timer')(args);
    });
    on.daemon('kopfexamples', { registry }, async function daemon_fn(args) {
      keep('daemon')(args);
      await args.stopped.wait();
    });
    await start(registry);
    await kex('kex-a');
    await fx.eventually(() => ['startup', 'event', 'create', 'timer', 'daemon'].every((kind) => got[kind] !== undefined), 'all handlers');
    for (const kind of ['startup', 'event', 'create', 'timer', 'daemon']) {
      expect(got[kind]!.spec).toBe(index('spec'));
      expect(got[kind]!.name).toBe(index('name'));
    }
    expect(got['create']!.meta).toBe('kex-a'); // other built-in arguments are untouched
    expect(contents(index('spec'))).toEqual([['"kex-a"', ['from spec']]]);
    expect(contents(index('name'))).toEqual([['"kex-a"', ['from name']]]);
  });
});
