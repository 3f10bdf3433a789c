import { describe, expect, it } from 'vitest';
import * as fieldsets from '../../../devcluster/patching/fieldsets.js';
import * as managedfields from '../../../devcluster/patching/managedfields.js';
import type * as json from '../../../devcluster/json.js';

type JsonObject = json.JsonObject;

const containersKeyed: managedfields.ListSemantics = (path) => {
  const p = path.join('.');
  if (p === 'spec.containers') return { type: 'map', keys: ['name'] };
  if (p === 'spec.containers.ports') return { type: 'map', keys: ['containerPort', 'protocol'] };
  if (p === 'spec.tags') return { type: 'set' };
  return { type: 'atomic' };
};

const listed = (s: fieldsets.FieldSet): string[] => fieldsets.paths(s).map(fieldsets.formatPath);
const widget = (spec: JsonObject, extra: JsonObject = {}): JsonObject => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w1', namespace: 'ns', ...extra },
  spec,
});

describe('field sets of objects', () => {
  it('D-VERB-22 items of a map list are keyed k:{…} and own their fields', () => {
    const s = managedfields.fieldSetOf(
      { spec: { containers: [{ name: 'c1', image: 'x', ports: [{ containerPort: 80, protocol: 'TCP' }] }] } },
      containersKeyed,
    );
    expect(fieldsets.encode(s)).toEqual({
      'f:spec': {
        'f:containers': {
          'k:{"name":"c1"}': {
            '.': {},
            'f:image': {},
            'f:name': {},
            'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} } },
          },
        },
      },
    });
  });

  it('D-VERB-22 items of a set list are owned one by one as v:<json>', () => {
    const s = managedfields.fieldSetOf({ spec: { tags: ['a', 'b'] } }, containersKeyed);
    expect(listed(s)).toEqual(['.spec.tags[="a"]', '.spec.tags[="b"]']);
  });

  it('D-VERB-22 lists are atomic by default and owned as a whole', () => {
    const s = managedfields.fieldSetOf({ spec: { args: ['a', 'b'], containers: [{ name: 'c' }] } }, managedfields.atomicLists);
    expect(listed(s)).toEqual(['.spec.args', '.spec.containers']);
  });

  it('a map list whose items repeat a key falls back to atomic', () => {
    expect(managedfields.itemElements([{ name: 'a' }, { name: 'a' }], { type: 'map', keys: ['name'] })).toBeUndefined();
    expect(managedfields.itemElements([{ image: 'x' }], { type: 'map', keys: ['name'] })).toBeUndefined();
    expect(managedfields.itemElements([{ a: 1 }], { type: 'set' })).toBeUndefined();
    expect(managedfields.itemElements([1, '1'], { type: 'set' })).toEqual(['v:1', 'v:"1"']);
  });

  it('empty maps are leaves; scalars and null are leaves', () => {
    expect(listed(managedfields.fieldSetOf({ a: {}, b: null, c: { d: 0 } }, managedfields.atomicLists))).toEqual(['.a', '.b', '.c.d']);
  });
});

