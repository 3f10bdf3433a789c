/**
 * A member named `__proto__` over HTTP (D-GEN-9): a Go API server decodes it as a key like any
 * other, so the devcluster stores, prunes, defaults, patches (merge, JSON, apply) and
 * serves it as one — never as an object's prototype.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness, type Json } from './conformance/harness.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const ODDITIES = '/apis/kopf.dev/v1/namespaces/default/oddities';

const ODDITIES_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'oddities.kopf.dev' },
  spec: {
    group: 'kopf.dev',
    scope: 'Namespaced',
    names: { kind: 'Oddity', plural: 'oddities', singular: 'oddity' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { size: { type: 'integer', default: 1 } } } },
          },
        },
      },
    ],
  },
};

/** The body's text with a `spec` given as raw JSON text (so that `__proto__` is a member of it). */
function oddity(name: string, specJson: string): string {
  return `{"apiVersion":"kopf.dev/v1","kind":"Oddity","metadata":{"name":"${name}"},"spec":${specJson}}`;
}

/** The `spec` member of a served object as the wire has it (text), not as a parse would show it. */
function specText(text: string): string {
  const spec = (JSON.parse(text) as Json)['spec'] as Json;
  return JSON.stringify(spec);
}

describe('a member named __proto__', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ widgets: false });
    const created = await h.post(CRDS, ODDITIES_CRD);
    expect(created.status, created.text).toBe(201);
    await h.cluster.settle();
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('D-GEN-9 is stored, defaulted and served as an ordinary member of a custom resource', async () => {
    const created = await h.post(ODDITIES, oddity('one', '{"__proto__":{"polluted":"yes"}}'));
    expect(created.status, created.text).toBe(201);
    expect(specText(created.text)).toBe('{"__proto__":{"polluted":"yes"},"size":1}');
    const read = await h.get(`${ODDITIES}/one`);
    expect(specText(read.text)).toBe('{"__proto__":{"polluted":"yes"},"size":1}');
    const listed = await h.get(ODDITIES);
    expect(JSON.stringify(((JSON.parse(listed.text) as Json)['items'] as Json[])[0]!['spec'])).toBe('{"__proto__":{"polluted":"yes"},"size":1}');
    expect(({} as Json)['polluted']).toBeUndefined();
  });

  it('D-GEN-9 is patched as an ordinary member by merge, JSON and apply patches', async () => {
    expect((await h.post(ODDITIES, oddity('two', '{"__proto__":{"a":"1"},"size":2}'))).status).toBe(201);
    const merged = await h.patch(`${ODDITIES}/two`, '{"spec":{"__proto__":{"b":"2"}}}', 'merge');
    expect(merged.status, merged.text).toBe(200);
    expect(specText(merged.text)).toBe('{"__proto__":{"a":"1","b":"2"},"size":2}');
    const jsonPatched = await h.patch(`${ODDITIES}/two`, '[{"op":"replace","path":"/spec/__proto__/a","value":"3"}]', 'json');
    expect(jsonPatched.status, jsonPatched.text).toBe(200);
    expect(specText(jsonPatched.text)).toBe('{"__proto__":{"a":"3","b":"2"},"size":2}');
    const applied = await h.request('PATCH', `${ODDITIES}/three?fieldManager=test`, oddity('three', '{"__proto__":{"c":"4"}}'), {
      contentType: 'application/apply-patch+yaml',
    });
    expect(applied.status, applied.text).toBe(201);
    expect(specText(applied.text)).toBe('{"__proto__":{"c":"4"},"size":1}');
    const reapplied = await h.request('PATCH', `${ODDITIES}/three?fieldManager=test`, oddity('three', '{"__proto__":{"c":"5"}}'), {
      contentType: 'application/apply-patch+yaml',
    });
    expect(reapplied.status, reapplied.text).toBe(200);
    expect(specText(reapplied.text)).toBe('{"__proto__":{"c":"5"},"size":1}');
  });
});
