import { describe, expect, it } from 'vitest';
import * as apply from '../../../devcluster/patching/apply.js';
import type * as managedfields from '../../../devcluster/patching/managedfields.js';
import type * as json from '../../../devcluster/json.js';

type JsonObject = json.JsonObject;

const widgets = { group: 'example.com', resource: 'widgets', kind: 'Widget' };

const semantics: managedfields.ListSemantics = (path) => {
  const p = path.join('.');
  if (p === 'spec.containers') return { type: 'map', keys: ['name'] };
  if (p === 'metadata.finalizers' || p === 'spec.tags') return { type: 'set' };
  return { type: 'atomic' };
};

const cfg = (spec: JsonObject, meta: JsonObject = {}): JsonObject => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w1', namespace: 'ns', ...meta },
  spec,
});

let tick = 0;
function run(live: JsonObject | undefined, config: JsonObject, manager: string, extra: Partial<apply.ApplyOptions> = {}): apply.ApplyResult {
  tick += 1;
  return apply.applyConfiguration({
    live,
    config,
    manager,
    apiVersion: 'v1',
    force: false,
    now: `2024-01-01T00:00:${String(tick).padStart(2, '0')}Z`,
    listSemantics: semantics,
    ...extra,
  });
}

function ok(result: apply.ApplyResult): JsonObject {
  if (!result.ok) throw new Error(`unexpected conflicts: ${result.conflicts.map((c) => c.field).join(', ')}`);
  return result.object;
}

function conflicts(result: apply.ApplyResult): apply.ApplyConflict[] {
  if (result.ok) throw new Error('expected conflicts');
  return result.conflicts;
}

const entries = (obj: JsonObject): managedfields.ManagedFieldsEntry[] =>
  ((obj.metadata as JsonObject).managedFields ?? []) as managedfields.ManagedFieldsEntry[];
const owners = (obj: JsonObject): [string, string, unknown][] => entries(obj).map((e) => [e.manager, e.operation, e.fieldsV1]);
const spec = (obj: JsonObject): JsonObject => obj.spec as JsonObject;

/** A stored object: what the API layer keeps after an update recorded by `recordUpdate`. */
function updated(before: JsonObject | undefined, after: JsonObject, manager: string): JsonObject {
  const managedFields = apply.recordUpdate({
    before,
    after,
    manager,
    apiVersion: 'v1',
    now: '2024-01-01T01:00:00Z',
    listSemantics: semantics,
    statusSubresource: true,
  });
  return { ...after, metadata: { ...(after.metadata as JsonObject), managedFields } };
}