describe('comparing objects', () => {
  it('reports added, modified and removed leaves and whole added containers', () => {
    const before = { spec: { size: 1, mode: 'a', containers: [{ name: 'c1', image: 'x' }] } };
    const after = {
      spec: {
        size: 2,
        containers: [
          { name: 'c1', image: 'x' },
          { name: 'c2', image: 'y' },
        ],
      },
      extra: { k: 1 },
    };
    const cmp = managedfields.compareObjects(before, after, containersKeyed);
    expect(listed(cmp.modified)).toEqual(['.spec.size']);
    expect(listed(cmp.removed)).toEqual(['.spec.mode']);
    expect(listed(cmp.added)).toEqual([
      '.extra',
      '.extra.k',
      '.spec.containers[name="c2"]',
      '.spec.containers[name="c2"].image',
      '.spec.containers[name="c2"].name',
    ]);
  });

  it('an atomic list that changes is one modified leaf', () => {
    const cmp = managedfields.compareObjects({ args: ['a'] }, { args: ['a', 'b'] }, managedfields.atomicLists);
    expect(listed(cmp.modified)).toEqual(['.args']);
    expect(fieldsets.isEmpty(cmp.added)).toBe(true);
  });

  it('containers that disappear are removed as a whole, with their leaves', () => {
    const before = {
      spec: {
        containers: [
          { name: 'c1', image: 'x' },
          { name: 'c2', image: 'y' },
        ],
        extra: { a: { b: 1 } },
        empty: {},
      },
    };
    const after = { spec: { containers: [{ name: 'c1', image: 'x' }] } };
    const cmp = managedfields.compareObjects(before, after, containersKeyed);
    expect(listed(cmp.removed)).toEqual([
      '.spec.empty',
      '.spec.extra',
      '.spec.containers[name="c2"]',
      '.spec.containers[name="c2"].image',
      '.spec.containers[name="c2"].name',
      '.spec.extra.a',
      '.spec.extra.a.b',
    ]);
    expect([cmp.added, cmp.modified].every(fieldsets.isEmpty)).toBe(true);
  });

  it('a change of shape is one modified leaf; an empty map appearing is one added leaf', () => {
    const cmp = managedfields.compareObjects({ a: { x: 1 }, b: [1], c: 'x' }, { a: [1], b: { y: 2 }, c: 'x', d: {} }, managedfields.atomicLists);
    expect(listed(cmp.modified)).toEqual(['.a', '.b']);
    expect(listed(cmp.added)).toEqual(['.d']);
    expect(fieldsets.isEmpty(cmp.removed)).toBe(true);
  });

  it('set lists compare item by item and list semantics see the path of map keys', () => {
    const seen: string[] = [];
    const sem: managedfields.ListSemantics = (path) => {
      seen.push(path.join('.'));
      return containersKeyed(path);
    };
    const cmp = managedfields.compareObjects({ spec: { tags: ['a', 'b'] } }, { spec: { tags: ['b', 'c'] } }, sem);
    expect(listed(cmp.added)).toEqual(['.spec.tags[="c"]']);
    expect(listed(cmp.removed)).toEqual(['.spec.tags[="a"]']);
    expect(seen).toEqual(['spec.tags']);
  });

  it('identical objects, and two absent ones, compare as unchanged', () => {
    for (const [a, b] of [
      [{ s: { x: [1, { y: 2 }] } }, { s: { x: [1, { y: 2 }] } }],
      [undefined, undefined],
      [{}, {}],
    ] as const) {
      const cmp = managedfields.compareObjects(a, b, managedfields.atomicLists);
      expect([cmp.added, cmp.modified, cmp.removed].every(fieldsets.isEmpty)).toBe(true);
    }
  });

  it('key order inside objects does not count as a change', () => {
    const cmp = managedfields.compareObjects({ a: { x: 1, y: [{ p: 1, q: 2 }] } }, { a: { y: [{ q: 2, p: 1 }], x: 1 } }, managedfields.atomicLists);
    expect([cmp.added, cmp.modified, cmp.removed].every(fieldsets.isEmpty)).toBe(true);
  });
});

describe('ownership domains', () => {
  const obj = {
    apiVersion: 'v1',
    kind: 'K',
    metadata: { name: 'n', namespace: 'ns', uid: 'u', resourceVersion: '1', generation: 1, creationTimestamp: 't', managedFields: [], labels: { a: '1' } },
    spec: { x: 1 },
    status: { y: 2 },
  };

  it('D-VERB-22 server-managed fields are never owned', () => {
    expect(managedfields.ownedView(obj, { statusSubresource: false })).toEqual({ metadata: { labels: { a: '1' } }, spec: { x: 1 }, status: { y: 2 } });
  });

  it('D-VERB-22 the main resource of a kind with a status subresource does not own status', () => {
    expect(managedfields.ownedView(obj, { statusSubresource: true })).toEqual({ metadata: { labels: { a: '1' } }, spec: { x: 1 } });
  });

  it('D-VERB-22 the status subresource owns only status', () => {
    expect(managedfields.ownedView(obj, { subresource: 'status', statusSubresource: true })).toEqual({ status: { y: 2 } });
  });
});

