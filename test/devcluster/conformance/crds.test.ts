/**
 * Conformance checklist C-88..C-98: CRD establishment, validation of CRDs, pruning and unknown
 * fields, defaulting (also on reads), schema validation, CEL rules, printer columns in Table output
 * and CRD deletion with instance cleanup, over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWatch, startHarness, WIDGETS, type Harness, type Json } from './harness.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

/** A minimal valid CRD for the group example.com (or another group). */
function gadgetCrd(plural: string, kind: string, extra: { group?: string; versions?: Json[]; name?: string } = {}): Json {
  const group = extra.group ?? 'example.com';
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: extra.name ?? `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, kind },
      versions: extra.versions ?? [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } },
        },
      ],
    },
  };
}

const condition = (crd: Json, type: string): Json | undefined => (crd['status']?.['conditions'] as Json[] | undefined)?.find((c) => c['type'] === type);

describe('conformance: CRDs', () => {
  let h: Harness;

  /** Applies `change` to the Widget CRD's v1 schema with a PUT; returns a function restoring the original. */
  async function changeWidgetSchema(change: (schema: Json) => void): Promise<() => Promise<void>> {
    const original = (await h.get(`${CRDS}/widgets.example.com`)).json;
    const updated = structuredClone(original);
    change(updated['spec']['versions'][0]['schema']['openAPIV3Schema']);
    const r = await h.put(`${CRDS}/widgets.example.com`, updated);
    expect(r.status, r.text).toBe(200);
    return async () => {
      const latest = (await h.get(`${CRDS}/widgets.example.com`)).json;
      const restored = { ...latest, spec: original['spec'] };
      expect((await h.put(`${CRDS}/widgets.example.com`, restored)).status).toBe(200);
      await h.cluster.settle();
    };
  }

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.stop();
  });

  it('C-88 a created CRD gets NamesAccepted and Established, announced by a MODIFIED event', async () => {
    const from = h.cluster.revision;
    const w = await readWatch(`${h.cluster.url}${CRDS}?watch=true&resourceVersion=${from}`, {
      timeoutMs: 1500,
      count: 3,
      onOpen: async () => {
        const r = await h.post(CRDS, gadgetCrd('gadgets', 'Gadget'));
        expect(r.status).toBe(201);
        expect(r.json['metadata']['finalizers']).toEqual(['customresourcecleanup.apiextensions.k8s.io']);
      },
    });
    await h.cluster.settle();
    const crd = (await h.get(`${CRDS}/gadgets.example.com`)).json;
    expect(condition(crd, 'NamesAccepted')).toMatchObject({ status: 'True', reason: 'NoConflicts', message: 'no conflicts found' });
    expect(condition(crd, 'Established')).toMatchObject({ status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' });
    expect(condition(crd, 'Established')!['lastTransitionTime']).toEqual(expect.any(String));
    expect(crd['status']['acceptedNames']['kind']).toBe('Gadget');
    expect(crd['status']['acceptedNames']['plural']).toBe('gadgets');
    expect(crd['status']['storedVersions']).toEqual(['v1']);

    const events = w.events.filter((e) => e['object']['metadata']['name'] === 'gadgets.example.com');
    expect(events[0]!['type']).toBe('ADDED');
    const modified = events.filter((e) => e['type'] === 'MODIFIED');
    expect(modified.length).toBeGreaterThan(0);
    expect(modified.some((e) => condition(e['object'], 'Established')?.['status'] === 'True')).toBe(true);
    // The endpoint works once Established is observable.
    expect((await h.get('/apis/example.com/v1/namespaces/default/gadgets')).status).toBe(200);
  });

  it('C-89 a CR path before its CRD exists is 404; it is served once the CRD is established', async () => {
    const path = '/apis/things.example.org/v1/namespaces/default/things';
    const before = await h.get(path);
    expect(before.status).toBe(404);
    expect(before.json['reason']).toBe('NotFound');
    expect(before.json['message']).toBe('the server could not find the requested resource');
    expect((await h.post(CRDS, gadgetCrd('things', 'Thing', { group: 'things.example.org' }))).status).toBe(201);
    await h.cluster.settle();
    expect((await h.get(path)).status).toBe(200);
  });

  it('C-90 invalid CRDs are 422: wrong name, two storage versions, a property without type', async () => {
    const wrongName = await h.post(CRDS, gadgetCrd('widgets', 'Widget', { name: 'foo.example.com' }));
    expect(wrongName.status).toBe(422);
    expect(wrongName.json['reason']).toBe('Invalid');
    expect((wrongName.json['details']['causes'] as Json[]).map((c) => c['field'])).toContain('metadata.name');
    const nameCause = (wrongName.json['details']['causes'] as Json[]).find((c) => c['field'] === 'metadata.name')!;
    expect(nameCause['message']).toBe('Invalid value: "foo.example.com": must be spec.names.plural+"."+spec.group');

    const schema = { openAPIV3Schema: { type: 'object' } };
    const twoStorage = await h.post(
      CRDS,
      gadgetCrd('doubles', 'Double', {
        versions: [
          { name: 'v1', served: true, storage: true, schema },
          { name: 'v2', served: true, storage: true, schema },
        ],
      }),
    );
    expect(twoStorage.status).toBe(422);
    expect(twoStorage.json['reason']).toBe('Invalid');
    expect((twoStorage.json['details']['causes'] as Json[]).map((c) => c['field'])).toContain('spec.versions');

    const untyped = await h.post(
      CRDS,
      gadgetCrd('untypeds', 'Untyped', {
        versions: [
          { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { description: 'no type' } } } } },
        ],
      }),
    );
    expect(untyped.status).toBe(422);
    expect(untyped.json['reason']).toBe('Invalid');
    const fields = (untyped.json['details']['causes'] as Json[]).map((c) => String(c['field']));
    expect(fields.length).toBeGreaterThan(0);
    for (const f of fields) expect(f.startsWith('spec.versions[0].schema.openAPIV3Schema')).toBe(true);

    // None of them was stored.
    for (const name of ['foo.example.com', 'doubles.example.com', 'untypeds.example.com']) {
      expect((await h.get(`${CRDS}/${name}`)).status).toBe(404);
    }
  });

  it('C-91 unknown fields are pruned with a warning, or rejected with fieldValidation=Strict', async () => {
    const body = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'c91' }, spec: { size: 1, bogus: 1, extra: { anything: { goes: true } } } };
    const r = await h.post(WIDGETS, body);
    expect(r.status).toBe(201);
    expect(r.json['spec']['bogus']).toBeUndefined();
    expect(r.json['spec']['extra']).toEqual({ anything: { goes: true } });
    expect(r.headers.get('warning')).toBe('299 - "unknown field \\"spec.bogus\\""');
    expect((await h.get(`${WIDGETS}/c91`)).json['spec']['extra']).toEqual({ anything: { goes: true } });

    const strict = await h.request('POST', `${WIDGETS}?fieldValidation=Strict`, { ...body, metadata: { name: 'c91-strict' } });
    expect(strict.status).toBe(400);
    expect(strict.json['reason']).toBe('BadRequest');
    expect(strict.json['message']).toBe('strict decoding error: unknown field "spec.bogus"');
    expect((await h.get(`${WIDGETS}/c91-strict`)).status).toBe(404);
  });

  it('C-92 defaults apply on create and, after a CRD update, on reads without a write', async () => {
    const created = await h.widget('c92');
    expect(created['spec']['color']).toBe('blue');
    expect((await h.get(`${WIDGETS}/c92`)).json['spec']['color']).toBe('blue');
    const rv = created['metadata']['resourceVersion'];

    const restore = await changeWidgetSchema((schema) => {
      schema['properties']['spec']['properties']['level'] = { type: 'integer', default: 1 };
    });
    try {
      const read = await h.get(`${WIDGETS}/c92`);
      expect(read.status).toBe(200);
      expect(read.json['spec']['level']).toBe(1);
      expect(read.json['metadata']['resourceVersion']).toBe(rv);
      const listed = (await h.get(WIDGETS)).json['items'] as Json[];
      expect(listed.find((i) => i['metadata']['name'] === 'c92')!['spec']['level']).toBe(1);
    } finally {
      await restore();
    }
    expect((await h.get(`${WIDGETS}/c92`)).json['spec']['level']).toBeUndefined();
  });

  it('C-93 all schema violations are reported together in one 422', async () => {
    const r = await h.post(WIDGETS, {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'c93' },
      spec: { size: '3', mode: 'c', name: 'ABC', tags: ['a', 'b', 'c'] },
    });
    expect(r.status).toBe(422);
    expect(r.json['reason']).toBe('Invalid');
    expect(r.json['details']['kind']).toBe('Widget');
    expect(r.json['details']['group']).toBe('example.com');
    expect(r.json['details']['name']).toBe('c93');
    const causes = r.json['details']['causes'] as Json[];
    const byField = (f: string): Json | undefined => causes.find((c) => c['field'] === f);
    expect(byField('spec.size')!['reason']).toBe('FieldValueTypeInvalid');
    expect(byField('spec.mode')!['reason']).toBe('FieldValueNotSupported');
    expect(byField('spec.mode')!['message']).toBe('Unsupported value: "c": supported values: "a", "b"');
    expect(byField('spec.name')!['reason']).toBe('FieldValueInvalid');
    expect(byField('spec.name')!['message']).toBe('Invalid value: "ABC": spec.name in body should match \'^[a-z]+$\'');
    expect(byField('spec.tags')!['reason']).toBe('FieldValueTooMany');
    expect(r.json['message']).toMatch(/^Widget\.example\.com "c93" is invalid: \[/);
    expect((await h.get(`${WIDGETS}/c93`)).status).toBe(404);
  });

  it('C-94 range and required violations render the exact cause bodies', async () => {
    const big = await h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'c94' }, spec: { size: 11 } });
    expect(big.status).toBe(422);
    expect(big.json['details']['causes']).toEqual([
      { reason: 'FieldValueInvalid', message: 'Invalid value: 11: spec.size in body should be less than or equal to 10', field: 'spec.size' },
    ]);
    expect(big.json['message']).toBe('Widget.example.com "c94" is invalid: spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10');

    const missing = await h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'c94' }, spec: { mode: 'a' } });
    expect(missing.status).toBe(422);
    expect(missing.json['details']['causes']).toEqual([{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.size' }]);
  });

  it('C-95 a null value of a non-nullable field without default is removed', async () => {
    const r = await h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'c95' }, spec: { size: 2, mode: null } });
    expect(r.status).toBe(201);
    expect('mode' in r.json['spec']).toBe(false);
    expect('mode' in (await h.get(`${WIDGETS}/c95`)).json['spec']).toBe(false);
  });

  it('C-96 CEL rules in x-kubernetes-validations are accepted and enforced', async () => {
    const restore = await changeWidgetSchema((schema) => {
      schema['properties']['spec']['x-kubernetes-validations'] = [{ rule: 'self.size <= 5', message: 'too big' }];
    });
    try {
      const r = await h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'c96' }, spec: { size: 6 } });
      expect(r.status).toBe(422);
      expect(r.json['reason']).toBe('Invalid');
      const causes = r.json['details']['causes'] as Json[];
      expect(causes).toHaveLength(1);
      expect(causes[0]!['field']).toBe('spec');
      expect(causes[0]!['reason']).toBe('FieldValueInvalid');
      expect(String(causes[0]!['message']).endsWith('too big')).toBe(true);
      expect((await h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'c96' }, spec: { size: 5 } })).status).toBe(201);
    } finally {
      await restore();
    }
    expect((await h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'c96-after' }, spec: { size: 6 } })).status).toBe(201);
  });

  it('C-97 Table output uses Name followed by the printer columns', async () => {
    await h.widget('c97', { size: 7 });
    const r = await h.get(`${WIDGETS}?fieldSelector=metadata.name%3Dc97`, TABLE_ACCEPT);
    expect(r.status).toBe(200);
    expect(r.json['kind']).toBe('Table');
    expect(r.json['apiVersion']).toBe('meta.k8s.io/v1');
    expect(r.json['metadata']['resourceVersion']).toEqual(expect.any(String));
    const columns = (r.json['columnDefinitions'] as Json[]).map((c) => [c['name'], c['type']]);
    expect(columns).toEqual([
      ['Name', 'string'],
      ['Size', 'integer'],
      ['Age', 'date'],
    ]);
    expect(r.json['columnDefinitions'][0]['format']).toBe('name');
    const rows = r.json['rows'] as Json[];
    expect(rows).toHaveLength(1);
    expect(rows[0]!['cells'].slice(0, 2)).toEqual(['c97', 7]);
    expect(rows[0]!['cells'][2]).toMatch(/^\d+[smhdy]/);
    expect(rows[0]!['object']).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'c97' } });
  });
});

describe('conformance: CRD deletion', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.stop();
  });

  it('C-98 deleting a CRD terminates it, deletes instances honouring finalizers, then removes it', async () => {
    await h.widget('keeper', { size: 1 }, { metadata: { finalizers: ['example.com/f'] } });
    await h.widget('plain');
    const watchRv = h.cluster.revision;
    const watch = readWatch(`${h.cluster.url}${WIDGETS}?watch=true&resourceVersion=${watchRv}`, { timeoutMs: 5000 });

    const del = await h.del(`${CRDS}/widgets.example.com`);
    expect(del.status).toBe(200);
    expect(del.json['kind']).toBe('CustomResourceDefinition');
    expect(del.json['metadata']['deletionTimestamp']).toEqual(expect.any(String));
    await h.cluster.settle();

    const crd = (await h.get(`${CRDS}/widgets.example.com`)).json;
    expect(condition(crd, 'Terminating')).toMatchObject({
      status: 'True',
      reason: 'InstanceDeletionInProgress',
      message: 'CustomResource deletion is in progress',
    });
    const keeper = await h.get(`${WIDGETS}/keeper`);
    expect(keeper.status).toBe(200);
    expect(keeper.json['metadata']['deletionTimestamp']).toEqual(expect.any(String));
    expect((await h.get(`${WIDGETS}/plain`)).status).toBe(404);

    const refused = await h.post(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'late' }, spec: { size: 1 } });
    expect(refused.status).toBe(403);
    expect(refused.json['reason']).toBe('Forbidden');
    expect(String(refused.json['message']).endsWith('create not allowed while custom resource definition is terminating')).toBe(true);

    const released = await h.patch(`${WIDGETS}/keeper`, { metadata: { finalizers: null } });
    expect(released.status).toBe(200);
    await h.cluster.settle();
    expect((await h.get(`${CRDS}/widgets.example.com`)).status).toBe(404);
    expect((await h.get(WIDGETS)).status).toBe(404);
    const groups = (await h.get('/apis', 'application/json')).json;
    expect(JSON.stringify(groups)).not.toContain('example.com');
    expect((await h.get('/apis/example.com/v1')).status).toBe(404);

    // The open watch saw both instances go away, then its stream ended.
    const w = await watch;
    expect(w.ended).toBe(true);
    const deleted = w.events.filter((e) => e['type'] === 'DELETED').map((e) => e['object']['metadata']['name']);
    expect(deleted.sort()).toEqual(['keeper', 'plain']);
  });
});
