import { describe, expect, it } from 'vitest';
import * as ownerindex from '../../../devcluster/controllers/ownerindex.js';
import type * as revisions from '../../../devcluster/store/revisions.js';
import type * as json from '../../../devcluster/json.js';

type JsonObject = json.JsonObject;

const ref = (uid: string, extra: JsonObject = {}): JsonObject => ({ apiVersion: 'v1', kind: 'ConfigMap', name: `n-${uid}`, uid, ...extra });
const obj = (refs: JsonObject[] | undefined): JsonObject => ({ metadata: { name: 'd', namespace: 'ns', ...(refs ? { ownerReferences: refs } : {}) } });

function change(type: revisions.ChangeType, object: JsonObject, prev?: JsonObject, key = 'ns\u0000d'): revisions.Change {
  return { rev: 1, storage: 'configmaps', key, type, object, prev };
}

describe('ownerReferencesOf', () => {
  it('keeps entries with a uid and skips malformed ones', () => {
    const refs = ownerindex.ownerReferencesOf(obj([ref('a'), { kind: 'X', name: 'x' }, 'junk' as unknown as JsonObject, ref('', {})]));
    expect(refs.map((r) => r.uid)).toEqual(['a']);
  });

  it('returns distinct uids', () => {
    expect(ownerindex.ownerUidsOf(obj([ref('a'), ref('a', { name: 'other' }), ref('b')]))).toEqual(['a', 'b']);
    expect(ownerindex.ownerUidsOf(undefined)).toEqual([]);
    expect(ownerindex.ownerUidsOf(obj(undefined))).toEqual([]);
  });
});

describe('OwnerIndex', () => {
  it('records dependents on ADDED and reports the touched owners', () => {
    const index = new ownerindex.OwnerIndex();
    expect(index.apply(change('ADDED', obj([ref('a'), ref('b')])))).toEqual(['a', 'b']);
    expect(index.dependents('a')).toEqual([{ storage: 'configmaps', key: 'ns\u0000d' }]);
    expect(index.dependents('b')).toHaveLength(1);
    expect(index.hasDependents('c')).toBe(false);
    expect(index.owners).toBe(2);
  });

  it('ignores objects without owner references', () => {
    const index = new ownerindex.OwnerIndex();
    expect(index.apply(change('ADDED', obj(undefined)))).toEqual([]);
    expect(index.owners).toBe(0);
  });

  it('follows reference changes on MODIFIED and reports old and new owners', () => {
    const index = new ownerindex.OwnerIndex();
    const first = obj([ref('a'), ref('b')]);
    index.apply(change('ADDED', first));
    const second = obj([ref('b'), ref('c')]);
    expect(index.apply(change('MODIFIED', second, first)).sort()).toEqual(['a', 'b', 'c']);
    expect(index.hasDependents('a')).toBe(false);
    expect(index.dependents('b')).toHaveLength(1);
    expect(index.dependents('c')).toHaveLength(1);
  });

  it('forgets a dependent on DELETED', () => {
    const index = new ownerindex.OwnerIndex();
    const o = obj([ref('a')]);
    index.apply(change('ADDED', o));
    index.apply(change('ADDED', o, undefined, 'ns\u0000e'));
    expect(index.apply(change('DELETED', o, o))).toEqual(['a']);
    expect(index.dependents('a')).toEqual([{ storage: 'configmaps', key: 'ns\u0000e' }]);
    index.forget('a', { storage: 'configmaps', key: 'ns\u0000e' });
    expect(index.hasDependents('a')).toBe(false);
  });

  it('returns snapshots that later changes do not alter', () => {
    const index = new ownerindex.OwnerIndex();
    const o = obj([ref('a')]);
    index.apply(change('ADDED', o));
    const snapshot = index.dependents('a');
    index.apply(change('DELETED', o, o));
    expect(snapshot).toHaveLength(1);
    expect(index.dependents('a')).toEqual([]);
  });
});