describe('applyConfiguration', () => {
  it('C-44 applying a missing object creates it with an Apply entry for the manager', () => {
    const obj = ok(run(undefined, cfg({ size: 3 }, { labels: { app: 'x' } }), 'a'));
    expect(obj).toMatchObject({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w1', namespace: 'ns', labels: { app: 'x' } },
      spec: { size: 3 },
    });
    expect(entries(obj)).toEqual([
      {
        manager: 'a',
        operation: 'Apply',
        apiVersion: 'v1',
        time: expect.any(String),
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:spec': { 'f:size': {} } },
      },
    ]);
  });

  it('C-45 a different value for a field another applier owns conflicts; force takes it over', () => {
    const live = ok(run(undefined, cfg({ size: 3 }), 'a'));
    const found = conflicts(run(live, cfg({ size: 4 }), 'b'));
    expect(found.map((c) => [c.manager, c.operation, c.field])).toEqual([['a', 'Apply', '.spec.size']]);

    const err = apply.conflictError(found, widgets, 'w1');
    expect(err.code).toBe(409);
    expect(err.toStatus()).toMatchObject({
      reason: 'Conflict',
      code: 409,
      message: 'Apply failed with 1 conflict: conflict with "a": .spec.size',
      details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "a"', field: '.spec.size' }] },
    });

    const forced = ok(run(live, cfg({ size: 4 }), 'b', { force: true }));
    expect(spec(forced).size).toBe(4);
    expect(owners(forced)).toEqual([['b', 'Apply', { 'f:spec': { 'f:size': {} } }]]);
  });

  it('D-VERB-22 applying the value already there shares ownership instead of conflicting', () => {
    const live = ok(run(undefined, cfg({ size: 3, mode: 'x' }), 'a'));
    const shared = ok(run(live, cfg({ size: 3 }), 'b'));
    expect(
      owners(shared)
        .map(([m]) => m)
        .sort(),
    ).toEqual(['a', 'b']);
    // a dropping the shared field keeps it: b still owns it.
    const after = ok(run(shared, cfg({ mode: 'x' }), 'a'));
    expect(spec(after)).toEqual({ size: 3, mode: 'x' });
  });

  it("C-46 a field dropped from the manager's configuration is removed", () => {
    const live = ok(run(undefined, cfg({ size: 3, mode: 'fast' }), 'a'));
    const next = ok(run(live, cfg({ size: 3 }), 'a'));
    expect(spec(next)).toEqual({ size: 3 });
    expect(owners(next)).toEqual([['a', 'Apply', { 'f:spec': { 'f:size': {} } }]]);
  });

  it('D-VERB-22 pruning leaves fields nobody applied alone and drops emptied maps', () => {
    const live = ok(run(undefined, cfg({ size: 3, extra: { a: 1 } }), 'a'));
    const withDefault = { ...live, spec: { ...spec(live), defaulted: true } };
    const next = ok(run(withDefault, cfg({ size: 3 }), 'a'));
    expect(spec(next)).toEqual({ size: 3, defaulted: true });
  });

  it('C-47 a field changed by an Update manager conflicts with a later apply by another manager', () => {
    const created = ok(run(undefined, cfg({ size: 3 }), 'a'));
    const patched = updated(created, { ...created, spec: { size: 5 } }, 'm');
    const found = conflicts(run(patched, cfg({ size: 6 }), 'a'));
    expect(found.map((c) => [c.manager, c.operation, c.field])).toEqual([['m', 'Update', '.spec.size']]);
    expect(apply.conflictError(found, widgets, 'w1').message).toBe('Apply failed with 1 conflict: conflict with "m" using v1: .spec.size');
  });

  it('D-VERB-22 several conflicts are grouped per manager, managers sorted, "using" for Update managers only', () => {
    let live = ok(run(undefined, cfg({ x: 1, z: 1 }), 'b'));
    live = updated(live, { ...live, spec: { ...spec(live), y: 1 } }, 'a');
    const found = conflicts(run(live, cfg({ x: 2, y: 2, z: 2 }), 'c'));
    const err = apply.conflictError(found, widgets, 'w1');
    expect(err.message).toBe('Apply failed with 3 conflicts: conflicts with "a" using v1:\n- .spec.y\nconflicts with "b":\n- .spec.x\n- .spec.z');
    expect(err.details?.causes?.map((c) => [c.message, c.field])).toEqual([
      ['conflict with "a" using v1', '.spec.y'],
      ['conflict with "b"', '.spec.x'],
      ['conflict with "b"', '.spec.z'],
    ]);
  });

  it('D-VERB-22 force also takes fields from Update managers', () => {
    const created = ok(run(undefined, cfg({ size: 3, mode: 'a' }), 'a'));
    const patched = updated(created, { ...created, spec: { size: 5, mode: 'b' } }, 'm');
    const forced = ok(run(patched, cfg({ size: 6 }), 'x', { force: true }));
    expect(owners(forced)).toEqual([
      ['x', 'Apply', { 'f:spec': { 'f:size': {} } }],
      ['m', 'Update', { 'f:spec': { 'f:mode': {} } }],
    ]);
  });

  it('D-VERB-22 items of a keyed list are owned per item: k:{"name":"c1"}', () => {
    const live = ok(run(undefined, cfg({ containers: [{ name: 'c1', image: 'x:1' }] }), 'a'));
    expect(entries(live)[0]!.fieldsV1).toEqual({ 'f:spec': { 'f:containers': { 'k:{"name":"c1"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } });

    const both = ok(run(live, cfg({ containers: [{ name: 'c2', image: 'y:1' }] }), 'b'));
    expect(spec(both).containers).toEqual([
      { name: 'c1', image: 'x:1' },
      { name: 'c2', image: 'y:1' },
    ]);

    const found = conflicts(run(both, cfg({ containers: [{ name: 'c1', image: 'x:2' }] }), 'b'));
    expect(found.map((c) => c.field)).toEqual(['.spec.containers[name="c1"].image']);

    const dropped = ok(run(both, cfg({ containers: [] }), 'a'));
    expect(spec(dropped).containers).toEqual([{ name: 'c2', image: 'y:1' }]);
  });

  it('D-VERB-22 a keyed item keeps fields another manager owns when its applier drops it', () => {
    const live = ok(run(undefined, cfg({ containers: [{ name: 'c1', image: 'x:1' }] }), 'a'));
    const withEnv = ok(run(live, cfg({ containers: [{ name: 'c1', env: 'E' }] }), 'b'));
    const dropped = ok(run(withEnv, cfg({ other: 1 }), 'a'));
    expect(spec(dropped).containers).toEqual([{ name: 'c1', env: 'E' }]);
  });

  it('D-VERB-22 set lists merge as unions and lose only the items their applier dropped', () => {
    const live = ok(run(undefined, cfg({ tags: ['x'] }), 'a'));
    const both = ok(run(live, cfg({ tags: ['y'] }), 'b'));
    expect(spec(both).tags).toEqual(['x', 'y']);
    expect(entries(both).find((e) => e.manager === 'b')!.fieldsV1).toEqual({ 'f:spec': { 'f:tags': { 'v:"y"': {} } } });
    const dropped = ok(run(both, cfg({ tags: ['z'] }), 'a'));
    expect(spec(dropped).tags).toEqual(['y', 'z']);
  });

  it('D-VERB-22 atomic lists are replaced and conflict as a whole', () => {
    const live = ok(run(undefined, cfg({ args: ['a', 'b'] }), 'a'));
    const found = conflicts(run(live, cfg({ args: ['c'] }), 'b'));
    expect(found.map((c) => c.field)).toEqual(['.spec.args']);
    expect(spec(ok(run(live, cfg({ args: ['c'] }), 'a'))).args).toEqual(['c']);
  });

  it("D-VERB-22 keyed items follow the configuration's order, live-only items keep their place", () => {
    const live = ok(run(undefined, cfg({ containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] }), 'x'));
    const next = ok(run(live, cfg({ containers: [{ name: 'c' }, { name: 'a' }] }), 'y'));
    expect((spec(next).containers as JsonObject[]).map((c) => c.name)).toEqual(['b', 'c', 'a']);
  });

  it('D-VERB-22 the status subresource is its own ownership domain', () => {
    const config = { ...cfg({ size: 1 }), status: { phase: 'Ready' } };
    const created = ok(run(undefined, config, 'a', { statusSubresource: true }));
    expect(created.status).toBeUndefined();

    const withStatus = ok(run(created, { ...cfg({}), status: { phase: 'Ready' } }, 'a', { statusSubresource: true, subresource: 'status' }));
    expect(withStatus.status).toEqual({ phase: 'Ready' });
    expect(spec(withStatus)).toEqual({ size: 1 });
    expect(entries(withStatus).map((e) => [e.manager, e.subresource, e.fieldsV1])).toEqual([
      ['a', undefined, { 'f:spec': { 'f:size': {} } }],
      ['a', 'status', { 'f:status': { 'f:phase': {} } }],
    ]);

    // The main-resource apply by the same manager neither prunes nor conflicts on status.
    const again = ok(run(withStatus, cfg({ size: 2 }), 'a', { statusSubresource: true }));
    expect(again.status).toEqual({ phase: 'Ready' });
    const other = conflicts(run(withStatus, { ...cfg({}), status: { phase: 'Failed' } }, 'b', { statusSubresource: true, subresource: 'status' }));
    expect(apply.conflictError(other, widgets, 'w1').message).toBe('Apply failed with 1 conflict: conflict with "a" with subresource "status": .status.phase');
  });

  it('D-VERB-22 server-managed metadata is neither owned nor overwritten', () => {
    const live = { ...cfg({ size: 1 }, { uid: 'u1', resourceVersion: '7', generation: 2 }) };
    const obj = ok(run(live, cfg({ size: 1 }, { uid: 'other', resourceVersion: '9' }), 'a'));
    expect(obj.metadata).toMatchObject({ uid: 'u1', resourceVersion: '7', generation: 2 });
    expect(entries(obj)[0]!.fieldsV1).toEqual({ 'f:spec': { 'f:size': {} } });
  });

  it('does not mutate the live object or the configuration', () => {
    const live = ok(run(undefined, cfg({ size: 3, mode: 'x', containers: [{ name: 'c', image: 'i' }] }), 'a'));
    const config = cfg({ size: 4, containers: [{ name: 'd' }] });
    const snapshot = JSON.stringify([live, config]);
    ok(run(live, config, 'a'));
    run(live, config, 'b');
    expect(JSON.stringify([live, config])).toBe(snapshot);
  });
});
