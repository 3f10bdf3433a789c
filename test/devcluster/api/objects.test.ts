import { describe, expect, it } from 'vitest';
import * as objects from '../../../devcluster/api/objects.js';
import type * as json from '../../../devcluster/json.js';
import type * as resources from '../../../devcluster/api/resources.js';
import * as catalog from '../../../devcluster/builtins/catalog.js';

const configMaps = catalog.builtinTypes().find((t) => t.resource === 'configmaps')!;
const widgets = { ...configMaps, group: 'example.com', version: 'v1', kind: 'Widget', resource: 'widgets', builtin: false } as resources.ResourceType;

describe('served forms', () => {
  // As the store holds them: in the order the server writes them (D-BI-24).
  const stored = { kind: 'Old', apiVersion: 'old/v0', metadata: { name: 'x', namespace: 'default' }, data: { a: 'b' } };
  const storedCustom = { apiVersion: 'old/v0', data: { a: 'b' }, kind: 'Old', metadata: { name: 'x', namespace: 'default' } };

  it("D-WIRE-19 D-BI-24 the served object has this version's apiVersion and kind in their place and leaves the stored one alone", () => {
    const external = objects.toExternal(configMaps, stored);
    expect(Object.keys(external)).toEqual(['kind', 'apiVersion', 'metadata', 'data']);
    expect(external).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: stored.metadata, data: stored.data });
    expect(stored).toEqual({ kind: 'Old', apiVersion: 'old/v0', metadata: { name: 'x', namespace: 'default' }, data: { a: 'b' } });
    expect(Object.keys(objects.toExternal(widgets, storedCustom))).toEqual(['apiVersion', 'data', 'kind', 'metadata']);
  });

  it('D-WIRE-19 list items of built-ins carry no apiVersion and kind, custom resources keep them', () => {
    expect(objects.toListItem(configMaps, stored)).toEqual({ metadata: stored.metadata, data: stored.data });
    const item = objects.toListItem(widgets, storedCustom);
    expect(Object.keys(item)).toEqual(['apiVersion', 'data', 'kind', 'metadata']);
    expect(item['apiVersion']).toBe('example.com/v1');
  });

  it('D-BI-24 an object stored without apiVersion and kind is served with them where its order puts them', () => {
    const bare = { metadata: { name: 'x' }, data: { a: 'b' } };
    expect(Object.keys(objects.toExternal(configMaps, bare))).toEqual(['kind', 'apiVersion', 'metadata', 'data']);
    expect(Object.keys(objects.toExternal(widgets, bare))).toEqual(['apiVersion', 'data', 'kind', 'metadata']);
  });

  it('a member named __proto__ stays an ordinary member', () => {
    const odd = JSON.parse('{"metadata":{"name":"x"},"__proto__":{"polluted":true}}') as json.JsonObject;
    for (const out of [objects.toExternal(configMaps, odd), objects.toListItem(configMaps, odd)]) {
      expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
      expect(Object.keys(out)).toContain('__proto__');
      expect((out as { polluted?: boolean }).polluted).toBeUndefined();
    }
  });
});

describe('formatTime', () => {
  it('formats to the second, the same text for every time within one second', () => {
    expect(objects.formatTime(Date.UTC(2024, 0, 2, 3, 4, 5, 999))).toBe('2024-01-02T03:04:05Z');
    expect(objects.formatTime(Date.UTC(2024, 0, 2, 3, 4, 5, 0))).toBe('2024-01-02T03:04:05Z');
    expect(objects.formatTime(Date.UTC(2024, 0, 2, 3, 4, 6, 1))).toBe('2024-01-02T03:04:06Z');
    expect(objects.formatTime(Date.UTC(2024, 0, 2, 3, 4, 5, 500))).toBe('2024-01-02T03:04:05Z');
  });
});
