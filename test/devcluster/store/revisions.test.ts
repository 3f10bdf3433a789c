import { describe, expect, it } from 'vitest';
import * as revisions from '../../../devcluster/store/revisions.js';
import type * as json from '../../../devcluster/json.js';

const obj = (name: string, extra: Record<string, unknown> = {}): json.JsonObject => ({ metadata: { name }, ...extra });

/** The keys a list must return: every stored key with the prefix, in byte order. */
function expectedKeys(present: Set<string>, prefix = ''): string[] {
  return [...present].filter((k) => k.startsWith(prefix)).sort(revisions.compareKeys);
}

/** A small seeded generator, so the interleavings are random but repeatable. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

describe('sorted reads', () => {
  it('D-VERB-5 lists stay in key order while objects are created, modified and deleted between lists', () => {
    const store = new revisions.Store();
    const present = new Set<string>();
    const next = random(7);
    for (let round = 0; round < 200; round++) {
      const writes = Math.floor(next() * 20);
      for (let w = 0; w < writes; w++) {
        const key = revisions.objectKey(next() < 0.5 ? 'a' : 'b', `n${Math.floor(next() * 60)}`);
        if (present.has(key) && next() < 0.4) {
          store.write('things', key, undefined);
          present.delete(key);
        } else {
          store.write('things', key, obj(key, { round }));
          present.add(key);
        }
      }
      const prefix = next() < 0.5 ? '' : revisions.objectKey('a', '');
      const listed = store.entries('things', prefix);
      expect(listed.map((e) => e.key)).toEqual(expectedKeys(present, prefix));
      for (const e of listed) expect(e.object).toBe(store.get('things', e.key));
    }
  });

  it('D-VERB-5 a key deleted and created again between two lists is listed once', () => {
    const store = new revisions.Store();
    store.write('s', 'b', obj('b'));
    store.write('s', 'a', obj('a'));
    expect(store.list('s').map((o) => (o['metadata'] as { name: string }).name)).toEqual(['a', 'b']);
    store.write('s', 'b', undefined);
    store.write('s', 'b', obj('b'));
    store.write('s', 'c', obj('c'));
    store.write('s', 'c', undefined);
    expect(store.entries('s').map((e) => e.key)).toEqual(['a', 'b']);
  });

  it('prefix reads return only the keys of that namespace, sorted', () => {
    const store = new revisions.Store();
    for (const ns of ['kube-public', 'default', 'kube-system']) {
      for (const name of ['z', 'a', 'm']) store.write('cm', revisions.objectKey(ns, name), obj(name));
    }
    expect(store.entries('cm', revisions.objectKey('kube-public', '')).map((e) => e.key)).toEqual([
      'kube-public\u0000a',
      'kube-public\u0000m',
      'kube-public\u0000z',
    ]);
    expect(store.entries('cm', revisions.objectKey('nothing', ''))).toEqual([]);
    expect(store.entries('missing')).toEqual([]);
  });

  it('a dropped storage starts over empty', () => {
    const store = new revisions.Store();
    store.write('s', 'a', obj('a'));
    expect(store.list('s')).toHaveLength(1);
    store.dropStorage('s');
    expect(store.list('s')).toEqual([]);
    store.write('s', 'b', obj('b'));
    expect(store.entries('s').map((e) => e.key)).toEqual(['b']);
  });
});

describe('history retention', () => {
  it('D-GEN-8 the history keeps exactly the last historyLimit changes however many writes happen', () => {
    const limit = 50;
    const store = new revisions.Store({ historyLimit: limit });
    for (let i = 0; i < 5000; i++) {
      store.write('s', `k${i % 7}`, obj(`k${i % 7}`, { i }));
      if (i % 97 === 0 || i > 4990) {
        const retained = Math.min(limit, i + 1);
        expect(store.compaction).toBe(store.revision - retained);
        const changes = store.changesSince('s', store.compaction)!;
        expect(changes.map((c) => c.rev)).toEqual(Array.from({ length: retained }, (_, j) => store.compaction + 1 + j));
        expect(store.changesSince('s', store.compaction - 1)).toBeUndefined();
      }
    }
  });

  it('D-WATCH-5 replays and snapshots read the retained changes only', () => {
    const store = new revisions.Store({ historyLimit: 10 });
    for (let i = 0; i < 3000; i++) store.write('s', 'x', obj('x', { i }));
    const rev = store.revision;
    expect(store.changesSince('s', rev - 3)!.map((c) => (c.object as { i: number }).i)).toEqual([2997, 2998, 2999]);
    const snapshot = store.listAt('s', rev - 5)!;
    expect((snapshot[0]!.object as { i: number }).i).toBe(2994);
    expect(store.listAt('s', store.compaction - 1)).toBeUndefined();
  });

  it('D-FAULT-7 compaction after the history was trimmed keeps the newer changes', () => {
    const store = new revisions.Store({ historyLimit: 20 });
    for (let i = 0; i < 2500; i++) store.write('s', `k${i % 3}`, obj('k', { i }));
    store.compact(store.revision - 5);
    expect(store.compaction).toBe(store.revision - 5);
    expect(store.changesSince('s', store.compaction)!).toHaveLength(5);
    for (let i = 0; i < 30; i++) store.write('s', 'k0', obj('k', { i }));
    expect(store.changesSince('s', store.compaction)!).toHaveLength(20);
  });
});

describe('restoring kept objects', () => {
  it('D-PERSIST-302 a restored store continues the revisions and answers older ones as compacted', () => {
    const store = new revisions.Store();
    store.restore([{ storage: 'cm', key: 'a', object: { metadata: { name: 'a', resourceVersion: '7' } } }], 9);
    expect(store.revision).toBe(9);
    expect(store.compaction).toBe(9);
    expect(store.changesSince('cm', 8)).toBeUndefined();
    expect(store.changesSince('cm', 9)).toEqual([]);
    expect(store.write('cm', 'b', obj('b')).rev).toBe(10);
    expect(() => store.restore([], 1)).toThrow('Store.restore needs an empty store');
  });

  it('D-PERSIST-301 announce tells listeners of every kept object as added, the given storages first', () => {
    const store = new revisions.Store();
    store.restore(
      [
        { storage: 'cm', key: 'a', object: { metadata: { name: 'a', resourceVersion: '3' } } },
        { storage: 'crds', key: 'w', object: { metadata: { name: 'w', resourceVersion: '2' } } },
      ],
      3,
    );
    const seen: string[] = [];
    store.subscribe((c) => seen.push(`${c.type} ${c.storage} ${c.key} ${c.rev}`));
    store.announce(['crds']);
    expect(seen).toEqual(['ADDED crds w 2', 'ADDED cm a 3']);
    expect(store.revision).toBe(3);
  });
});