describe('recordUpdate', () => {
  const base = { manager: 'm', apiVersion: 'v1', now: '2024-01-02T00:00:00Z', listSemantics: containersKeyed, statusSubresource: true };

  it('D-META-15 a create records an Update entry owning every field it set', () => {
    const entries = managedfields.recordUpdate({ ...base, before: undefined, after: widget({ size: 1 }, { labels: { a: 'x' } }) });
    expect(entries).toEqual([
      {
        manager: 'm',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2024-01-02T00:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } }, 'f:spec': { '.': {}, 'f:size': {} } },
      },
    ]);
  });

  it('C-47 the writer takes the fields it changed from every other manager', () => {
    const before = widget(
      { size: 3, mode: 'a' },
      {
        managedFields: [
          {
            manager: 'a',
            operation: 'Apply',
            apiVersion: 'v1',
            time: '2024-01-01T00:00:00Z',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:spec': { 'f:size': {}, 'f:mode': {} } },
          },
        ],
      },
    );
    const after = widget({ size: 4, mode: 'a' }, { managedFields: (before.metadata as JsonObject).managedFields });
    const entries = managedfields.recordUpdate({ ...base, before, after });
    expect(entries.map((e) => [e.manager, e.operation, e.fieldsV1])).toEqual([
      ['a', 'Apply', { 'f:spec': { 'f:mode': {} } }],
      ['m', 'Update', { 'f:spec': { 'f:size': {} } }],
    ]);
  });

  it('D-META-15 removed fields leave every entry, and empty entries disappear', () => {
    const before = widget(
      { size: 3, mode: 'a' },
      {
        managedFields: [
          { manager: 'a', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:mode': {} } } },
          { manager: 'b', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:size': {} } } },
        ],
      },
    );
    const after = widget({ size: 3 });
    const entries = managedfields.recordUpdate({ ...base, manager: 'c', before, after });
    expect(entries.map((e) => e.manager)).toEqual(['b']);
  });

  it('D-META-15 a write that changes nothing adds no entry and keeps the old time', () => {
    const stored = [
      { manager: 'm', operation: 'Update', apiVersion: 'v1', time: '2020-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:size': {} } } },
    ];
    const before = widget({ size: 3 }, { managedFields: stored });
    expect(managedfields.recordUpdate({ ...base, before, after: before })).toEqual(stored);
    expect(managedfields.recordUpdate({ ...base, manager: 'other', before, after: before })).toEqual(stored);
  });

  it('D-META-15 a request sending managedFields: [] resets them before recording', () => {
    const before = widget(
      { size: 3 },
      { managedFields: [{ manager: 'a', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:mode': {} } } }] },
    );
    const after = widget({ size: 4 }, { managedFields: [] });
    const entries = managedfields.recordUpdate({ ...base, before, after });
    expect(entries.map((e) => [e.manager, e.fieldsV1])).toEqual([['m', { 'f:spec': { 'f:size': {} } }]]);
  });

  it('D-VERB-22 status writes are recorded in their own subresource entry', () => {
    const before = { ...widget({ size: 3 }), status: { phase: 'A' } };
    const after = { ...widget({ size: 3 }), status: { phase: 'B' } };
    const entries = managedfields.recordUpdate({ ...base, manager: 'ctl', subresource: 'status', before, after });
    expect(entries).toEqual([
      {
        manager: 'ctl',
        operation: 'Update',
        apiVersion: 'v1',
        time: base.now,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:status': { 'f:phase': {} } },
        subresource: 'status',
      },
    ]);
    expect(managedfields.recordUpdate({ ...base, manager: 'ctl', before, after })).toEqual([]);
  });

  it('malformed stored managedFields are reset rather than failing the write', () => {
    const before = widget({ size: 3 }, { managedFields: [{ manager: 'a', operation: 'Apply', fieldsV1: { bogus: {} } }] });
    const entries = managedfields.recordUpdate({ ...base, before, after: widget({ size: 4 }) });
    expect(entries.map((e) => e.manager)).toEqual(['m']);
  });

  it('does not mutate its inputs', () => {
    const before = widget({ size: 3 });
    const after = widget({ size: 4 });
    const snapshot = JSON.stringify([before, after]);
    managedfields.recordUpdate({ ...base, before, after });
    expect(JSON.stringify([before, after])).toBe(snapshot);
  });
});

describe('managerFromRequest', () => {
  it.each([
    ['mgr', 'kubectl/v1.30.0 (linux/amd64)', 'mgr'],
    [undefined, 'kubectl/v1.30.0 (linux/amd64) kubernetes/abc', 'kubectl'],
    ['', 'kubectl-client-side-apply/v1.30.0', 'kubectl-client-side-apply'],
    [undefined, 'python-requests', 'python-requests'],
    [undefined, undefined, 'unknown'],
    [undefined, '/v1', 'unknown'],
    [undefined, 'a\u0001b/1', 'ab'],
  ])('D-META-15 fieldManager %j with User-Agent %j → %s', (fm, ua, want) => {
    expect(managedfields.managerFromRequest(fm, ua)).toBe(want);
  });

  it('caps a manager taken from the User-Agent at 128 characters', () => {
    expect(managedfields.managerFromRequest(undefined, `${'x'.repeat(200)}/1`)).toHaveLength(128);
  });
});

describe('entries on the wire', () => {
  it('D-META-15 entries sort Apply before Update, then by time and manager', () => {
    const set = fieldsets.fromPaths([['f:a']]);
    const out = managedfields.encodeEntries([
      { manager: 'z', operation: 'Update', apiVersion: 'v1', time: '2024-01-01T00:00:00Z', set },
      { manager: 'b', operation: 'Apply', apiVersion: 'v1', time: '2024-01-02T00:00:00Z', set },
      { manager: 'a', operation: 'Apply', apiVersion: 'v1', time: '2024-01-02T00:00:00Z', set },
      { manager: 'c', operation: 'Apply', apiVersion: 'v1', time: '2024-01-01T00:00:00Z', set },
      { manager: 'gone', operation: 'Apply', apiVersion: 'v1', set: fieldsets.EMPTY },
    ]);
    expect(out.map((e) => e.manager)).toEqual(['c', 'a', 'b', 'z']);
    expect(managedfields.decodeEntries(out).map((e) => managedfields.identity(e))).toEqual(out.map((e) => managedfields.identity({ ...e })));
  });

  it('apply entries are identified without apiVersion, update entries with it', () => {
    const a1 = managedfields.identity({ manager: 'a', operation: 'Apply', apiVersion: 'v1' });
    const a2 = managedfields.identity({ manager: 'a', operation: 'Apply', apiVersion: 'v2' });
    const u1 = managedfields.identity({ manager: 'a', operation: 'Update', apiVersion: 'v1' });
    const u2 = managedfields.identity({ manager: 'a', operation: 'Update', apiVersion: 'v2' });
    expect(a1).toBe(a2);
    expect(u1).not.toBe(u2);
    expect(a1).not.toBe(u1);
  });
});
